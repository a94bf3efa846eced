import Testing

@testable import LocationFormats

/// Ichnaea-format access point exports: columns by name, RFC 4180 quoting, bad rows skipped.
@Suite struct AccessPointCSVTests {
  @Test func readsIchnaeaShardColumnsInAnyOrder() throws {
    let text = """
      mac,lat,lon,radius,region,samples,source,created,modified,block_count
      01005e901000,52.5186,13.3762,45,DE,12,1,2016-01-01 00:00:00,2016-01-02 03:04:05,0
      AA:BB:CC:DD:EE:FF,-33.8568,151.2153,,AU,,,,1700000000,0

      """
    let decoded = try AccessPointCSV.decode(text)
    #expect(decoded.errors.isEmpty)
    #expect(
      decoded.rows == [
        AccessPointCSV.Row(
          bssid: 0x0100_5E90_1000, latitude: 52.5186, longitude: 13.3762, radius: 45,
          samples: 12, time: 1_451_703_845),
        AccessPointCSV.Row(
          bssid: 0xAABB_CCDD_EEFF, latitude: -33.8568, longitude: 151.2153, radius: nil,
          samples: nil, time: 1_700_000_000),
      ])
  }

  @Test func headerIsCaseInsensitiveAndBssidAndUpdatedAreAliases() throws {
    let text =
      "Updated, LON ,BSSID,Lat\r\n2020-03-18T13:28:19Z,2.2945,aa-bb-cc-00-11-22,48.8583\r\n"
    let decoded = try AccessPointCSV.decode(text)
    #expect(decoded.errors.isEmpty)
    #expect(decoded.rows.count == 1)
    #expect(decoded.rows.first?.bssid == 0xAABB_CC00_1122)
    #expect(decoded.rows.first?.latitude == 48.8583)
    #expect(decoded.rows.first?.longitude == 2.2945)
    #expect(decoded.rows.first?.time == 1_584_538_099)
    #expect(decoded.rows.first?.radius == nil)
  }

  @Test func quotedFieldsMayHoldCommasQuotesAndLineBreaks() throws {
    let text = """
      "note","mac","lat","lon"
      "a, ""quoted""
      note","01:23:45:67:89:ab","1.5","2.5"
      plain,0123456789ac,3,4

      """
    let decoded = try AccessPointCSV.decode(text)
    #expect(decoded.errors.isEmpty)
    #expect(decoded.rows.map(\.bssid) == [0x0123_4567_89AB, 0x0123_4567_89AC])
    #expect(decoded.rows.first?.latitude == 1.5)
  }

  @Test func badRowsAreCountedWithTheirLinesAndTheRestRead() throws {
    let text = """
      mac,lat,lon,radius,samples,modified
      0123456789ab,10,20,5,1,0
      0123456789,10,20,,,
      0123456789ab,91,20,,,

      0123456789ab,10,NaN,,,
      0123456789ab,10,inf,,,
      0123456789ab,10,20,-1,,
      0123456789ab,10,20,,many,
      0123456789ab,10,20,,,yesterday
      0123456789ab,10
      "0123456789ab,10,20,,,
      """
    let decoded = try AccessPointCSV.decode(text, file: "aps.csv")
    #expect(decoded.rows.count == 1)
    #expect(decoded.skipped == 9)
    #expect(decoded.errors.map(\.line) == [3, 4, 6, 7, 8, 9, 10, 11, 12])
    #expect(
      decoded.errors.map(\.code) == [
        .invalidValue, .invalidValue, .invalidValue, .invalidValue, .invalidValue,
        .invalidValue, .invalidValue, .missingField, .malformed,
      ])
    #expect(decoded.errors.allSatisfy { $0.file == "aps.csv" })
  }

  @Test func textAfterAClosingQuoteSkipsOnlyThatRow() throws {
    let text = "mac,lat,lon\n\"0123456789ab\"x,1,2\n0123456789ab,1,2\n"
    let decoded = try AccessPointCSV.decode(text)
    #expect(decoded.rows.count == 1)
    #expect(decoded.errors.map(\.line) == [2])
    #expect(decoded.errors.first?.code == .malformed)
  }

  @Test func aMissingRequiredColumnIsOneError() {
    for (header, name) in [("lat,lon", "mac"), ("mac,lon", "lat"), ("bssid,lat", "lon")] {
      let error = #expect(throws: FormatError.self) {
        _ = try AccessPointCSV.decode("\(header)\n1,2\n")
      }
      #expect(error?.code == .missingField)
      #expect(error?.line == 1)
      #expect(error?.message.contains("'\(name)'") == true)
    }
  }

  @Test func emptyTextHasNoHeader() {
    let error = #expect(throws: FormatError.self) { _ = try AccessPointCSV.decode("\n\n") }
    #expect(error?.code == .empty)
  }

  @Test func macForms() {
    #expect(AccessPointCSV.mac(Array("01:23:45:67:89:AB".utf8)) == 0x0123_4567_89AB)
    #expect(AccessPointCSV.mac(Array("01-23-45-67-89-ab".utf8)) == 0x0123_4567_89AB)
    #expect(AccessPointCSV.mac(Array("0123456789aB".utf8)) == 0x0123_4567_89AB)
    #expect(AccessPointCSV.mac(Array("0123456789abc".utf8)) == nil)
    #expect(AccessPointCSV.mac(Array("0123456789ag".utf8)) == nil)
    #expect(AccessPointCSV.mac(Array("".utf8)) == nil)
  }
}
