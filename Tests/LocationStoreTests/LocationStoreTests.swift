import Foundation
import TestSupport
import Testing

@testable import LocationStore

@Suite struct LocationStoreTests {
  @Test func freshFileIsMigratedAndReopeningAppliesNothingTwice() throws {
    try withTemporaryDirectory { directory in
      let path = directory + "/a/b/store.sqlite"
      let first: [AppliedMigration]
      do {
        let store = try LocationStore(path: path)
        first = try store.appliedMigrations()
        #expect(first.map(\.name) == LocationStore.knownMigrations)
        #expect(first.allSatisfy { $0.applied > 1.7e9 })
        try store.setSetting("servicesEnabled", "true")
        // WAL mode: the write-ahead log sits beside the database while it is open.
        #expect(FileManager.default.fileExists(atPath: path + "-wal"))
      }
      let store = try LocationStore(path: path)
      #expect(try store.appliedMigrations() == first)
      #expect(try store.setting("servicesEnabled") == "true")
    }
  }

  @Test func newDirectoriesArePrivateAndTheFileTooThoughExistingOnesAreKept() throws {
    try withTemporaryDirectory { directory in
      let path = directory + "/state/corelocation/store.sqlite"
      _ = try LocationStore(path: path)
      let manager = FileManager.default
      let directoryMode = try manager.attributesOfItem(atPath: directory + "/state")[
        .posixPermissions]
      let innerMode = try manager.attributesOfItem(atPath: directory + "/state/corelocation")[
        .posixPermissions]
      let fileMode = try manager.attributesOfItem(atPath: path)[.posixPermissions]
      #expect(directoryMode as? Int == 0o700)
      #expect(innerMode as? Int == 0o700)
      #expect(fileMode as? Int == 0o600)
    }
  }

  @Test(arguments: [
    (["XDG_STATE_HOME": "/x/state", "HOME": "/home/u"], "/x/state/corelocation/store.sqlite"),
    (["XDG_STATE_HOME": "/x/state/", "HOME": "/home/u"], "/x/state/corelocation/store.sqlite"),
    // The XDG specification: a relative XDG_STATE_HOME is invalid and ignored.
    (
      ["XDG_STATE_HOME": "rel", "HOME": "/home/u"], "/home/u/.local/state/corelocation/store.sqlite"
    ),
    (["XDG_STATE_HOME": "", "HOME": "/home/u"], "/home/u/.local/state/corelocation/store.sqlite"),
    (["HOME": "/home/u"], "/home/u/.local/state/corelocation/store.sqlite"),
  ])
  func defaultPathFollowsXDG(environment: [String: String], expected: String) {
    #expect(LocationStore.defaultPath(environment: environment) == expected)
  }

  @Test func defaultPathWithoutHomeUsesTheUserDatabase() {
    let path = LocationStore.defaultPath(environment: [:])
    #expect(path.hasSuffix("/.local/state/corelocation/store.sqlite"))
  }

  @Test func persistsAcrossClosingAndReopening() throws {
    try withTemporaryDirectory { directory in
      let path = directory + "/store.sqlite"
      do {
        let store = try LocationStore(path: path)
        try store.setAuthorization(
          StoredAuthorization(status: .authorizedAlways, accuracy: .fullAccuracy, updated: 1),
          app: "a")
        try store.upsertRegion(region("home"))
        _ = try store.appendEvent(PendingEvent(app: "a", kind: "enter", payload: "{}", time: 2))
      }
      // A second connection, as another process would open it.
      let store = try LocationStore(path: path)
      #expect(try store.authorization(app: "a")?.status == .authorizedAlways)
      #expect(try store.allRegions() == [region("home")])
      #expect(try store.pendingEvents(app: "a").map(\.kind) == ["enter"])
    }
  }

  @Test func twoOpenConnectionsSeeEachOthersCommits() throws {
    try withTemporaryDirectory { directory in
      let path = directory + "/store.sqlite"
      let writer = try LocationStore(path: path)
      let reader = try LocationStore(path: path)
      try writer.upsertRegion(region("r1"))
      #expect(try reader.regions(app: "org.example.app", group: "manager").count == 1)
    }
  }

  @Test func aFileThatIsNotADatabaseIsRefusedAndLeftUntouched() throws {
    try withTemporaryDirectory { directory in
      let path = directory + "/store.sqlite"
      let text = Data(String(repeating: "this is not a database\n", count: 200).utf8)
      try text.write(to: URL(fileURLWithPath: path))
      let error = #expect(throws: StoreError.self) { try LocationStore(path: path) }
      #expect(error?.code == .notADatabase)
      #expect(error?.operation == "open")
      #expect(try contents(path) == text)
      #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
    }
  }

  @Test func aDamagedDatabaseIsRefusedAndLeftUntouched() throws {
    try withTemporaryDirectory { directory in
      let path = directory + "/store.sqlite"
      do {
        let store = try LocationStore(path: path)
        try store.upsertRegions((0..<500).map { region("r\($0)", index: $0) })
      }
      var bytes = try contents(path)
      #expect(bytes.count > 8 * 4096)
      // Overwrite every page after the first (the schema stays readable, the tables do not).
      for index in 4096..<bytes.count { bytes[index] = 0xA5 }
      try bytes.write(to: URL(fileURLWithPath: path))
      let error = #expect(throws: StoreError.self) { try LocationStore(path: path) }
      #expect(error?.code == .corrupt)
      #expect(try contents(path) == bytes)
    }
  }

  @Test func damageInsideATableIsReportedByReadsAndByTheIntegrityCheck() throws {
    try withTemporaryDirectory { directory in
      let path = directory + "/store.sqlite"
      do {
        let store = try LocationStore(path: path)
        try store.upsertRegions((0..<2_000).map { region("r\($0)", index: $0) })
      }
      var bytes = try contents(path)
      // The last pages hold region rows.
      for index in (bytes.count - 3 * 4096)..<bytes.count { bytes[index] = 0xA5 }
      try bytes.write(to: URL(fileURLWithPath: path))
      let store = try LocationStore(path: path)
      #expect(throws: StoreError.self) { try store.allRegions() }
      let error = #expect(throws: StoreError.self) { try store.checkIntegrity() }
      #expect(error?.code == .corrupt)
      #expect(error?.operation == "checkIntegrity")
    }
  }

  @Test func aHealthyStorePassesTheIntegrityCheck() throws {
    let store = try LocationStore.inMemory()
    try store.upsertRegion(region("r"))
    try store.checkIntegrity()
  }

  @Test func anotherProgramsDatabaseIsRefusedAndLeftUntouched() throws {
    try withTemporaryDirectory { directory in
      let path = directory + "/store.sqlite"
      try executeRaw("CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('x');", at: path)
      let before = try contents(path)
      let error = #expect(throws: StoreError.self) { try LocationStore(path: path) }
      #expect(error?.code == .foreignDatabase)
      #expect(try contents(path) == before)
    }
  }

  @Test func aStoreMigratedByANewerVersionIsRefusedAndLeftUntouched() throws {
    try withTemporaryDirectory { directory in
      let path = directory + "/store.sqlite"
      do { _ = try LocationStore(path: path) }
      try executeRaw(
        "INSERT INTO migrations (name, applied) VALUES ('9999-from-the-future', 0)", at: path)
      let before = try contents(path)
      let error = #expect(throws: StoreError.self) { try LocationStore(path: path) }
      #expect(error?.code == .newerVersion)
      #expect(error?.message.contains("9999-from-the-future") == true)
      #expect(try contents(path) == before)
    }
  }

  @Test func aReadOnlyDirectoryGivesAClearError() throws {
    try withTemporaryDirectory { directory in
      // root ignores permission bits; sysfs refuses new files even to root.
      let readOnly: String
      if geteuid() == 0 {
        guard FileManager.default.fileExists(atPath: "/sys/kernel") else { return }
        readOnly = "/sys"
      } else {
        readOnly = directory + "/locked"
        try FileManager.default.createDirectory(
          atPath: readOnly, withIntermediateDirectories: false,
          attributes: [.posixPermissions: 0o500])
      }
      defer { if readOnly != "/sys" { chmod(readOnly, 0o700) } }
      let error = #expect(throws: StoreError.self) {
        try LocationStore(path: readOnly + "/store.sqlite")
      }
      #expect(error?.code == .readOnly)
      #expect(error?.description.contains(readOnly) == true)
    }
  }

  @Test func aDirectoryAtThePathIsRefused() throws {
    try withTemporaryDirectory { directory in
      let error = #expect(throws: StoreError.self) { try LocationStore(path: directory) }
      #expect(error?.code == .cannotOpen)
    }
  }

  @Test func inMemoryStoresAreIndependent() throws {
    let first = try LocationStore.inMemory()
    let second = try LocationStore.inMemory()
    try first.setSetting("k", "1")
    #expect(try second.setting("k") == nil)
    #expect(try first.appliedMigrations().map(\.name) == LocationStore.knownMigrations)
  }

  @Test func theMemoryPathOpensAStoreInMemory() throws {
    let store = try LocationStore(path: ":memory:")
    try store.setSetting("k", "1")
    #expect(!FileManager.default.fileExists(atPath: ":memory:"))
    #expect(try LocationStore(path: ":memory:").setting("k") == nil)
  }

  @Test func aTransactionIsAllOrNothing() throws {
    let store = try LocationStore.inMemory()
    struct Stop: Error {}
    #expect(throws: Stop.self) {
      try store.transaction {
        try store.upsertRegion(region("a"))
        try store.setSetting("k", "v")
        throw Stop()
      }
    }
    #expect(try store.allRegions().isEmpty)
    #expect(try store.setting("k") == nil)

    let value = try store.transaction {
      try store.upsertRegion(region("a"))
      return 42
    }
    #expect(value == 42)
    #expect(try store.allRegions().count == 1)
  }

  @Test func aNestedTransactionThatFailsUndoesOnlyItsOwnPart() throws {
    let store = try LocationStore.inMemory()
    struct Stop: Error {}
    try store.transaction {
      try store.upsertRegion(region("outer"))
      do {
        try store.transaction {
          try store.upsertRegion(region("inner"))
          throw Stop()
        }
      } catch is Stop {}
      // upsertRegions is itself a (nested) transaction; an invalid element undoes nothing else.
      do {
        try store.upsertRegions([region("also"), region("bad", index: 0).with { $0.radius = -1 }])
        Issue.record("upsertRegions accepted a negative radius")
      } catch {
        #expect((error as? StoreError)?.code == .invalidValue)
      }
    }
    #expect(try store.allRegions().map(\.identifier) == ["outer"])
  }

  @Test func callsFromManyThreadsAreSerialised() throws {
    let store = try LocationStore.inMemory()
    let threads = 8
    let perThread = 100
    DispatchQueue.concurrentPerform(iterations: threads) { thread in
      for index in 0..<perThread {
        if index % 10 == 0 {
          // A transaction interleaved with other threads' single writes stays whole.
          try? store.transaction {
            try store.upsertRegion(region("t\(thread)-\(index)-a"))
            try store.upsertRegion(region("t\(thread)-\(index)-b"))
          }
        }
        _ = try? store.appendEvent(
          PendingEvent(app: "app\(thread)", kind: "k", payload: "\(index)", time: 0))
      }
    }
    var sequences: [Int64] = []
    for thread in 0..<threads {
      let events = try store.pendingEvents(app: "app\(thread)")
      #expect(events.map(\.payload) == (0..<perThread).map { "\($0)" })
      sequences += events.map(\.sequence)
    }
    #expect(Set(sequences).count == threads * perThread)
    #expect(try store.allRegions().count == threads * perThread / 10 * 2)
  }

  @Test func errorsNameTheOperationAndNeverTheValue() throws {
    let store = try LocationStore.inMemory()
    var bad = region("r")
    bad.latitude = 123.456_789
    let error = #expect(throws: StoreError.self) { try store.upsertRegion(bad) }
    #expect(error?.code == .invalidValue)
    #expect(error?.operation == "upsertRegion")
    #expect(error?.description.contains("123") == false)
  }
}

extension StoredRegion {
  /// A copy changed by `change`.
  func with(_ change: (inout StoredRegion) -> Void) -> StoredRegion {
    var copy = self
    change(&copy)
    return copy
  }
}
