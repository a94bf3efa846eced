import Geodesy

/// Hand-written scalar parsers that read straight from bytes: decimal numbers and ISO 8601 times.
///
/// They exist because the GPX decoder sees every value as a byte range inside libxml2's buffer;
/// building a `String` for each one would cost more than the XML parse itself. The daemon
/// client's reader of `locations` lines converts its numbers with `decimal` too.
package enum ByteScalars {
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
    decimal(bytes, readable: bytes.count)
  }

  /// `decimal(_:)`, allowed to load up to `readable` bytes from the value's start (at least its
  /// count): then its digits are read eight at a time.
  ///
  /// The eight-byte reader is inlined where this is called (a GPX point's coordinates and
  /// values); the byte loops that decide every other shape are one call away.
  @inline(__always)
  package static func decimal(_ bytes: UnsafeBufferPointer<UInt8>, readable: Int) -> Double? {
    if let value = wideDecimal(bytes, readable: readable) { return value }
    return unusualDecimal(bytes)
  }

  /// `decimal(_:readable:)` for the shapes its eight-byte reader leaves.
  @inline(never)
  private static func unusualDecimal(_ bytes: UnsafeBufferPointer<UInt8>) -> Double? {
    if let value = plainDecimal(bytes) { return value }
    return anyDecimal(bytes)
  }

  /// `plainDecimal` eight bytes at a time: the integer digits and the fraction digits are each
  /// one run of fewer than eight digits, found and converted by `NMEAFieldCursor.digitRun` (the
  /// SWAR conversion of Muła and Lemire), which loads bytes past the value up to `readable` and
  /// reads those as 0 (`load8(_:within:)`). Nil when a run is longer, or any other shape: the byte
  /// loops decide.
  @inline(__always)
  private static func wideDecimal(_ bytes: UnsafeBufferPointer<UInt8>, readable: Int) -> Double? {
    guard let base = bytes.baseAddress, bytes.count > 0 else { return nil }
    let end = bytes.count
    let negative = base[0] == UInt8(ascii: "-")
    var index = negative ? 1 : 0
    guard index &+ 8 <= readable else { return nil }
    let (count, whole) = NMEAFieldCursor.digitRun(load8(base + index, within: end &- index))
    index &+= count
    guard count < 8, index <= end else { return nil }
    var mantissa = whole
    var digits = count
    var fractionDigits = 0
    if index < end {
      guard base[index] == UInt8(ascii: "."), index &+ 9 <= readable else { return nil }
      index &+= 1
      let (fraction, value) = NMEAFieldCursor.digitRun(load8(base + index, within: end &- index))
      index &+= fraction
      guard fraction < 8 else { return nil }
      mantissa = mantissa &* NMEAFieldCursor.integerPowerOfTen(fraction) &+ value
      fractionDigits = fraction
      digits &+= fraction
    }
    // 14 digits at most: below 2^53, exact in a Double (and converted as a signed integer, one
    // instruction).
    guard index == end, digits >= 1 else { return nil }
    let value = Double(Int64(truncatingIfNeeded: mantissa)) / exactPowersOfTen[fractionDigits]
    return negative ? -value : value
  }

  /// Eight bytes from `pointer` (which may be read), the bytes from `remaining` on (past the
  /// value's end) read as 0, which is no digit: a run of digits stops at the value's end whatever
  /// the buffer holds after it (the digits of an earlier, longer value, say).
  @inline(__always)
  private static func load8(_ pointer: UnsafePointer<UInt8>, within remaining: Int) -> UInt64 {
    let word = NMEAFieldCursor.load8(pointer)
    if remaining >= 8 { return word }
    return word & ((1 &<< UInt64(truncatingIfNeeded: remaining &* 8)) &- 1)
  }

  /// The usual shape of a GPX number, `[-]digits[.digits]` with 1 to 19 digits in all whose
  /// integer is at most 2^53 and no whitespace: one loop per part without a branch per digit,
  /// then Clinger's fast path as in `anyDecimal`. Nil when the bytes have another shape (they may
  /// still be a number: `anyDecimal` decides).
  @inline(__always)
  private static func plainDecimal(_ bytes: UnsafeBufferPointer<UInt8>) -> Double? {
    guard let base = bytes.baseAddress, bytes.count > 0 else { return nil }
    let end = bytes.count
    let negative = base[0] == UInt8(ascii: "-")
    var index = negative ? 1 : 0
    var mantissa: UInt64 = 0
    // The digits from `index` on, appended to `mantissa`; how many there were.
    func digitRun() -> Int {
      let start = index
      while index < end {
        let digit = base[index] &- 0x30
        if digit >= 10 { break }
        mantissa = mantissa &* 10 &+ UInt64(digit)
        index &+= 1
      }
      return index &- start
    }
    var digits = digitRun()
    var fractionDigits = 0
    if index < end && base[index] == UInt8(ascii: ".") {
      index &+= 1
      fractionDigits = digitRun()
      digits &+= fractionDigits
    }
    // At most 19 digits cannot overflow 64 bits.
    guard index == end, digits >= 1, digits <= 19, mantissa <= 1 << 53 else { return nil }
    let value = Double(mantissa) / exactPowersOfTen[fractionDigits]
    return negative ? -value : value
  }

  /// `decimal(_:)` for every shape: surrounding whitespace, a sign, leading zeros, more than 19
  /// digits, an exponent.
  private static func anyDecimal(_ bytes: UnsafeBufferPointer<UInt8>) -> Double? {
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
  /// The usual shape's reader is inlined where this is called; every other shape is one call away.
  ///
  /// - Parameter bytes: the value's bytes (surrounding XML whitespace is ignored).
  /// - Returns: seconds since the epoch, or nil when the text is not such a time.
  @inline(__always)
  static func iso8601(_ bytes: UnsafeBufferPointer<UInt8>) -> Double? {
    if let value = plainUTC(bytes) { return value }
    return anyISO8601(bytes)
  }

  /// The usual shape of a GPX time, `YYYY-MM-DDThh:mm:ss[.fraction]Z` with at most nine digits
  /// of fraction and no whitespace: its fourteen digits and five separators checked together,
  /// with one branch, and the value computed as `anyISO8601` computes it. Nil when the bytes have
  /// another shape or an impossible date (`anyISO8601` decides).
  @inline(__always)
  private static func plainUTC(_ bytes: UnsafeBufferPointer<UInt8>) -> Double? {
    guard let text = bytes.baseAddress, bytes.count >= 20, bytes.count <= 30,
      text[bytes.count &- 1] == UInt8(ascii: "Z")
    else { return nil }
    @inline(__always) func digit(_ index: Int) -> UInt8 { text[index] &- 0x30 }
    // A byte is a digit when it and it plus 6 are both below 16.
    @inline(__always) func flag(_ value: UInt8) -> UInt8 { value | (value &+ 6) }
    let (y0, y1, y2, y3) = (digit(0), digit(1), digit(2), digit(3))
    let (m0, m1, d0, d1) = (digit(5), digit(6), digit(8), digit(9))
    let (h0, h1, n0, n1, s0, s1) = (
      digit(11), digit(12), digit(14), digit(15), digit(17), digit(18)
    )
    let flags =
      flag(y0) | flag(y1) | flag(y2) | flag(y3) | flag(m0) | flag(m1) | flag(d0) | flag(d1)
      | flag(h0) | flag(h1) | flag(n0) | flag(n1) | flag(s0) | flag(s1)
    let separators =
      (text[4] ^ UInt8(ascii: "-")) | (text[7] ^ UInt8(ascii: "-")) | (text[10] ^ UInt8(ascii: "T"))
      | (text[13] ^ UInt8(ascii: ":")) | (text[16] ^ UInt8(ascii: ":"))
    guard flags & 0xF0 == 0, separators == 0 else { return nil }
    let year = Int(y0) * 1000 + Int(y1) * 100 + Int(y2) * 10 + Int(y3)
    let month = Int(m0) * 10 + Int(m1)
    let day = Int(d0) * 10 + Int(d1)
    let hour = Int(h0) * 10 + Int(h1)
    let minute = Int(n0) * 10 + Int(n1)
    let second = Int(s0) * 10 + Int(s1)
    guard month >= 1 && month <= 12 && day >= 1 && day <= daysIn(month: month, year: year),
      hour <= 23 && minute <= 59 && second <= 60
    else { return nil }
    var fraction = 0.0
    let zone = bytes.count &- 1
    if zone > 19 {
      guard text[19] == UInt8(ascii: "."), zone > 20 else { return nil }
      var numerator = 0
      for index in 20..<zone {
        let value = digit(index)
        guard value < 10 else { return nil }
        numerator = numerator * 10 + Int(value)
      }
      fraction = Double(numerator) / exactPowersOfTen[zone &- 20]
    }
    let days = CivilDate.days(year: year, month: month, day: day)
    let seconds = days * 86_400 + hour * 3600 + minute * 60 + second
    return Double(seconds) + fraction
  }

  /// `iso8601(_:)` for every shape it accepts.
  @inline(never)
  private static func anyISO8601(_ bytes: UnsafeBufferPointer<UInt8>) -> Double? {
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
