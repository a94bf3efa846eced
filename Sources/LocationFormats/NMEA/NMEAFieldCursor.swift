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

  /// - Parameters:
  ///   - hasFields: false when the sentence has no comma after its address (no fields at all).
  init(base: UnsafePointer<UInt8>, start: Int, end: Int, hasFields: Bool) {
    self.base = base
    self.position = start
    self.end = end
    self.exhausted = !hasFields
  }

  /// 10^n for n in 0...22, exact in a `Double` (a switch compiles to a constant table).
  @inline(__always)
  static func powerOfTen(_ n: Int) -> Double {
    switch n {
    case 0: return 1e0
    case 1: return 1e1
    case 2: return 1e2
    case 3: return 1e3
    case 4: return 1e4
    case 5: return 1e5
    case 6: return 1e6
    case 7: return 1e7
    case 8: return 1e8
    case 9: return 1e9
    case 10: return 1e10
    case 11: return 1e11
    case 12: return 1e12
    case 13: return 1e13
    case 14: return 1e14
    case 15: return 1e15
    case 16: return 1e16
    default: return 1e17
    }
  }

  /// 10^n for n in 0...17 as an integer.
  @inline(__always)
  static func integerPowerOfTen(_ n: Int) -> UInt64 {
    var result: UInt64 = 1
    var count = n
    while count > 0 {
      result &*= 10
      count &-= 1
    }
    return result
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

  /// The next field as a fixed-point number: digits `mantissa`, `scale` of them after the point.
  /// Returns nil for an empty field; sets `bad` for anything but `[-+]digits[.digits]`.
  /// Scans and converts in one pass over the field's bytes.
  @inline(__always)
  mutating func fixedPoint() -> (mantissa: UInt64, scale: Int, negative: Bool)? {
    var index = position
    fieldStart = index
    if exhausted {
      fieldEnd = index
      return nil
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
    fieldEnd = index
    if index < end {
      position = index &+ 1
    } else {
      position = end
      exhausted = true
    }
    if fieldEnd == fieldStart { return nil }
    if invalid || digits == 0 {
      bad = true
      return nil
    }
    return (mantissa, scale, negative)
  }

  /// The next field as a `Double`, nil when empty.
  @inline(__always)
  mutating func number() -> Double? {
    guard let value = fixedPoint() else { return nil }
    // The mantissa is below 10^17, so the signed conversion (one instruction) is exact enough.
    let magnitude =
      Double(Int64(truncatingIfNeeded: value.mantissa)) / NMEAFieldCursor.powerOfTen(value.scale)
    return value.negative ? -magnitude : magnitude
  }

  /// The next field as a non-negative `Double`, nil when empty; a negative value sets `bad`.
  @inline(__always)
  mutating func unsignedNumber() -> Double? {
    guard let value = number() else { return nil }
    if value < 0 { bad = true }
    return value
  }

  /// The next field as an integer, nil when empty; a fraction or sign sets `bad`.
  @inline(__always)
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
