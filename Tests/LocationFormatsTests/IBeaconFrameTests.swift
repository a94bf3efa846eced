import LocationModel
import Testing

@testable import LocationFormats

/// `IBeaconFrame` on advertisement bytes as they are sent: Apple's published example frame, an
/// Estimote-style frame, Apple's other advertisement types, other companies, and broken frames.
@Suite struct IBeaconFrameTests {
  /// Bytes from hexadecimal text; spaces and dashes are ignored.
  static func hex(_ text: String) -> [UInt8] {
    let digits = Array(text.utf8.filter { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "-") })
    return stride(from: 0, to: digits.count - 1, by: 2).compactMap {
      UInt8(String(decoding: digits[$0...$0 + 1], as: UTF8.self), radix: 16)
    }
  }

  /// The manufacturer-specific data of a whole advertising payload (Bluetooth Core Specification
  /// Supplement, Part A, 1.4: AD structures of length, type, data; type 0xFF starts with the
  /// little-endian company identifier), as BlueZ's `Device1.ManufacturerData` hands it on.
  static func manufacturerData(_ payload: [UInt8]) -> [(UInt16, [UInt8])] {
    var result: [(UInt16, [UInt8])] = []
    var index = 0
    while index < payload.count {
      let length = Int(payload[index])
      guard length > 0, index + length < payload.count else { break }
      let structure = payload[(index + 1)...(index + length)]
      if structure.first == 0xFF, structure.count >= 3 {
        let start = structure.startIndex
        let company = UInt16(structure[start + 1]) | UInt16(structure[start + 2]) << 8
        result.append((company, Array(structure.dropFirst(3))))
      }
      index += length + 1
    }
    return result
  }

  /// The example frame published with Apple's AirLocate sample and in many iBeacon write-ups:
  /// flags, then manufacturer data `4c00 02 15 <UUID> 0001 0002 c5`.
  static let airLocatePayload = hex(
    "02 01 06 1a ff 4c 00 02 15 e2c56db5-dffb-48d2-b060-d0f5a71096e0 0001 0002 c5")

  @Test func decodesThePublishedExampleFrameFromAWholeAdvertisement() throws {
    let data = Self.manufacturerData(Self.airLocatePayload)
    try #require(data.count == 1)
    #expect(data[0].0 == IBeaconFrame.appleCompanyID)
    let frame = try #require(try IBeaconFrame.decode(companyID: data[0].0, data: data[0].1))
    #expect(frame.uuid == BeaconUUID(string: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"))
    #expect(frame.major == 1)
    #expect(frame.minor == 2)
    #expect(frame.measuredPower == -59)
  }

  @Test func decodesAnEstimoteStyleFrame() throws {
    // Estimote's default proximity UUID, major 0x4f2b, minor 0x1b69, measured power 0xb6.
    let data = Self.hex("0215 b9407f30-f5f8-466e-aff9-25556b57fe6d 4f2b 1b69 b6")
    let frame = try #require(try IBeaconFrame.decode(companyID: 0x004C, data: data))
    #expect(frame.uuid.description == "B9407F30-F5F8-466E-AFF9-25556B57FE6D")
    #expect(frame.major == 0x4F2B)
    #expect(frame.minor == 0x1B69)
    #expect(frame.measuredPower == -74)
  }

  @Test func anotherCompanysIdenticalBytesAreNotAnIBeacon() throws {
    let data = Self.hex("0215 e2c56db5-dffb-48d2-b060-d0f5a71096e0 0001 0002 c5")
    #expect(try IBeaconFrame.decode(companyID: 0x0059, data: data) == nil)  // Nordic
    #expect(try IBeaconFrame.decode(companyID: 0x4C00, data: data) == nil)  // byte-swapped Apple
    #expect(try IBeaconFrame.decode(companyID: 0x0006, data: data) == nil)  // Microsoft
  }

  @Test(
    "Apple's other advertisement types are not iBeacons",
    arguments: [
      "10 05 01 1c 52 b2 2e",  // Nearby Info
      "0c 0e 00 a5 3b 7d 1e 2a 90 3c 5f 11 67 d4 21 08",  // Handoff
      "12 02 00 03",  // Find My (separated, short form)
      "",  // no data at all
    ])
  func appleNonIBeaconTypesAreNil(_ text: String) throws {
    #expect(try IBeaconFrame.decode(companyID: 0x004C, data: Self.hex(text)) == nil)
  }

  @Test(
    "broken iBeacon frames throw",
    arguments: [
      "02",  // no length byte
      "02 14 e2c56db5-dffb-48d2-b060-d0f5a71096e0 0001 0002",  // length byte 20
      "02 16 e2c56db5-dffb-48d2-b060-d0f5a71096e0 0001 0002 c5 00",  // length byte 22
      "02 15 e2c56db5-dffb-48d2-b060",  // short
      "02 15 e2c56db5-dffb-48d2-b060-d0f5a71096e0 0001 0002",  // no measured power
      "02 15 e2c56db5-dffb-48d2-b060-d0f5a71096e0 0001 0002 c5 00",  // one byte too many
    ])
  func brokenFramesThrow(_ text: String) {
    #expect(throws: FormatError.self) {
      try IBeaconFrame.decode(companyID: 0x004C, data: Self.hex(text))
    }
  }

  @Test func theErrorSaysWhatIsWrong() {
    do {
      _ = try IBeaconFrame.decode(companyID: 0x004C, data: Self.hex("02 15 00 01"))
      Issue.record("a four-byte frame decoded")
    } catch {
      #expect(error.code == .malformed)
      #expect(error.message.contains("4 bytes"))
    }
  }

  @Test(
    "the measured power is a signed byte",
    arguments: [(0xC5, -59), (0xB6, -74), (0x80, -128), (0xFF, -1), (0x00, 0), (0x7F, 127)]
      as [(UInt8, Int)])
  func measuredPowerSign(_ byte: UInt8, _ power: Int) throws {
    let data = Self.hex("0215 e2c56db5-dffb-48d2-b060-d0f5a71096e0 ffff 0000") + [byte]
    let frame = try #require(try IBeaconFrame.decode(companyID: 0x004C, data: data))
    #expect(frame.measuredPower == power)
    #expect(frame.major == 0xFFFF)
    #expect(frame.minor == 0)
    #expect(frame.manufacturerData == data)
  }

  @Test func roundTripsThroughItsManufacturerData() throws {
    let uuid = try #require(BeaconUUID(string: "b9407f30-f5f8-466e-aff9-25556b57fe6d"))
    for (major, minor, power) in [(0, 0, -59), (65535, 65535, -100), (258, 772, 3)] {
      let frame = IBeaconFrame(
        uuid: uuid, major: UInt16(major), minor: UInt16(minor), measuredPower: power)
      #expect(frame.manufacturerData.count == IBeaconFrame.frameLength)
      #expect(try IBeaconFrame.decode(companyID: 0x004C, data: frame.manufacturerData) == frame)
    }
    let published = Self.hex("0215 e2c56db5-dffb-48d2-b060-d0f5a71096e0 0001 0002 c5")
    let frame = try #require(try IBeaconFrame.decode(companyID: 0x004C, data: published))
    #expect(frame.manufacturerData == published)
  }

  @Test func aMeasuredPowerOutOfRangeIsClampedWhenWritten() throws {
    let uuid = try #require(BeaconUUID(string: "e2c56db5-dffb-48d2-b060-d0f5a71096e0"))
    let loud = IBeaconFrame(uuid: uuid, major: 1, minor: 1, measuredPower: 300)
    #expect(loud.manufacturerData.last == 0x7F)
    let quiet = IBeaconFrame(uuid: uuid, major: 1, minor: 1, measuredPower: -300)
    #expect(quiet.manufacturerData.last == 0x80)
  }

  @Test func decodesFromASliceOfALargerBuffer() throws {
    let payload = Self.airLocatePayload
    let data = payload[7...]  // after flags, length, type and the company identifier
    let frame = try #require(try IBeaconFrame.decode(companyID: 0x004C, data: data))
    #expect(frame.minor == 2)
  }

  @Test func theAdvertisementCarriesTheFrameAndWhatTheReceiverSaw() throws {
    let data = Self.hex("0215 e2c56db5-dffb-48d2-b060-d0f5a71096e0 0001 0002 c5")
    let frame = try #require(try IBeaconFrame.decode(companyID: 0x004C, data: data))
    let advertisement = frame.advertisement(
      rssi: -67, address: "F0:0D:12:34:56:78", time: 1_764_662_400.125)
    #expect(
      advertisement
        == BeaconAdvertisement(
          uuid: frame.uuid, major: 1, minor: 2, measuredPower: -59, rssi: -67,
          address: "F0:0D:12:34:56:78", time: 1_764_662_400.125))
  }
}
