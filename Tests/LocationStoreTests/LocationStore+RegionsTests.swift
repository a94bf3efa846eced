import Foundation
import TestSupport
import Testing

@testable import LocationStore

@Suite struct LocationStoreRegionsTests {
  @Test func upsertAndReadByAppAndGroup() throws {
    let store = try LocationStore.inMemory()
    let home = region("home", index: 1)
    let work = region("work", index: 2)
    let monitored = region("home", group: "monitor:trips", index: 3)
    let foreign = region("home", app: "org.other", index: 4)
    try store.upsertRegions([work, home, monitored, foreign])
    #expect(try store.regions(app: "org.example.app", group: "manager") == [home, work])
    #expect(try store.regions(app: "org.example.app", group: "monitor:trips") == [monitored])
    #expect(try store.regions(app: "org.other", group: "manager") == [foreign])
    #expect(try store.regions(app: "org.example.app") == [home, work, monitored])
    #expect(try store.regions(app: "org.other") == [foreign])
    #expect(try store.regions(app: "org.nobody").isEmpty)
    #expect(try store.allRegions().count == 4)
  }

  @Test func aRegionIsReplacedByIdentifier() throws {
    let store = try LocationStore.inMemory()
    try store.upsertRegion(region("home", index: 1))
    let replacement = region("home", index: 2).with {
      $0.radius = 250
      $0.state = 0
      $0.stateTime = nil
      $0.extra = #"{"beacon":false}"#
    }
    try store.upsertRegion(replacement)
    #expect(try store.allRegions() == [replacement])
    // Within one batch, the later element wins.
    try store.upsertRegions([region("x", index: 1), region("x", index: 5)])
    #expect(
      try store.regions(app: "org.example.app", group: "manager").last == region("x", index: 5))
  }

  /// OwnTracks identifies a waypoint by its creation time (issue 18): a region replaced by
  /// identifier keeps the time it was first stored, a new one takes the time of the write.
  @Test func aReplacedRegionKeepsItsCreationTime() throws {
    let store = try LocationStore.inMemory()
    let before = Date().timeIntervalSince1970
    try store.upsertRegion(region("home", index: 1).with { $0.created = nil })
    let first = try #require(
      try store.region(app: "org.example.app", group: "manager", identifier: "home"))
    let created = try #require(first.created)
    #expect(created >= before.rounded(.down) && created <= Date().timeIntervalSince1970 + 1)
    try store.upsertRegion(region("home", index: 2).with { $0.created = nil })
    let second = try #require(
      try store.region(app: "org.example.app", group: "manager", identifier: "home"))
    #expect(second.created == created)
    #expect(second.radius == region("home", index: 2).radius)
    // A region stored again after it was removed is a new one.
    try store.deleteRegion(app: "org.example.app", group: "manager", identifier: "home")
    try store.upsertRegion(region("home", index: 3))
    #expect(
      try store.region(app: "org.example.app", group: "manager", identifier: "home")?.created
        == 1.6e9 + 3)
    #expect(try store.region(app: "org.example.app", group: "manager", identifier: "none") == nil)
    // A creation time that is not finite is refused.
    #expect(throws: StoreError.self) {
      try store.upsertRegion(region("bad").with { $0.created = .nan })
    }
  }

  @Test func everyReadWorksInsideATransaction() throws {
    let store = try LocationStore.inMemory()
    let loaded = try store.transaction {
      try store.upsertRegion(region("a"))
      return try store.allRegions()
    }
    #expect(loaded == [region("a")])
  }

  @Test func textKeysKeepUnicodeAndNULs() throws {
    let store = try LocationStore.inMemory()
    let odd = region("a\u{0}b Zürich 🗺", app: "", group: "monitor:")
    try store.upsertRegion(odd)
    #expect(try store.regions(app: "", group: "monitor:") == [odd])
  }

  @Test func deleteOneOrAGroupOrAnApp() throws {
    let store = try LocationStore.inMemory()
    try store.upsertRegions([
      region("a"), region("b"), region("c", group: "monitor:m"), region("d", app: "other"),
    ])
    try store.deleteRegion(app: "org.example.app", group: "manager", identifier: "a")
    try store.deleteRegion(app: "org.example.app", group: "manager", identifier: "missing")
    #expect(try store.regions(app: "org.example.app", group: "manager").map(\.identifier) == ["b"])
    #expect(try store.deleteRegions(app: "org.example.app", group: "monitor:m") == 1)
    #expect(try store.deleteRegions(app: "org.example.app", group: nil) == 1)
    #expect(try store.allRegions().map(\.identifier) == ["d"])
  }

  @Test func stateChangesAreStored() throws {
    let store = try LocationStore.inMemory()
    try store.upsertRegion(region("home").with { $0.state = 0 })
    try store.setRegionState(
      app: "org.example.app", group: "manager", identifier: "home", state: 1, time: 1_700_000_123.5)
    let stored = try #require(try store.regions(app: "org.example.app", group: "manager").first)
    #expect(stored.state == 1)
    #expect(stored.stateTime == 1_700_000_123.5)
    let error = #expect(throws: StoreError.self) {
      try store.setRegionState(
        app: "org.example.app", group: "manager", identifier: "gone", state: 2, time: 1)
    }
    #expect(error?.code == .notFound)
    #expect(throws: StoreError.self) {
      try store.setRegionState(
        app: "org.example.app", group: "manager", identifier: "home", state: 7, time: 1)
    }
  }

  @Test(arguments: [
    region("r").with { $0.latitude = .nan },
    region("r").with { $0.longitude = .nan },
    region("r").with { $0.latitude = -90.000_1 },
    region("r").with { $0.longitude = 180.5 },
    region("r").with { $0.radius = -1 },
    region("r").with { $0.radius = .infinity },
    region("r").with { $0.hysteresis = .nan },
    region("r").with { $0.state = 3 },
    region("r").with { $0.stateTime = .nan },
  ])
  func badValuesAreRejectedAndNothingOfTheBatchIsWritten(bad: StoredRegion) throws {
    let store = try LocationStore.inMemory()
    let error = #expect(throws: StoreError.self) {
      try store.upsertRegions([region("good"), bad])
    }
    #expect(error?.code == .invalidValue)
    #expect(error?.operation == "upsertRegions")
    #expect(try store.allRegions().isEmpty)
  }

  /// Bulk load: what a daemon does at start-up. Prints the load time; asserts only on contents.
  /// `LOCATIONSTORE_BULK_ROWS` changes the row count (the default keeps the test quick).
  @Test func manyRegionsAreSavedAndLoadedBack() throws {
    let count =
      ProcessInfo.processInfo.environment["LOCATIONSTORE_BULK_ROWS"].flatMap { Int($0) } ?? 200_000
    try withTemporaryDirectory { directory in
      let path = directory + "/store.sqlite"
      let regions = (0..<count).map { index in
        region(
          "region-\(index)", app: "app\(index % 50)",
          group: index % 4 == 0 ? "monitor:m" : "manager",
          index: index)
      }
      let clock = ContinuousClock()
      var cpu = threadCPUTime()
      let saved = try clock.measure {
        let store = try LocationStore(path: path)
        try store.upsertRegions(regions)
      }
      let savedCPU = threadCPUTime() - cpu
      let store = try LocationStore(path: path)
      var loaded: [StoredRegion] = []
      cpu = threadCPUTime()
      let load = try clock.measure { loaded = try store.allRegions() }
      let loadCPU = threadCPUTime() - cpu
      print(
        "LocationStore bulk: \(count) regions saved in \(saved) (CPU \(savedCPU) s), "
          + "loaded in \(load) (CPU \(loadCPU) s)")
      #expect(loaded.count == count)
      let byKey = Dictionary(
        uniqueKeysWithValues: loaded.map { ("\($0.app)|\($0.group)|\($0.identifier)", $0) })
      for index in stride(from: 0, to: count, by: max(1, count / 1_000)) {
        let original = regions[index]
        #expect(byKey["\(original.app)|\(original.group)|\(original.identifier)"] == original)
      }
    }
  }
}

/// CPU time of the calling thread in seconds (the store works on the caller's thread), which a
/// busy machine does not inflate the way it inflates wall-clock time.
private func threadCPUTime() -> Double {
  var time = timespec()
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
  return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}
