/// Reads the comma-separated fields of one sentence in order, straight from its bytes.
///
/// No field becomes a `String`: numbers are decoded from the bytes. Missing trailing fields read
/// as empty. A field with characters that do not belong in it sets `bad`, and the caller then
/// drops the whole sentence (never a partial fix).
struct NMEAFieldCursor {
  let base: UnsafePointer<UInt8>
  /// Start of the next field.
  var position: Int
  /// One past the last byte of the data part (the `*` of the checksum, or the end).
  let end: Int
  /// Set when a field held characters that do not belong in it.
  var bad = false
  /// True once the last field has been read (no comma followed it).
  var exhausted: Bool
  /// The smallest number of decimals of the angles read so far (their precision).
  var angleDecimals = Int.max
  /// Start and end of the field read last.
  var fieldStart = 0
  var fieldEnd = 0
  /// Set by `plainInteger()` when a field was not plain digits.
  var irregular = false

  /// One past the last byte that may be read from `base` (the end of the line): eight-byte loads
  /// stay below it.
  let readable: Int

  /// - Parameters:
  ///   - readable: how many bytes from `base` may be read (at least `end`).
  ///   - hasFields: false when the sentence has no comma after its address (no fields at all).
  init(base: UnsafePointer<UInt8>, start: Int, end: Int, readable: Int, hasFields: Bool) {
    self.base = base
    self.position = start
    self.end = end
    self.readable = readable
    self.exhausted = !hasFields
  }

  /// 10^n for n in 0...17, exact in a `Double`.
  static let powersOfTen: [Double] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17,
  ]

  /// 10^n for n in 0...19 as an integer.
  static let integerPowersOfTen: [UInt64] = [
    1, 10, 100, 1000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000, 1_000_000_000,
    10_000_000_000, 100_000_000_000, 1_000_000_000_000, 10_000_000_000_000,
    100_000_000_000_000, 1_000_000_000_000_000, 10_000_000_000_000_000,
    100_000_000_000_000_000, 1_000_000_000_000_000_000, 10_000_000_000_000_000_000,
  ]

  /// 10^n for n in 0...17, exact in a `Double` (a table look-up: no branch to mispredict).
  @inline(__always)
  static func powerOfTen(_ n: Int) -> Double { powersOfTen[min(n, 17)] }

  /// 10^n for n in 0...17 as an integer.
  @inline(__always)
  static func integerPowerOfTen(_ n: Int) -> UInt64 { integerPowersOfTen[n] }

  /// Eight bytes from `pointer`, little-endian as x86-64 and AArch64 load them, whatever its
  /// alignment: one load.
  @inline(__always)
  static func load8(_ pointer: UnsafePointer<UInt8>) -> UInt64 {
    UInt64(littleEndian: UnsafeRawPointer(pointer).loadUnaligned(as: UInt64.self))
  }

  /// The run of ASCII digits at the start of eight bytes loaded little-endian: how many of the
  /// bytes, from the first, are digits (0...8), and, when fewer than eight, their value.
  ///
  /// Eight bytes at once, without a branch per digit: XOR with `0` makes digit bytes exactly the
  /// bytes 0...9; adding 0x76 sets the top bit of every byte of 10 or more (a carry out of a byte
  /// only starts at a byte that is already flagged, so it can only disturb later bytes, past the
  /// first non-digit). The digits are then shifted to the top and combined in pairs, fours and
  /// eights by three multiplications (the eight-digit conversion of W. Muła and D. Lemire's
  /// "SIMD within a register" number parsing).
  @inline(__always)
  static func digitRun(_ word: UInt64) -> (count: Int, value: UInt64) {
    let values = word ^ 0x3030_3030_3030_3030
    let flags = ((values &+ 0x7676_7676_7676_7676) | values) & 0x8080_8080_8080_8080
    let count = flags.trailingZeroBitCount &>> 3
    // The `count` digits move to the top bytes, zeros (leading zeros of the number) below them;
    // two shifts so that a count of 0 shifts everything out.
    var digits = (values &<< 8) &<< UInt64(truncatingIfNeeded: 56 &- 8 &* count)
    digits = (digits &* 10 &+ (digits &>> 8)) & 0x00FF_00FF_00FF_00FF
    digits = (digits &* 100 &+ (digits &>> 16)) & 0x0000_FFFF_0000_FFFF
    digits = (digits &* 10_000 &+ (digits &>> 32)) & 0xFFFF_FFFF
    return (count, digits)
  }

  /// Moves to the next field; afterwards `fieldStart..<fieldEnd` is its content.
  @inline(__always)
  mutating func advance() {
    var index = position
    fieldStart = index
    if exhausted {
      fieldEnd = index
      return
    }
    while index < end && base[index] != UInt8(ascii: ",") { index &+= 1 }
    endField(at: index)
  }

  /// Ends the field read last at `index` (a comma, or the end of the data part) and moves past it.
  @inline(__always)
  mutating func endField(at index: Int) {
    fieldEnd = index
    if index < end {
      position = index &+ 1
    } else {
      position = end
      exhausted = true
    }
  }

  /// Skips `count` fields.
  @inline(__always)
  mutating func skip(_ count: Int) {
    for _ in 0..<count { advance() }
  }

  /// True when the field read last is empty.
  var isEmpty: Bool { fieldStart == fieldEnd }

  /// The next field's first byte, or 0 when it is empty. More than one byte sets `bad`.
  @inline(__always)
  mutating func character() -> UInt8 {
    advance()
    if fieldStart == fieldEnd { return 0 }
    if fieldEnd &- fieldStart != 1 { bad = true }
    return base[fieldStart]
  }

  /// The next field as a hexadecimal number of one to eight digits (`0`-`9`, `A`-`F`, `a`-`f`),
  /// nil when empty; anything else sets `bad`.
  mutating func hexadecimal() -> UInt32? {
    advance()
    let count = fieldEnd &- fieldStart
    if count == 0 { return nil }
    guard count <= 8 else {
      bad = true
      return nil
    }
    var value: UInt32 = 0
    for index in fieldStart..<fieldEnd {
      let digit = NMEADecoder.hexValue(base[index])
      guard digit < 16 else {
        bad = true
        return nil
      }
      value = value &<< 4 | UInt32(digit)
    }
    return value
  }

  /// The next field as a fixed-point number: digits `mantissa`, `scale` of them after the point.
  /// Returns nil for an empty field; sets `bad` for anything but `[-+]digits[.digits]`.
  /// Scans and converts in one pass over the field's bytes.
  @inline(always)
  mutating func fixedPoint() -> (mantissa: UInt64, scale: Int, negative: Bool)? {
    var index = position
    fieldStart = index
    if exhausted {
      fieldEnd = index
      return nil
    }
    // Usual fields (a sign, fewer than eight integer and eight fraction digits, then a comma or
    // the end) are read eight bytes at a time; anything else takes the byte loop below.
    if index &+ 9 <= readable {
      var word = NMEAFieldCursor.load8(base + index)
      let first = UInt8(truncatingIfNeeded: word)
      let negative = first == UInt8(ascii: "-")
      var start = index
      if negative || first == UInt8(ascii: "+") {
        start &+= 1
        word = NMEAFieldCursor.load8(base + start)
      }
      let (count, whole) = NMEAFieldCursor.digitRun(word)
      // The byte after the digits (meaningless when all eight are digits).
      var stop = UInt8(truncatingIfNeeded: word &>> UInt64(truncatingIfNeeded: count &* 8))
      var next = start &+ count
      var mantissa = whole
      var scale = 0
      var usual = count < 8
      if usual && stop == UInt8(ascii: ".") {
        next &+= 1
        if next &+ 8 <= readable {
          let fractionWord = NMEAFieldCursor.load8(base + next)
          let (fractionCount, fraction) = NMEAFieldCursor.digitRun(fractionWord)
          usual = fractionCount < 8
          mantissa = whole &* NMEAFieldCursor.integerPowerOfTen(fractionCount) &+ fraction
          scale = fractionCount
          next &+= fractionCount
          stop = UInt8(
            truncatingIfNeeded: fractionWord &>> UInt64(truncatingIfNeeded: fractionCount &* 8))
        } else {
          usual = false
        }
      }
      // The byte at `end` is the `*`, a trimmed control byte or past the line, never a digit, a
      // point or a comma: the digits stop at `end` at the latest, and a comma is before it.
      if usual && (stop == UInt8(ascii: ",") || next == end) {
        endField(at: next)
        if next == fieldStart { return nil }
        if count &+ scale == 0 {
          bad = true
          return nil
        }
        return (mantissa, scale, negative)
      }
    }
    var negative = false
    if index < end {
      let first = base[index]
      if first == UInt8(ascii: "-") {
        negative = true
        index &+= 1
      } else if first == UInt8(ascii: "+") {
        index &+= 1
      }
    }
    // Integer digits, then fraction digits, each in a tight loop; anything else before the
    // comma makes the field invalid.
    var mantissa: UInt64 = 0
    var scale = 0
    let integerStart = index
    while index < end {
      let digit = base[index] &- UInt8(ascii: "0")
      if digit >= 10 { break }
      mantissa = mantissa &* 10 &+ UInt64(digit)
      index &+= 1
    }
    let integerDigits = index &- integerStart
    var invalid = integerDigits > 17  // longer than any NMEA field: garbage
    var fractionDigits = 0
    if index < end && base[index] == UInt8(ascii: ".") {
      index &+= 1
      let fractionStart = index
      // Digits past 17 significant ones are below any precision that matters: ignored.
      let room = 17 &- integerDigits
      while index < end {
        let digit = base[index] &- UInt8(ascii: "0")
        if digit >= 10 { break }
        if scale < room {
          mantissa = mantissa &* 10 &+ UInt64(digit)
          scale &+= 1
        }
        index &+= 1
      }
      fractionDigits = index &- fractionStart
    }
    if index < end && base[index] != UInt8(ascii: ",") {
      invalid = true
      while index < end && base[index] != UInt8(ascii: ",") { index &+= 1 }
    }
    let digits = integerDigits &+ fractionDigits
    endField(at: index)
    if fieldEnd == fieldStart { return nil }
    if invalid || digits == 0 {
      bad = true
      return nil
    }
    return (mantissa, scale, negative)
  }

  /// The next field as a `Double`, nil when empty.
  @inline(always)
  mutating func number() -> Double? {
    guard let value = fixedPoint() else { return nil }
    // The mantissa is below 10^17, so the signed conversion (one instruction) is exact enough.
    // Integers (most fields of GSV and GSA) skip the division, whose result would be the same.
    var magnitude = Double(Int64(truncatingIfNeeded: value.mantissa))
    if value.scale != 0 { magnitude /= NMEAFieldCursor.powerOfTen(value.scale) }
    return value.negative ? -magnitude : magnitude
  }

  /// The next field as a non-negative `Double`, nil when empty; a negative value sets `bad`.
  @inline(always)
  mutating func unsignedNumber() -> Double? {
    guard let value = number() else { return nil }
    if value < 0 { bad = true }
    return value
  }

  /// The next field as an integer, nil when empty; a fraction or sign sets `bad`.
  @inline(always)
  mutating func integer() -> Int? {
    guard let value = fixedPoint() else { return nil }
    if value.scale != 0 || value.negative || value.mantissa > 1_000_000_000 {
      // "07" is fine, "7.0" is not an integer field; anything huge is garbage.
      if value.mantissa % NMEAFieldCursor.integerPowerOfTen(value.scale) != 0
        || value.negative || value.mantissa > 1_000_000_000
      {
        bad = true
        return nil
      }
      return Int(value.mantissa / NMEAFieldCursor.integerPowerOfTen(value.scale))
    }
    return Int(value.mantissa)
  }

  /// The next field when it is empty or one to nine digits and nothing else (as GSV's satellite
  /// fields nearly always are), read in one byte loop without the checks of `fixedPoint()`; nil
  /// when empty. Any other field (a sign, a point, another byte, ten digits or more) sets
  /// `irregular`, and the value means nothing: the caller then reads the same fields again from a
  /// copy of the cursor made before, with `integer()` and `number()`, which decide. For a plain
  /// field both give the same value as this.
  @inline(__always)
  mutating func plainInteger() -> Int? {
    var index = position
    fieldStart = index
    var value = 0
    while index < end {
      let byte = base[index]
      if byte == UInt8(ascii: ",") { break }
      let digit = byte &- UInt8(ascii: "0")
      if digit >= 10 {
        irregular = true
        break
      }
      value = value &* 10 &+ Int(digit)
      index &+= 1
    }
    let digits = index &- fieldStart
    if digits > 9 { irregular = true }
    endField(at: index)
    return digits == 0 ? nil : value
  }

  /// The next field as a UTC time of day `hhmmss[.s...]`, in microseconds since midnight.
  /// Returns nil when empty; sets `bad` for an hour past 23, minutes past 59, seconds past 60.
  @inline(__always)
  mutating func timeOfDay() -> Int64? {
    guard let value = fixedPoint() else { return nil }
    if value.negative {
      bad = true
      return nil
    }
    let unit = NMEAFieldCursor.integerPowerOfTen(value.scale)
    let whole = value.mantissa / unit
    let fraction = value.mantissa % unit
    let hours = whole / 10_000
    let minutes = (whole / 100) % 100
    let seconds = whole % 100
    if hours > 23 || minutes > 59 || seconds > 60 {
      bad = true
      return nil
    }
    // Microseconds of the fraction, rounded to the nearest (the scale is at most 17).
    var micros: UInt64
    if value.scale <= 6 {
      micros = fraction &* NMEAFieldCursor.integerPowerOfTen(6 &- value.scale)
    } else {
      let divisor = NMEAFieldCursor.integerPowerOfTen(value.scale &- 6)
      micros = (fraction &+ divisor / 2) / divisor
    }
    if micros > 999_999 { micros = 999_999 }
    let total = ((hours &* 60 &+ minutes) &* 60 &+ seconds) &* 1_000_000 &+ micros
    return Int64(total)
  }

  /// The next two fields as an angle `[d]ddmm.mmmm` and its hemisphere letter, in degrees.
  ///
  /// - Parameters:
  ///   - positive: the letter for a positive angle (`N` or `E`).
  ///   - negative: the letter for a negative angle (`S` or `W`).
  ///   - limit: the largest magnitude allowed (90 or 180).
  /// - Returns: nil when both fields are empty; sets `bad` for minutes of 60 or more, an angle past
  ///   the limit, a missing or wrong hemisphere.
  @inline(__always)
  mutating func angle(positive: UInt8, negative: UInt8, limit: UInt64) -> Double? {
    let value = fixedPoint()
    let hemisphere = character()
    guard let value else {
      if hemisphere != 0 && hemisphere != positive && hemisphere != negative { bad = true }
      return nil
    }
    if value.negative || value.scale > 15 {
      bad = true
      return nil
    }
    angleDecimals = min(angleDecimals, value.scale)
    let unit = NMEAFieldCursor.integerPowerOfTen(value.scale)
    let degreeUnit = unit &* 100
    let degrees = value.mantissa / degreeUnit
    let minuteMantissa = value.mantissa % degreeUnit
    if minuteMantissa >= 60 &* unit || degrees > limit || (degrees == limit && minuteMantissa != 0)
    {
      bad = true
      return nil
    }
    // Minutes as an exact quotient of integers, then degrees (NMEA 0183: ddmm.mmmm).
    let minutes =
      Double(Int64(truncatingIfNeeded: minuteMantissa)) / NMEAFieldCursor.powerOfTen(value.scale)
    let result = Double(degrees) + minutes / 60
    if hemisphere == positive { return result }
    if hemisphere == negative { return -result }
    bad = true
    return nil
  }
}
