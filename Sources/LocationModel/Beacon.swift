/// A beacon's 128-bit proximity UUID, as the two big-endian halves of its 16 bytes on the air.
///
/// `LocationModel` imports nothing (not even Foundation), so the engine's beacon values carry their
/// own UUID; the public layer converts to and from Foundation's `UUID`.
package struct BeaconUUID: Hashable, Sendable, Comparable, CustomStringConvertible {
  /// Bytes 0 to 7, big-endian.
  package var high: UInt64
  /// Bytes 8 to 15, big-endian.
  package var low: UInt64

  /// Creates a UUID from its two halves.
  package init(high: UInt64, low: UInt64) {
    self.high = high
    self.low = low
  }

  /// Creates a UUID from exactly 16 bytes in air (network) order; nil for another count.
  package init?<Bytes: Collection<UInt8>>(bytes: Bytes) {
    guard bytes.count == 16 else { return nil }
    var high: UInt64 = 0
    var low: UInt64 = 0
    for (index, byte) in bytes.enumerated() {
      if index < 8 {
        high = high << 8 | UInt64(byte)
      } else {
        low = low << 8 | UInt64(byte)
      }
    }
    self.init(high: high, low: low)
  }

  /// Parses the canonical text form (8-4-4-4-12 hexadecimal digits, either case); nil otherwise.
  package init?(string: String) {
    let utf8 = Array(string.utf8)
    guard utf8.count == 36 else { return nil }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(16)
    var nibble: UInt8?
    for (index, character) in utf8.enumerated() {
      if index == 8 || index == 13 || index == 18 || index == 23 {
        guard character == UInt8(ascii: "-") else { return nil }
        continue
      }
      guard let value = Self.hexValue(character) else { return nil }
      if let high = nibble {
        bytes.append(high << 4 | value)
        nibble = nil
      } else {
        nibble = value
      }
    }
    self.init(bytes: bytes)
  }

  /// The 16 bytes in air (network) order.
  package var bytes: [UInt8] {
    (0..<8).map { UInt8(truncatingIfNeeded: high >> (56 - 8 * $0)) }
      + (0..<8).map { UInt8(truncatingIfNeeded: low >> (56 - 8 * $0)) }
  }

  /// The canonical text form in upper case, as Foundation's `UUID.uuidString` writes it.
  package var description: String {
    let digits = Array("0123456789ABCDEF".utf8)
    var text: [UInt8] = []
    text.reserveCapacity(36)
    for (index, byte) in bytes.enumerated() {
      if index == 4 || index == 6 || index == 8 || index == 10 { text.append(UInt8(ascii: "-")) }
      text.append(digits[Int(byte >> 4)])
      text.append(digits[Int(byte & 0x0F)])
    }
    return String(decoding: text, as: UTF8.self)
  }

  package static func < (lhs: BeaconUUID, rhs: BeaconUUID) -> Bool {
    (lhs.high, lhs.low) < (rhs.high, rhs.low)
  }

  private static func hexValue(_ character: UInt8) -> UInt8? {
    switch character {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): character - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): character - UInt8(ascii: "A") + 10
    default: nil
    }
  }
}

/// One iBeacon advertisement as a source heard it: the decoded frame, the signal strength it
/// arrived with, who sent it and when.
package struct BeaconAdvertisement: Sendable, Equatable {
  /// The proximity UUID.
  package var uuid: BeaconUUID
  /// The major value.
  package var major: UInt16
  /// The minor value.
  package var minor: UInt16
  /// The calibrated received power at 1 m that the beacon advertises, dBm (a signed byte on the
  /// air, typically -50 to -70).
  package var measuredPower: Int
  /// The received signal strength, dBm (negative; BlueZ's `RSSI`).
  package var rssi: Int
  /// The sender's Bluetooth address (`AA:BB:CC:DD:EE:FF`), or another stable name of the sender.
  package var address: String
  /// When it was heard: wall-clock seconds since 1970-01-01T00:00:00Z.
  package var time: Double

  /// Creates an advertisement.
  package init(
    uuid: BeaconUUID, major: UInt16, minor: UInt16, measuredPower: Int, rssi: Int,
    address: String, time: Double
  ) {
    self.uuid = uuid
    self.major = major
    self.minor = minor
    self.measuredPower = measuredPower
    self.rssi = rssi
    self.address = address
    self.time = time
  }
}

/// Which beacons a client ranges, or a beacon region matches: a UUID, and optionally a major and
/// then a minor value (`CLBeaconIdentityConstraint`'s shape: a minor needs a major).
package struct BeaconConstraint: Hashable, Sendable, Comparable, CustomStringConvertible {
  /// The UUID beacons must have.
  package var uuid: BeaconUUID
  /// The major value beacons must have, if any.
  package var major: UInt16?
  /// The minor value beacons must have, if any (only with a major).
  package var minor: UInt16?

  /// Creates a constraint.
  package init(uuid: BeaconUUID, major: UInt16? = nil, minor: UInt16? = nil) {
    self.uuid = uuid
    self.major = major
    self.minor = minor
  }

  /// Whether a beacon of this identity satisfies the constraint.
  package func matches(uuid: BeaconUUID, major: UInt16, minor: UInt16) -> Bool {
    uuid == self.uuid && (self.major ?? major) == major && (self.minor ?? minor) == minor
  }

  /// Whether the advertisement's beacon satisfies the constraint.
  package func matches(_ advertisement: BeaconAdvertisement) -> Bool {
    matches(uuid: advertisement.uuid, major: advertisement.major, minor: advertisement.minor)
  }

  package static func < (lhs: BeaconConstraint, rhs: BeaconConstraint) -> Bool {
    if lhs.uuid != rhs.uuid { return lhs.uuid < rhs.uuid }
    let left: (Int, Int) = (lhs.major.map { Int($0) } ?? -1, lhs.minor.map { Int($0) } ?? -1)
    let right: (Int, Int) = (rhs.major.map { Int($0) } ?? -1, rhs.minor.map { Int($0) } ?? -1)
    return left < right
  }

  /// `UUID`, `UUID major`, or `UUID major minor`.
  package var description: String {
    [uuid.description, major.map(String.init), minor.map(String.init)].compactMap { $0 }
      .joined(separator: " ")
  }
}

/// How near a ranged beacon is (`CLProximity`'s cases and raw values).
package enum BeaconProximity: Int, Sendable, Equatable, CaseIterable {
  /// Not heard in the ranging window, or no estimate.
  case unknown = 0
  /// Within about half a metre.
  case immediate = 1
  /// Within a few metres.
  case near = 2
  /// Farther.
  case far = 3
}

/// One beacon in a ranging delivery (`CLBeacon`'s values).
package struct RangedBeacon: Sendable, Equatable {
  /// The proximity UUID.
  package var uuid: BeaconUUID
  /// The major value.
  package var major: UInt16
  /// The minor value.
  package var minor: UInt16
  /// How near it is.
  package var proximity: BeaconProximity
  /// One-sigma estimate of the distance, metres; -1 when not heard in the window.
  package var accuracy: Double
  /// The smoothed received signal strength, dBm; 0 when not heard in the window.
  package var rssi: Int
  /// When the delivery was made: wall-clock seconds since 1970-01-01T00:00:00Z.
  package var time: Double

  /// Creates a ranged beacon.
  package init(
    uuid: BeaconUUID, major: UInt16, minor: UInt16, proximity: BeaconProximity, accuracy: Double,
    rssi: Int, time: Double
  ) {
    self.uuid = uuid
    self.major = major
    self.minor = minor
    self.proximity = proximity
    self.accuracy = accuracy
    self.rssi = rssi
    self.time = time
  }
}
