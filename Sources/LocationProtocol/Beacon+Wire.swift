import LocationFormats
import LocationModel

extension BeaconUUID: WireValue {
  /// The canonical text form (`E2C56DB5-DFFB-48D2-B060-D0F5A71096E0`; either case is read).
  package static func wireDecode(_ json: JSONValue, key: String, in coder: WireCoder)
    throws(DaemonProtocolError) -> BeaconUUID
  {
    guard let uuid = BeaconUUID(string: try String.wireDecode(json, key: key, in: coder)) else {
      throw coder.malformed(key, "must be a UUID (8-4-4-4-12 hexadecimal digits)")
    }
    return uuid
  }

  package func wireEncode(into writer: inout JSONWriter) { writer.string(description) }
}

extension BeaconConstraint: WireObject {
  package static var wireBlank: BeaconConstraint {
    BeaconConstraint(uuid: BeaconUUID(high: 0, low: 0))
  }

  /// `uuid`, and `major` then `minor` when set (0 to 65535; a minor needs a major).
  package mutating func wire(_ c: inout WireCoder) throws(DaemonProtocolError) {
    try c.field("uuid", &uuid)
    var majorValue = major.map { Int($0) }
    var minorValue = minor.map { Int($0) }
    try c.omittable("major", &majorValue)
    try c.omittable("minor", &minorValue)
    guard c.isDecoding else { return }
    major = try Self.value(majorValue, "major", c)
    minor = try Self.value(minorValue, "minor", c)
    if minor != nil, major == nil { throw c.malformed("minor", "needs a major") }
  }

  private static func value(_ number: Int?, _ key: String, _ c: WireCoder)
    throws(DaemonProtocolError) -> UInt16?
  {
    guard let number else { return nil }
    guard let value = UInt16(exactly: number) else {
      throw c.malformed(key, "must be an integer from 0 to 65535")
    }
    return value
  }
}

extension BeaconProximity: WireName {
  /// `unknown`, `immediate`, `near` or `far`.
  package var wireName: String {
    switch self {
    case .unknown: "unknown"
    case .immediate: "immediate"
    case .near: "near"
    case .far: "far"
    }
  }
}

extension RangedBeacon: WireObject {
  package static var wireBlank: RangedBeacon {
    RangedBeacon(
      uuid: BeaconUUID(high: 0, low: 0), major: 0, minor: 0, proximity: .unknown, accuracy: -1,
      rssi: 0, time: 0)
  }

  /// A beacon of a ranging delivery: identity, proximity, accuracy (metres, -1 unknown), RSSI
  /// (dBm, 0 unknown) and time (seconds since 1970).
  package mutating func wire(_ c: inout WireCoder) throws(DaemonProtocolError) {
    try c.field("uuid", &uuid)
    var majorValue = Int(major)
    var minorValue = Int(minor)
    try c.field("major", &majorValue)
    try c.field("minor", &minorValue)
    try c.field("proximity", &proximity, default: .unknown)
    try c.field("accuracy", &accuracy, default: -1)
    try c.field("rssi", &rssi, default: 0)
    try c.field("time", &time)
    guard c.isDecoding else { return }
    guard let major = UInt16(exactly: majorValue), let minor = UInt16(exactly: minorValue) else {
      throw c.malformed("major", "major and minor must be integers from 0 to 65535")
    }
    self.major = major
    self.minor = minor
  }
}

/// Why a client's ranging ended (`rangingFailed`): the app may not range (`denied`), or no source
/// hears beacons (`unavailable`).
package enum DaemonRangingFailure: String, Sendable, Equatable, CaseIterable, WireName {
  /// The app is not authorized at full accuracy (`CLError.denied`).
  case denied
  /// No source hears beacons (`CLError.rangingUnavailable`).
  case unavailable
}
