import LocationModel
import Testing

@testable import LocationEngine

/// Records made from imported estimates: the position and radius come back as position and spread.
@Suite struct AccessPointImportTests {
  @Test(arguments: [0.0, 1, 12.5, 45, 300, 2_500])
  func spreadIsTheRadius(radius: Double) {
    let record = AccessPointRecord.imported(
      bssid: 0x0123_4567_89AB, latitude: 52.5186, longitude: 13.3762, radius: radius, samples: 7,
      time: 1_700_000_000)
    #expect(abs(record.spread - radius) <= max(0.02, radius * 1e-3))
    #expect(abs(record.position.latitude - 52.5186) < 1e-9)
    #expect(abs(record.position.longitude - 13.3762) < 1e-9)
    #expect(record.weight == 7)
    #expect(record.observations == 7)
    #expect(record.firstSeen == 1_700_000_000 && record.lastSeen == 1_700_000_000)
    #expect(!record.mobile)
  }

  @Test func missingSamplesAndRadiusAreOnePoint() {
    let record = AccessPointRecord.imported(
      bssid: 1, latitude: -33.8568, longitude: 151.2153, radius: nil, samples: 0, time: 0)
    #expect(record.weight == 1)
    #expect(record.observations == 1)
    #expect(record.spread < 0.01)
    #expect(abs(record.position.latitude + 33.8568) < 1e-9)
  }

  @Test func ownObservationsMoveAnImportedRecordByItsWeight() {
    let imported = AccessPointRecord.imported(
      bssid: 1, latitude: 10, longitude: 20, radius: 30, samples: 3, time: 0)
    let moved = imported.adding(latitude: 10.001, longitude: 20, weight: 1, time: 5)
    // A quarter of the weight is the new observation: the centroid moves about a quarter of the way.
    #expect(abs(moved.position.latitude - 10.00025) < 2e-6)
    #expect(moved.observations == 4)
    #expect(moved.lastSeen == 5)
  }
}
