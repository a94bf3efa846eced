/// gpsd's times: ISO 8601 / RFC 3339 date-times in UTC, as in `2020-03-18T13:28:19.600Z`.
package enum GPSDTime {
  /// Parses `YYYY-MM-DDTHH:MM:SS[.fraction](Z|+hh:mm|-hh:mm)` (`t` and a space are accepted for
  /// `T`, `z` for `Z`).
  ///
  /// Our rules: the date must exist in the Gregorian calendar (years 1...9999); hours 0...23,
  /// minutes 0...59, seconds 0...60 (a leap second counts as the first second of the next
  /// minute, as POSIX time has no leap seconds); any number of fraction digits. A time without an
  /// offset, or with anything after it, is refused.
  /// - Parameter text: the text of gpsd's `time` member.
  /// - Returns: seconds since 1970-01-01T00:00:00Z, or nil when the text is not such a time.
  package static func parse(_ text: String) -> Double? {
    let bytes = Array(text.utf8)
    var index = 0

    func digits(_ count: Int) -> Int? {
      guard index + count <= bytes.count else { return nil }
      var value = 0
      for _ in 0..<count {
        let byte = bytes[index]
        guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
        value = value * 10 + Int(byte - UInt8(ascii: "0"))
        index += 1
      }
      return value
    }
    func expect(_ characters: UInt8...) -> Bool {
      guard index < bytes.count, characters.contains(bytes[index]) else { return false }
      index += 1
      return true
    }

    guard let year = digits(4), expect(UInt8(ascii: "-")), let month = digits(2),
      expect(UInt8(ascii: "-")), let day = digits(2),
      expect(UInt8(ascii: "T"), UInt8(ascii: "t"), UInt8(ascii: " ")),
      let hour = digits(2), expect(UInt8(ascii: ":")), let minute = digits(2),
      expect(UInt8(ascii: ":")), let second = digits(2)
    else { return nil }
    let date = NMEADate(year: year, month: month, day: day)
    guard date.isValid, hour < 24, minute < 60, second <= 60 else { return nil }
    var fraction = 0.0
    if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
      index += 1
      var scale = 0.1
      let start = index
      while index < bytes.count, bytes[index] >= UInt8(ascii: "0"),
        bytes[index] <= UInt8(ascii: "9")
      {
        fraction += Double(bytes[index] - UInt8(ascii: "0")) * scale
        scale /= 10
        index += 1
      }
      guard index > start else { return nil }
    }
    var offset = 0
    if expect(UInt8(ascii: "Z"), UInt8(ascii: "z")) {
      offset = 0
    } else if index < bytes.count,
      bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-")
    {
      let sign = bytes[index] == UInt8(ascii: "-") ? -1 : 1
      index += 1
      guard let offsetHours = digits(2), expect(UInt8(ascii: ":")), let offsetMinutes = digits(2),
        offsetHours < 24, offsetMinutes < 60
      else { return nil }
      offset = sign * (offsetHours * 3600 + offsetMinutes * 60)
    } else {
      return nil
    }
    guard index == bytes.count else { return nil }
    let whole = date.daysSinceEpoch * 86_400 + hour * 3600 + minute * 60 + second - offset
    return Double(whole) + fraction
  }
}
