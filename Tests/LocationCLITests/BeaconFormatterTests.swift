import CoreLocation
import Foundation
import Testing

@testable import LocationCLI

/// `whereami --beacons`' text and JSON.
@Suite struct BeaconFormatterTests {
  static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0") ?? UUID()
  static let time = Date(timeIntervalSince1970: 1_534_758_456.25)
  static let near = StubBeacon(
    uuid: uuid, major: 1, minor: 2, proximity: .near, accuracy: 1.2649, rssi: -61, timestamp: time)
  static let gone = StubBeacon(
    uuid: uuid, major: 1, minor: 9, proximity: .unknown, accuracy: -1, rssi: 0, timestamp: time)

  /// One line per beacon: UUID major minor proximity accuracy (m) RSSI (dBm).
  @Test func linesPerBeaconInTheDeliverysOrder() {
    #expect(
      BeaconFormatter.lines([Self.near, Self.gone], uuid: Self.uuid) == [
        "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0 1 2 near 1.26 -61",
        "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0 1 9 unknown -1 0",
      ])
  }

  /// An empty delivery says that none is in range.
  @Test func anEmptyDeliverySaysNoneIsInRange() {
    #expect(
      BeaconFormatter.lines([], uuid: Self.uuid) == [
        "no beacon of E2C56DB5-DFFB-48D2-B060-D0F5A71096E0 in range"
      ])
  }

  /// One object per delivery, fixed key order, numbers as numbers, an unheard beacon's accuracy
  /// and RSSI null.
  @Test func jsonHasTheBeaconsInOrder() throws {
    let json = BeaconFormatter.json([Self.near, Self.gone], uuid: Self.uuid)
    #expect(
      json
        == #"{"uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0","beacons":["#
        + #"{"uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0","major":1,"minor":2,"#
        + #""proximity":"near","accuracy":1.26,"rssi":-61,"timestamp":"2018-08-20T09:47:36.250Z"},"#
        + #"{"uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0","major":1,"minor":9,"#
        + #""proximity":"unknown","accuracy":null,"rssi":null,"#
        + #""timestamp":"2018-08-20T09:47:36.250Z"}]}"#)
    #expect(try JSONSerialization.jsonObject(with: Data(json.utf8)) is [String: Any])
    #expect(
      BeaconFormatter.json([], uuid: Self.uuid)
        == #"{"uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0","beacons":[]}"#)
  }

  /// Accuracies to the centimetre, without trailing zeros.
  @Test(arguments: [(12.0, "12"), (0.005, "0.01"), (3.14159, "3.14"), (0.5, "0.5")])
  func centimetres(_ metres: Double, _ expected: String) {
    #expect(BeaconFormatter.centimetres(metres) == expected)
  }

  /// Every proximity has its case name.
  @Test func proximityNames() {
    #expect(
      [CLProximity.immediate, .near, .far, .unknown].map(BeaconFormatter.proximityName) == [
        "immediate", "near", "far", "unknown",
      ])
  }
}
