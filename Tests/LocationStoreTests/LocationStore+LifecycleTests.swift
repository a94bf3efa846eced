import Foundation
import Synchronization
import TestSupport
import Testing

@testable import LocationStore

/// Closing and checkpointing: after either, the database file alone holds every commit (a backup
/// of `store.sqlite` without its `-wal` misses nothing).
@Suite struct LocationStoreLifecycleTests {
  /// The size of a file, or nil when there is none.
  static func size(_ path: String) -> Int? {
    (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? nil
  }

  /// A copy of the database file alone, as a backup that forgets the log would make.
  static func copyAlone(_ path: String, in directory: String) throws -> String {
    let copy = directory + "/backup-\(UUID().uuidString).sqlite"
    try FileManager.default.copyItem(atPath: path, toPath: copy)
    return copy
  }

  @Test func closingCheckpointsTheLogIntoTheFileAndRemovesIt() throws {
    try withTemporaryDirectory { directory in
      let path = directory + "/store.sqlite"
      let store = try LocationStore(path: path)
      try store.upsertRegions((0..<50).map { region("r\($0)", index: $0) })
      #expect((Self.size(path + "-wal") ?? 0) > 0)
      store.close()
      #expect(store.isClosed)
      #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
      let backup = try LocationStore(path: try Self.copyAlone(path, in: directory))
      #expect(try backup.allRegions().count == 50)
      let error = #expect(throws: StoreError.self) { try store.allRegions() }
      #expect(error?.code == .closed)
      store.close()  // twice is harmless
    }
  }

  @Test func aCheckpointEmptiesTheLogWhileTheStoreStaysOpen() throws {
    try withTemporaryDirectory { directory in
      let path = directory + "/store.sqlite"
      let store = try LocationStore(path: path)
      // A second connection keeps the log from being removed, as another process would.
      let other = try LocationStore(path: path)
      try store.upsertRegions((0..<50).map { region("r\($0)", index: $0) })
      #expect((Self.size(path + "-wal") ?? 0) > 0)
      #expect(try store.checkpoint() > 0)
      #expect(Self.size(path + "-wal") == 0)
      let backup = try LocationStore(path: try Self.copyAlone(path, in: directory))
      #expect(try backup.allRegions().count == 50)
      #expect(try other.allRegions().count == 50)
      try store.upsertRegion(region("after"))
      #expect(try store.allRegions().count == 51)
    }
  }

  /// `closeAll()` (the `atexit` handler) closes what `OpenStores` lists: every file store that
  /// is open, and none that was closed. (`closeAll()` itself is not called here: it would close
  /// the stores of tests running beside this one; `WhereAmIRegionsTests` checks that a program's
  /// exit leaves no log.)
  @Test func everyOpenFileStoreIsListedForCloseAll() throws {
    try withTemporaryDirectory { directory in
      let first = try LocationStore(path: directory + "/a.sqlite")
      let second = try LocationStore(path: directory + "/b.sqlite")
      let memory = try LocationStore.inMemory()
      func listed(_ store: LocationStore) -> Bool {
        OpenStores.all().contains { $0 === store }
      }
      #expect(listed(first) && listed(second))
      #expect(!listed(memory))
      first.close()
      #expect(!listed(first) && listed(second))
      second.close()
      #expect(!FileManager.default.fileExists(atPath: directory + "/b.sqlite-wal"))
    }
  }

  /// Failures are told once per episode: the first failing transaction and the first one that
  /// commits again, not every attempt; a value refused before writing is no episode at all.
  @Test func episodesAreToldOnceEach() throws {
    try withTemporaryDirectory { directory in
      let faults = try StoreFaults()
      let store = try LocationStore(path: directory + "/store.sqlite", vfs: faults.vfs)
      let notices = Mutex<[StoreNotice]>([])
      store.setListener { notice in notices.withLock { $0.append(notice) } }
      try store.upsertRegion(region("a"))
      #expect(store.condition == .healthy)

      faults.arm([.write], persistent: true, failure: .full)
      for index in 0..<3 {
        let error = #expect(throws: StoreError.self) {
          try store.upsertRegion(region("b\(index)"))
        }
        #expect(error?.code == .full)
      }
      #expect(throws: StoreError.self) {
        try store.upsertRegion(region("nan", index: 0).with(latitude: .nan))
      }
      let failing = notices.withLock { $0 }
      #expect(failing.count == 1)
      guard case .failing(let cause)? = failing.first?.kind else {
        Issue.record("no failing notice: \(failing)")
        return
      }
      #expect(cause.code == .full)
      #expect(failing.first?.description.contains(directory + "/store.sqlite") == true)
      #expect(failing.first?.description.contains("full") == true)
      guard case .failing(_, _) = store.condition else {
        Issue.record("the condition is \(store.condition)")
        return
      }

      faults.disarm()
      try store.upsertRegion(region("c"))
      try store.upsertRegion(region("d"))
      let all = notices.withLock { $0 }
      #expect(all.count == 2)
      guard case .recovered(_, let failures)? = all.last?.kind else {
        Issue.record("no recovered notice: \(all)")
        return
      }
      #expect(failures == 3)
      #expect(store.condition == .healthy)
      #expect(try store.allRegions().map(\.identifier) == ["a", "c", "d"])
    }
  }
}

extension StoredRegion {
  /// The same region at another latitude.
  func with(latitude: Double) -> StoredRegion {
    var copy = self
    copy.latitude = latitude
    return copy
  }
}
