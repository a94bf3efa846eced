/// The names of the gazetteer's small tables (countries, time zones), decoded once when the file
/// is opened, so that an answer takes them without decoding or reading the mapping: about 900
/// short strings, 30 KB of heap. The areas' names (3,600 first-level and 17,500 second-level
/// areas) and the places' (147,000) stay in the mapping and are decoded per answer, their bytes
/// prefetched while the search runs: decoded up front, the areas' names held 1.1 MB of heap, 7 % of
/// the file's size on top of the mapping.
struct GazetteerNames: Sendable {
  /// Per country record: its ISO code and its English name.
  let countryCodes: [String?]
  let countryNames: [String?]
  /// Per time zone: its IANA identifier.
  let timeZones: [String?]
  /// The country record of the United States (whose answers carry the state's code), or -1.
  let unitedStates: Int

  init(strings: ByteRegion, countries: ByteRegion, timeZones: ByteRegion) {
    func string(_ offset: UInt32) -> String? {
      let text = strings.string(Int(offset))
      return text.isEmpty ? nil : text
    }
    let countryCount = countries.count / GazetteerFormat.countrySize
    countryCodes = (0..<countryCount).map { index in
      let record = index * GazetteerFormat.countrySize
      let first = countries.u8(record)
      let second = countries.u8(record + 1)
      guard first != 0, second != 0 else { return nil }
      var code = String.UnicodeScalarView()
      code.append(Unicode.Scalar(first))
      code.append(Unicode.Scalar(second))
      return String(code)
    }
    countryNames = (0..<countryCount).map {
      string(countries.u32($0 * GazetteerFormat.countrySize + 6))
    }
    self.timeZones = (0..<(timeZones.count / 4)).map { string(timeZones.u32($0 * 4)) }
    unitedStates = countryCodes.firstIndex(of: "US") ?? -1
  }

  /// The element at `index`, or nil out of range (a corrupt record's index).
  static func lookup(_ table: [String?], _ index: Int) -> String? {
    index >= 0 && index < table.count ? table[index] : nil
  }
}
