import LocationModel

/// An iBeacon advertisement frame: the manufacturer-specific data that Apple's company identifier
/// (0x004C) carries in a Bluetooth LE advertisement when it is an iBeacon.
///
/// Layout (Apple, "Proximity Beacon Specification", release R1, section "iBeacon Advertising
/// Packet"; the bytes after the two-byte company identifier, which BlueZ's `Device1`
/// `ManufacturerData` gives as the key of its dictionary):
///
/// | offset | length | field |
/// | --- | --- | --- |
/// | 0 | 1 | beacon type, 0x02 |
/// | 1 | 1 | length of what follows, 0x15 (21) |
/// | 2 | 16 | proximity UUID, big-endian |
/// | 18 | 2 | major, big-endian |
/// | 20 | 2 | minor, big-endian |
/// | 22 | 1 | measured power: the RSSI at 1 m, a signed byte (dBm) |
package struct IBeaconFrame: Sendable, Equatable {
  /// Apple's Bluetooth SIG company identifier.
  package static let appleCompanyID: UInt16 = 0x004C
  /// The beacon type byte of an iBeacon.
  package static let beaconType: UInt8 = 0x02
  /// The length byte of an iBeacon: UUID, major, minor and measured power.
  package static let payloadLength: UInt8 = 0x15
  /// The whole frame after the company identifier, in bytes.
  package static let frameLength = 23

  /// The proximity UUID.
  package var uuid: BeaconUUID
  /// The major value.
  package var major: UInt16
  /// The minor value.
  package var minor: UInt16
  /// The calibrated RSSI at 1 m, dBm.
  package var measuredPower: Int

  /// Creates a frame.
  package init(uuid: BeaconUUID, major: UInt16, minor: UInt16, measuredPower: Int) {
    self.uuid = uuid
    self.major = major
    self.minor = minor
    self.measuredPower = measuredPower
  }

  /// Decodes one company's manufacturer-specific data.
  ///
  /// - Returns: the frame, or nil when the data is not an iBeacon at all: another company, or
  ///   Apple's data of another type (AirDrop, Handoff and the like, which Apple devices send all
  ///   the time and which are not errors).
  /// - Throws: `FormatError` (`.malformed`) when Apple's data says it is an iBeacon (type 0x02)
  ///   but its length byte or its size is wrong: a malformed frame, to be counted and skipped.
  package static func decode<Bytes: Collection<UInt8>>(companyID: UInt16, data: Bytes)
    throws(FormatError) -> IBeaconFrame?
  {
    guard companyID == appleCompanyID, data.first == beaconType else { return nil }
    let bytes = Array(data)
    guard bytes.count >= 2, bytes[1] == payloadLength else {
      throw FormatError(
        .malformed,
        "iBeacon frame: the length byte is \(bytes.count >= 2 ? String(bytes[1]) : "missing"), "
          + "not \(payloadLength)")
    }
    guard bytes.count == frameLength else {
      throw FormatError(
        .malformed, "iBeacon frame: \(bytes.count) bytes after the company identifier, not 23")
    }
    guard let uuid = BeaconUUID(bytes: bytes[2..<18]) else {
      throw FormatError(.malformed, "iBeacon frame: no 16-byte UUID")
    }
    return IBeaconFrame(
      uuid: uuid, major: UInt16(bytes[18]) << 8 | UInt16(bytes[19]),
      minor: UInt16(bytes[20]) << 8 | UInt16(bytes[21]),
      measuredPower: Int(Int8(bitPattern: bytes[22])))
  }

  /// The manufacturer-specific data after the company identifier (what ``decode(companyID:data:)``
  /// reads); a measured power outside -128...127 is clamped.
  package var manufacturerData: [UInt8] {
    let power = Int8(clamping: measuredPower)
    return [Self.beaconType, Self.payloadLength] + uuid.bytes + [
      UInt8(major >> 8), UInt8(major & 0xFF), UInt8(minor >> 8), UInt8(minor & 0xFF),
      UInt8(bitPattern: power),
    ]
  }

  /// The advertisement of this frame heard with `rssi` from `address` at `time`.
  package func advertisement(rssi: Int, address: String, time: Double) -> BeaconAdvertisement {
    BeaconAdvertisement(
      uuid: uuid, major: major, minor: minor, measuredPower: measuredPower, rssi: rssi,
      address: address, time: time)
  }
}
