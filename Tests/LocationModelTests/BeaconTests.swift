import LocationModel
import Testing

/// `BeaconUUID`'s text and byte forms and its order; `BeaconConstraint`'s matching and order.
@Suite struct BeaconTests {
  /// The proximity UUID of Apple's AirLocate sample, in canonical form.
  static let airLocate = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"

  @Test func parsesAndFormatsTheCanonicalForm() throws {
    let uuid = try #require(BeaconUUID(string: Self.airLocate))
    #expect(uuid.description == Self.airLocate)
    #expect(uuid.high == 0xE2C5_6DB5_DFFB_48D2)
    #expect(uuid.low == 0xB060_D0F5_A710_96E0)
    #expect(BeaconUUID(string: uuid.description) == uuid)
  }

  @Test func acceptsLowerAndMixedCaseAndFormatsInUpperCase() throws {
    let lower = try #require(BeaconUUID(string: "b9407f30-f5f8-466e-aff9-25556b57fe6d"))
    let mixed = try #require(BeaconUUID(string: "B9407f30-F5f8-466E-aFF9-25556B57fE6D"))
    #expect(lower == mixed)
    #expect(lower.description == "B9407F30-F5F8-466E-AFF9-25556B57FE6D")
  }

  @Test(
    "refuses what is not the 8-4-4-4-12 form",
    arguments: [
      "",
      "E2C56DB5DFFB48D2B060D0F5A71096E0",  // no dashes
      "{E2C56DB5-DFFB-48D2-B060-D0F5A71096E0}",  // braces
      "E2C56DB5-DFFB-48D2-B060-D0F5A71096E",  // one digit short
      "E2C56DB5-DFFB-48D2-B060-D0F5A71096E00",  // one digit too many
      "E2C56DB5-DFFB-48D2-B060-D0F5A71096EG",  // not hexadecimal
      "E2C56DB5DFFB-48D2-B060-D0F5A71096E0-",  // a dash moved
      "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0 ",  // a trailing blank
      " E2C56DB5-DFFB-48D2-B060-D0F5A71096E",  // a leading blank
      "E2C56DB5-DFFB-48D2-B060+D0F5A71096E0",  // another separator
      "E2C56DB5-DFFB-48D2-B060-D0F5A71096\u{E9}",  // 36 bytes of UTF-8, not hexadecimal
      "0x2C56DB5-DFFB-48D2-B060-D0F5A71096E0",
    ])
  func refusesBadStrings(_ text: String) {
    #expect(BeaconUUID(string: text) == nil)
  }

  @Test func bytesAreInAirOrder() throws {
    let bytes: [UInt8] = Array(0..<16)
    let uuid = try #require(BeaconUUID(bytes: bytes))
    #expect(uuid.high == 0x0001_0203_0405_0607)
    #expect(uuid.low == 0x0809_0A0B_0C0D_0E0F)
    #expect(uuid.bytes == bytes)
    #expect(uuid.description == "00010203-0405-0607-0809-0A0B0C0D0E0F")
    let parsed = try #require(BeaconUUID(string: Self.airLocate))
    #expect(
      parsed.bytes == [
        0xE2, 0xC5, 0x6D, 0xB5, 0xDF, 0xFB, 0x48, 0xD2, 0xB0, 0x60, 0xD0, 0xF5, 0xA7, 0x10, 0x96,
        0xE0,
      ])
    #expect(BeaconUUID(bytes: parsed.bytes) == parsed)
  }

  @Test func bytesOfAnotherCountAreRefused() {
    #expect(BeaconUUID(bytes: [UInt8](repeating: 1, count: 15)) == nil)
    #expect(BeaconUUID(bytes: [UInt8](repeating: 1, count: 17)) == nil)
    #expect(BeaconUUID(bytes: [UInt8]()) == nil)
    let slice = [UInt8](repeating: 7, count: 20)[2..<18]
    #expect(BeaconUUID(bytes: slice)?.bytes == [UInt8](repeating: 7, count: 16))
  }

  @Test func ordersByTheBytesAsUnsignedNumbers() throws {
    let small = BeaconUUID(high: 1, low: 0xFFFF_FFFF_FFFF_FFFF)
    let large = BeaconUUID(high: 2, low: 0)
    #expect(small < large)
    #expect(!(large < small))
    let top = BeaconUUID(high: 0x8000_0000_0000_0000, low: 0)
    #expect(large < top, "the high half compares unsigned")
    #expect(BeaconUUID(high: 5, low: 1) < BeaconUUID(high: 5, low: 2))
    #expect([top, large, small].sorted() == [small, large, top])
  }

  @Test func aConstraintOfAUUIDAloneMatchesEveryMajorAndMinor() throws {
    let uuid = try #require(BeaconUUID(string: Self.airLocate))
    let other = BeaconUUID(high: uuid.high, low: uuid.low ^ 1)
    let constraint = BeaconConstraint(uuid: uuid)
    #expect(constraint.matches(uuid: uuid, major: 0, minor: 0))
    #expect(constraint.matches(uuid: uuid, major: 65535, minor: 12))
    #expect(!constraint.matches(uuid: other, major: 0, minor: 0))
  }

  @Test func aConstraintWithAMajorMatchesThatMajorOnly() throws {
    let uuid = try #require(BeaconUUID(string: Self.airLocate))
    let constraint = BeaconConstraint(uuid: uuid, major: 1)
    #expect(constraint.matches(uuid: uuid, major: 1, minor: 0))
    #expect(constraint.matches(uuid: uuid, major: 1, minor: 65535))
    #expect(!constraint.matches(uuid: uuid, major: 2, minor: 0))
  }

  @Test func aConstraintWithMajorAndMinorMatchesOneBeacon() throws {
    let uuid = try #require(BeaconUUID(string: Self.airLocate))
    let constraint = BeaconConstraint(uuid: uuid, major: 1, minor: 2)
    #expect(constraint.matches(uuid: uuid, major: 1, minor: 2))
    #expect(!constraint.matches(uuid: uuid, major: 1, minor: 3))
    #expect(!constraint.matches(uuid: uuid, major: 2, minor: 2))
    let advertisement = BeaconAdvertisement(
      uuid: uuid, major: 1, minor: 2, measuredPower: -59, rssi: -70, address: "C3:4A:1F:00:00:01",
      time: 1_764_662_400)
    #expect(constraint.matches(advertisement))
    var elsewhere = advertisement
    elsewhere.minor = 9
    #expect(!constraint.matches(elsewhere))
  }

  @Test func constraintsOrderByUUIDThenMajorThenMinorWithAbsentValuesFirst() throws {
    let first = try #require(BeaconUUID(string: "00000000-0000-0000-0000-000000000001"))
    let second = try #require(BeaconUUID(string: Self.airLocate))
    let expected = [
      BeaconConstraint(uuid: first, major: 9, minor: 9),
      BeaconConstraint(uuid: second),
      BeaconConstraint(uuid: second, major: 0),
      BeaconConstraint(uuid: second, major: 0, minor: 0),
      BeaconConstraint(uuid: second, major: 0, minor: 5),
      BeaconConstraint(uuid: second, major: 1),
      BeaconConstraint(uuid: second, major: 65535, minor: 65535),
    ]
    #expect(expected.reversed().sorted() == expected)
    #expect(!(expected[1] < expected[1]))
  }

  @Test func aConstraintDescribesItselfAsUUIDMajorMinor() throws {
    let uuid = try #require(BeaconUUID(string: Self.airLocate))
    #expect(BeaconConstraint(uuid: uuid).description == Self.airLocate)
    #expect(BeaconConstraint(uuid: uuid, major: 1).description == Self.airLocate + " 1")
    #expect(
      BeaconConstraint(uuid: uuid, major: 1, minor: 2).description == Self.airLocate + " 1 2")
  }

  @Test func constraintsAreUsableAsSetMembers() throws {
    let uuid = try #require(BeaconUUID(string: Self.airLocate))
    let set: Set = [
      BeaconConstraint(uuid: uuid), BeaconConstraint(uuid: uuid, major: nil, minor: nil),
      BeaconConstraint(uuid: uuid, major: 1),
    ]
    #expect(set.count == 2)
  }
}
