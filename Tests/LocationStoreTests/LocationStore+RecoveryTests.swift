import Foundation
import TestSupport
import Testing

@testable import LocationStore

/// `LocationStore.open(path:vfs:)`: a damaged file is moved aside, kept, and a new store created;
/// after an unclean shutdown SQLite's integrity check runs first.
@Suite struct LocationStoreRecoveryTests {
  /// The names in `directory` that start with `prefix`.
  static func names(in directory: String, prefix: String) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasPrefix(prefix) }
      .sorted()
  }

  /// A store with `count` regions, closed.
  static func makeStore(_ path: String, count: Int) throws {
    let store = try LocationStore(path: path)
    try store.upsertRegions((0..<count).map { region("r\($0)", index: $0) })
    store.close()
  }

  @Test func aHealthyStoreOpensWithoutANotice() throws {
    try withTemporaryDirectory { directory in
      let path = directory + "/store.sqlite"
      try Self.makeStore(path, count: 10)
      let opening = try LocationStore.open(path: path)
      #expect(opening.notices.isEmpty)
      #expect(opening.checkedIntegrity && !opening.uncleanShutdown)  // a small store
      #expect(try opening.store.allRegions().count == 10)
    }
  }

  /// Bytes overwritten in the header: the file is no database any more. It is moved aside
  /// byte for byte, the user is told where, and a new store works at the path.
  @Test func aDamagedHeaderIsMovedAsideAndANewStoreCreated() throws {
    try withTemporaryDirectory { directory in
      let path = directory + "/store.sqlite"
      try Self.makeStore(path, count: 10)
      var bytes = try contents(path)
      for index in 0..<16 { bytes[index] = 0x5A }  // "SQLite format 3\0"
      try bytes.write(to: URL(fileURLWithPath: path))

      let opening = try LocationStore.open(path: path)
      let aside = try Self.names(in: directory, prefix: "store.sqlite.corrupt-")
      #expect(aside.count == 1)
      let moved = directory + "/" + (aside.first ?? "")
      #expect(try contents(moved) == bytes)
      #expect(
        opening.notices.map(\.kind) == [
          .movedAside(
            movedTo: moved,
            cause: StoreError(
              code: .notADatabase, message: opening.notices.first.map(Self.cause) ?? "",
              sqliteCode: 26, operation: "open"))
        ])
      #expect(opening.notices.first?.description.contains(moved) == true)
      #expect(try opening.store.allRegions().isEmpty)
      try opening.store.upsertRegion(region("new"))
      #expect(try LocationStore(path: path).allRegions().count == 1)
    }
  }

  /// Bytes overwritten in a table's page, and the last shutdown unclean (its log left behind):
  /// the integrity check finds the damage at start, and the file goes aside with its log.
  @Test func aDamagedPageAfterAnUncleanShutdownIsFoundAndMovedAside() throws {
    try withTemporaryDirectory { directory in
      let path = directory + "/store.sqlite"
      try Self.makeStore(path, count: 2_000)
      var bytes = try contents(path)
      for index in (bytes.count - 2 * 4096)..<(bytes.count - 4096) { bytes[index] = 0xA5 }
      try bytes.write(to: URL(fileURLWithPath: path))
      // What a process that ended without closing leaves beside the file.
      #expect(FileManager.default.createFile(atPath: path + "-wal", contents: Data()))

      let opening = try LocationStore.open(path: path)
      #expect(opening.checkedIntegrity)
      let aside = try Self.names(in: directory, prefix: "store.sqlite.corrupt-")
      // The file and its log, unapplied (and SQLite's shared-memory index beside them).
      #expect(aside.contains { !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm") }, "\(aside)")
      #expect(aside.contains { $0.hasSuffix("-wal") }, "\(aside)")
      guard case .movedAside(_, let cause)? = opening.notices.first?.kind else {
        Issue.record("nothing moved aside: \(opening.notices)")
        return
      }
      #expect(cause.code == .corrupt)
      #expect(try opening.store.allRegions().isEmpty)
      try opening.store.upsertRegion(region("new"))
    }
  }

  /// The same damage after a clean shutdown: a small store is checked at every start, so it is
  /// found and moved aside; a large one (here: a threshold of 0 bytes) is not looked for at start
  /// (the check costs a read of the whole file), and the reads that reach it report it.
  @Test func aCleanShutdownChecksOnlyASmallStore() throws {
    try withTemporaryDirectory { directory in
      let path = directory + "/store.sqlite"
      try Self.makeStore(path, count: 2_000)
      var bytes = try contents(path)
      for index in (bytes.count - 2 * 4096)..<(bytes.count - 4096) { bytes[index] = 0xA5 }
      try bytes.write(to: URL(fileURLWithPath: path))
      try FileManager.default.createDirectory(
        atPath: directory + "/large", withIntermediateDirectories: false)
      try bytes.write(to: URL(fileURLWithPath: directory + "/large/store.sqlite"))
      let large = try LocationStore.open(
        path: directory + "/large/store.sqlite", alwaysCheckUpTo: 0)
      #expect(!large.checkedIntegrity)
      #expect(large.notices.isEmpty)
      #expect(throws: StoreError.self) { try large.store.allRegions() }

      let small = try LocationStore.open(path: path)
      #expect(small.checkedIntegrity && !small.uncleanShutdown)
      guard case .movedAside(_, let cause)? = small.notices.first?.kind else {
        Issue.record("nothing moved aside: \(small.notices)")
        return
      }
      #expect(cause.code == .corrupt)
      #expect(try small.store.allRegions().isEmpty)
      let aside = try Self.names(in: directory, prefix: "store.sqlite.corrupt-")
      #expect(aside.filter { !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm") }.count == 1)
    }
  }

  /// A directory where the file should be is not moved or touched: a clear error.
  @Test func aDirectoryInPlaceOfTheFileIsAClearError() throws {
    try withTemporaryDirectory { directory in
      let path = directory + "/store.sqlite"
      try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
      let error = #expect(throws: StoreError.self) { try LocationStore.open(path: path) }
      #expect(error?.code == .cannotOpen)
      #expect(error?.description.contains("\(path) is a directory") == true)
      #expect(FileSystem.isDirectory(path))
      #expect(try Self.names(in: directory, prefix: "store.sqlite.corrupt-").isEmpty)
    }
  }

  /// A missing directory is created (0700), however deep.
  @Test func aMissingDirectoryIsCreated() throws {
    try withTemporaryDirectory { directory in
      let path = directory + "/gone/corelocation/store.sqlite"
      let opening = try LocationStore.open(path: path)
      try opening.store.setSetting("k", "v")
      #expect(try LocationStore(path: path).setting("k") == "v")
    }
  }

  @Test func aSecondMoveOnTheSameSecondGetsItsOwnName() throws {
    try withTemporaryDirectory { directory in
      let path = directory + "/store.sqlite"
      for _ in 0..<2 {
        try Data("not a database".utf8).write(to: URL(fileURLWithPath: path))
        _ = try LocationStore.open(path: path)
      }
      #expect(try Self.names(in: directory, prefix: "store.sqlite.corrupt-").count == 2)
    }
  }

  static func cause(_ notice: StoreNotice) -> String {
    if case .movedAside(_, let cause) = notice.kind { return cause.message }
    return ""
  }
}
