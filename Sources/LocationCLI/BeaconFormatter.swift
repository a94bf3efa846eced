import CoreLocation
import Foundation

/// Turns a ranging delivery (`locationManager(_:didRange:satisfying:)`) into `whereami --beacons`'
/// output: one line per beacon, or one JSON object per delivery.
package enum BeaconFormatter {
  /// `CLProximity`'s case name: `immediate`, `near`, `far` or `unknown`.
  package static func proximityName(_ proximity: CLProximity) -> String {
    switch proximity {
    case .immediate: "immediate"
    case .near: "near"
    case .far: "far"
    case .unknown: "unknown"
    }
  }

  /// The text of a delivery: one line per beacon, in the delivery's order (closest first),
  /// `UUID MAJOR MINOR PROXIMITY ACCURACY RSSI` with the accuracy in metres (two decimals; -1 when
  /// the beacon was not heard in the last second) and the RSSI in dBm; a line saying that none is
  /// in range when the delivery is empty.
  package static func lines(_ beacons: [CLBeacon], uuid: UUID) -> [String] {
    guard !beacons.isEmpty else { return ["no beacon of \(uuid.uuidString) in range"] }
    return beacons.map { beacon in
      [
        beacon.uuid.uuidString, beacon.major.stringValue, beacon.minor.stringValue,
        proximityName(beacon.proximity),
        beacon.accuracy < 0 ? "-1" : String(format: "%.2f", beacon.accuracy), String(beacon.rssi),
      ].joined(separator: " ")
    }
  }

  /// One JSON object on one line for a delivery: the ranged UUID and its beacons, closest first,
  /// each with `uuid`, `major`, `minor`, `proximity` (the case name), `accuracy` (metres, to the
  /// centimetre), `rssi` (dBm) and `timestamp` (ISO 8601, UTC). A beacon not heard in the last
  /// second has `null` accuracy and RSSI.
  ///
  ///     {"uuid":"E2C5…","beacons":[{"uuid":"E2C5…","major":1,"minor":2,"proximity":"near",
  ///     "accuracy":1.26,"rssi":-61,"timestamp":"2026-01-01T00:00:03Z"}]}
  package static func json(_ beacons: [CLBeacon], uuid: UUID) -> String {
    let objects = beacons.map { beacon -> String in
      let heard = beacon.proximity != .unknown && beacon.accuracy >= 0
      let fields: [(String, String)] = [
        ("uuid", LocationFormatter.jsonString(beacon.uuid.uuidString)),
        ("major", beacon.major.stringValue),
        ("minor", beacon.minor.stringValue),
        ("proximity", LocationFormatter.jsonString(proximityName(beacon.proximity))),
        ("accuracy", heard ? centimetres(beacon.accuracy) : "null"),
        ("rssi", heard ? String(beacon.rssi) : "null"),
        ("timestamp", LocationFormatter.jsonString(LocationFormatter.isoTime(beacon.timestamp))),
      ]
      return "{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
    }
    return "{\"uuid\":\(LocationFormatter.jsonString(uuid.uuidString)),\"beacons\":["
      + objects.joined(separator: ",") + "]}"
  }

  /// Metres rounded to the centimetre, as a JSON number without trailing zeros (`1.26`, `12`).
  static func centimetres(_ metres: Double) -> String {
    guard metres.isFinite else { return "null" }
    let rounded = (metres * 100).rounded() / 100
    let text = "\(rounded)"
    return text.hasSuffix(".0") ? String(text.dropLast(2)) : text
  }
}
