import LocationModel
import Testing

@testable import LocationStore

/// Learned Wi-Fi access points (migration `0004-wifi-access-points`).
@Suite struct LocationStoreAccessPointsTests {
  static func record(_ bssid: UInt64, mobile: Bool = false, weight: Double = 2) -> AccessPointRecord
  {
    AccessPointRecord(
      bssid: bssid, weight: weight, x: 0.6 * weight, y: 0.1 * weight, z: 0.79 * weight,
      observations: 3, firstSeen: 100, lastSeen: 200, mobile: mobile)
  }

  @Test func savedReplacedExpiredAndForgotten() throws {
    let store = try LocationStore.inMemory()
    #expect(try store.accessPoints().isEmpty)
    let high: UInt64 = 0xFEDC_BA98_7654
    try store.upsertAccessPoints([Self.record(high), Self.record(1), Self.record(2, mobile: true)])
    #expect(
      try store.accessPoints() == [Self.record(1), Self.record(2, mobile: true), Self.record(high)])
    let counts = try store.accessPointCounts()
    #expect(counts.known == 3 && counts.mobile == 1)
    try store.upsertAccessPoints([Self.record(1, weight: 5)])
    #expect(try store.accessPoints().first == Self.record(1, weight: 5))
    try store.deleteAccessPoints([2, 99])
    #expect(try store.accessPoints().map(\.bssid) == [1, high])
    #expect(try store.forgetAccessPoints() == 2)
    #expect(try store.accessPoints().isEmpty)
  }

  @Test func aBadRecordLosesNothingStored() throws {
    let store = try LocationStore.inMemory()
    try store.upsertAccessPoints([Self.record(1)])
    var bad = Self.record(2)
    bad.x = .nan
    #expect(throws: StoreError.self) { try store.upsertAccessPoints([Self.record(3), bad]) }
    #expect(try store.accessPoints().map(\.bssid) == [1])
  }
}
