import LocationModel
import Testing

@testable import LocationStore

/// The track history (migration `0006-track-history`): batches, time order, paging, pruning.
@Suite struct LocationStoreHistoryTests {
  static func point(_ time: Double, altitude: Double? = 2.5) -> Fix {
    Fix(
      latitude: 52 + time / 1e6, longitude: 4.9, altitude: altitude, horizontalAccuracy: 4,
      verticalAccuracy: 6, speed: 1.5, course: 90, time: time)
  }

  @Test func aBatchIsKeptWithItsMeasuresAndReadInTimeOrder() throws {
    let store = try LocationStore.inMemory()
    // Recorded out of order (a late batch): read back by time, ties in recording order.
    try store.appendHistory([Self.point(30), Self.point(10, altitude: nil)])
    try store.appendHistory([Self.point(20), Self.point(10)])
    #expect(try store.historyCount() == 4)
    let page = try store.history(limit: 10)
    #expect(page.fixes.map(\.time) == [10, 10, 20, 30])
    #expect(page.fixes[0].altitude == nil && page.fixes[1].altitude == 2.5)
    #expect(page.next == nil)
    let first = page.fixes[2]
    #expect(first.latitude == 52.00002 && first.longitude == 4.9 && first.horizontalAccuracy == 4)
    #expect(first.verticalAccuracy == 6 && first.speed == 1.5 && first.course == 90)
  }

  @Test func pagesFollowEachOtherWithoutSkippingOrRepeatingTies() throws {
    let store = try LocationStore.inMemory()
    // Five points at one time between others: a page boundary falls inside the tie.
    let times: [Double] = [1, 2, 5, 5, 5, 5, 5, 8, 9]
    try store.appendHistory(times.map { Self.point($0) })
    var seen: [Double] = []
    var cursor: HistoryCursor?
    var pages = 0
    repeat {
      let page = try store.history(after: cursor, limit: 2)
      seen += page.fixes.map(\.time)
      cursor = page.next
      pages += 1
    } while cursor != nil && pages < 20
    #expect(seen == times)
    #expect(pages == 5)
    // Bounds: since included, until excluded.
    #expect(
      try store.history(since: 2, until: 8, limit: 100).fixes.map(\.time) == [2, 5, 5, 5, 5, 5])
    let after = try #require(try store.history(since: 2, limit: 2).next)
    #expect(try store.history(since: 2, until: 8, after: after, limit: 100).fixes.count == 4)
  }

  @Test func pruningDropsWhatIsOlderThanTheEdge() throws {
    let store = try LocationStore.inMemory()
    try store.appendHistory([1, 2, 3, 4].map { Self.point($0) })
    #expect(try store.pruneHistory(before: 3) == 2)
    #expect(try store.history(limit: 10).fixes.map(\.time) == [3, 4])
    #expect(try store.pruneHistory(before: 3) == 0)
    #expect(try store.historyCount() == 2)
  }

  @Test func nonFiniteValuesAreRefusedAndNothingIsAdded() throws {
    let store = try LocationStore.inMemory()
    var cases: [Fix] = []
    for change in [
      { (fix: inout Fix) in fix.time = .nan }, { $0.latitude = .infinity }, { $0.latitude = 91 },
      { $0.longitude = .nan }, { $0.altitude = .infinity }, { $0.speed = .nan },
      { $0.course = -.infinity }, { $0.horizontalAccuracy = .nan }, { $0.verticalAccuracy = .nan },
    ] as [(inout Fix) -> Void] {
      var fix = Self.point(5)
      change(&fix)
      cases.append(fix)
    }
    for bad in cases {
      let error = #expect(throws: StoreError.self) {
        try store.appendHistory([Self.point(1), bad])
      }
      #expect(error?.code == .invalidValue && error?.operation == "appendHistory")
    }
    #expect(try store.historyCount() == 0)
    #expect(throws: StoreError.self) { try store.history(since: .nan, limit: 1) }
    #expect(throws: StoreError.self) { try store.pruneHistory(before: .infinity) }
  }
}
