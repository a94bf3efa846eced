import Geodesy

/// Hand-written scalar parsers that read straight from bytes: decimal numbers and ISO 8601 times.
///
/// They exist because the GPX decoder sees every value as a byte range inside libxml2's buffer;
/// building a `String` for each one would cost more than the XML parse itself.
enum ByteScalars {
  /// Powers of ten that are exact in binary64 (10^0 ... 10^22).
  private static let exactPowersOfTen: [Double] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
  ]

  @inline(__always)
  private static func isSpace(_ byte: UInt8) -> Bool {
    byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
  }

  /// Parses a decimal number (`-12.5`, `+3`, `.5`, `1e-3`), ignoring surrounding XML whitespace.
  ///
  /// Only the decimal grammar of XML Schema `xsd:decimal`/`xsd:double` digits is accepted:
  /// `NaN`, `INF`, hexadecimal and empty values return nil.
  ///
  /// Numbers with at most 19 significant digits whose mantissa fits in 2^53 and whose decimal
  /// exponent is within ±22 are converted with Clinger's fast path (W. D. Clinger, "How to Read
  /// Floating Point Numbers Accurately", PLDI 1990): one exact integer and one correctly rounded
  /// multiplication or division by an exact power of ten, so the result is correctly rounded.
  /// Every other number goes through the standard library's locale-independent conversion.
  ///
  /// - Parameter bytes: the value's bytes.
  /// - Returns: the value, or nil when the bytes are not a decimal number.
  static func decimal(_ bytes: UnsafeBufferPointer<UInt8>) -> Double? {
    var start = 0
    var end = bytes.count
    while start < end && isSpace(bytes[start]) { start += 1 }
    while end > start && isSpace(bytes[end - 1]) { end -= 1 }
    if start == end { return nil }
    var index = start
    var negative = false
    if bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+") {
      negative = bytes[index] == UInt8(ascii: "-")
      index += 1
    }
    var mantissa: UInt64 = 0
    var significantDigits = 0
    var digitsSeen = 0
    var exponent = 0
    var dropped = false
    while index < end, bytes[index] &- 0x30 < 10 {
      let digit = UInt64(bytes[index] &- 0x30)
      if significantDigits < 19 {
        if mantissa != 0 || digit != 0 {
          mantissa = mantissa &* 10 &+ digit
          significantDigits += 1
        }
      } else {
        exponent += 1
        if digit != 0 { dropped = true }
      }
      digitsSeen += 1
      index += 1
    }
    if index < end && bytes[index] == UInt8(ascii: ".") {
      index += 1
      while index < end, bytes[index] &- 0x30 < 10 {
        let digit = UInt64(bytes[index] &- 0x30)
        if significantDigits < 19 {
          if mantissa != 0 || digit != 0 {
            mantissa = mantissa &* 10 &+ digit
            significantDigits += 1
          }
          exponent -= 1
        } else if digit != 0 {
          dropped = true
        }
        digitsSeen += 1
        index += 1
      }
    }
    if digitsSeen == 0 { return nil }
    if index < end && (bytes[index] | 0x20) == UInt8(ascii: "e") {
      index += 1
      var exponentNegative = false
      if index < end && (bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+")) {
        exponentNegative = bytes[index] == UInt8(ascii: "-")
        index += 1
      }
      var written = 0
      var exponentDigits = 0
      while index < end, bytes[index] &- 0x30 < 10 {
        if written < 100_000 { written = written * 10 + Int(bytes[index] &- 0x30) }
        exponentDigits += 1
        index += 1
      }
      if exponentDigits == 0 { return nil }
      exponent += exponentNegative ? -written : written
    }
    if index != end { return nil }
    if mantissa == 0 { return negative ? -0.0 : 0.0 }
    if !dropped && mantissa <= (1 << 53) && exponent >= -22 && exponent <= 22 {
      var value = Double(mantissa)
      if exponent < 0 {
        value /= exactPowersOfTen[-exponent]
      } else {
        value *= exactPowersOfTen[exponent]
      }
      return negative ? -value : value
    }
    // Slow path: the grammar is already checked, so the standard library sees only decimal text.
    let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
    return Double(text)
  }

  /// Reads `count` ASCII digits at `index` as an integer, or nil if any is not a digit.
  @inline(__always)
  private static func digits(
    _ bytes: UnsafeBufferPointer<UInt8>, _ index: Int, _ count: Int
  ) -> Int? {
    if index + count > bytes.count { return nil }
    var value = 0
    for offset in 0..<count {
      let digit = bytes[index + offset] &- 0x30
      if digit >= 10 { return nil }
      value = value * 10 + Int(digit)
    }
    return value
  }

  /// Days in a month of the proleptic Gregorian calendar.
  private static func daysIn(month: Int, year: Int) -> Int {
    switch month {
    case 2:
      let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
      return leap ? 29 : 28
    case 4, 6, 9, 11: return 30
    default: return 31
    }
  }

  /// Parses an ISO 8601 / XML Schema `dateTime` to seconds since 1970-01-01T00:00:00Z.
  ///
  /// Accepted: `YYYY-MM-DDThh:mm:ss`, optional fractional seconds of any length, then `Z`, an
  /// offset `±hh:mm`, `±hhmm` or `±hh`, or nothing. Our rule: a time without a zone is UTC (GPX 1.1
  /// says times are UTC). A space or lower-case `t`/`z` is accepted in place of `T`/`Z`, as some
  /// loggers write them. Second 60 (a leap second) is accepted and counts as the next second.
  ///
  /// - Parameter bytes: the value's bytes (surrounding XML whitespace is ignored).
  /// - Returns: seconds since the epoch, or nil when the text is not such a time.
  static func iso8601(_ bytes: UnsafeBufferPointer<UInt8>) -> Double? {
    var start = 0
    var end = bytes.count
    while start < end && isSpace(bytes[start]) { start += 1 }
    while end > start && isSpace(bytes[end - 1]) { end -= 1 }
    let text = UnsafeBufferPointer(rebasing: bytes[start..<end])
    // YYYY-MM-DDThh:mm:ss is 19 bytes.
    guard text.count >= 19,
      let year = digits(text, 0, 4), text[4] == UInt8(ascii: "-"),
      let month = digits(text, 5, 2), text[7] == UInt8(ascii: "-"),
      let day = digits(text, 8, 2),
      text[10] == UInt8(ascii: "T") || text[10] == UInt8(ascii: "t") || text[10] == 0x20,
      let hour = digits(text, 11, 2), text[13] == UInt8(ascii: ":"),
      let minute = digits(text, 14, 2), text[16] == UInt8(ascii: ":"),
      let second = digits(text, 17, 2)
    else { return nil }
    guard month >= 1 && month <= 12 && day >= 1 && day <= daysIn(month: month, year: year),
      hour <= 23 && minute <= 59 && second <= 60
    else { return nil }
    var index = 19
    var fraction = 0.0
    if index < text.count && (text[index] == UInt8(ascii: ".") || text[index] == UInt8(ascii: ","))
    {
      index += 1
      // Up to nanoseconds as one integer, then one correctly rounded division; further digits
      // are below a double's resolution at today's epoch seconds and are ignored.
      var numerator = 0
      var fractionDigits = 0
      let fractionStart = index
      while index < text.count, text[index] &- 0x30 < 10 {
        if fractionDigits < 9 {
          numerator = numerator * 10 + Int(text[index] &- 0x30)
          fractionDigits += 1
        }
        index += 1
      }
      if index == fractionStart { return nil }
      fraction = Double(numerator) / exactPowersOfTen[fractionDigits]
    }
    var offsetSeconds = 0
    if index < text.count {
      let zone = text[index]
      if zone == UInt8(ascii: "Z") || zone == UInt8(ascii: "z") {
        index += 1
      } else if zone == UInt8(ascii: "+") || zone == UInt8(ascii: "-") {
        guard let offsetHours = digits(text, index + 1, 2) else { return nil }
        index += 3
        var offsetMinutes = 0
        if index < text.count {
          if text[index] == UInt8(ascii: ":") { index += 1 }
          guard let minutes = digits(text, index, 2) else { return nil }
          offsetMinutes = minutes
          index += 2
        }
        guard offsetHours <= 23 && offsetMinutes <= 59 else { return nil }
        offsetSeconds =
          (offsetHours * 3600 + offsetMinutes * 60) * (zone == UInt8(ascii: "-") ? -1 : 1)
      } else {
        return nil
      }
    }
    if index != text.count { return nil }
    let days = CivilDate.days(year: year, month: month, day: day)
    let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds
    return Double(seconds) + fraction
  }
}
