import LocationFormats
import LocationModel

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

extension DaemonProtocol {
  /// A `locations` line in exactly the shape `encodeLocations(client:fixesJSON:)` writes (its
  /// members in that order, each fix's members in `Fix`'s wire order, no whitespace), read
  /// straight from its bytes without building a JSON tree first: an app reads one such line per
  /// fix, and the tree cost most of the reading.
  ///
  /// Nil for every other line, and for a `locations` line with anything this reader does not take
  /// as it is: a `source` with an escape or a byte outside printable ASCII, a number written as a
  /// string (`"NaN"`), an unknown quality, an integer that is not one, members in another order
  /// or with whitespace. `decode(line:limit:)` then reads the line the general way. Where this
  /// reader answers, it gives what the general way gives: numbers by the same RFC 8259 grammar
  /// and the same conversion as `JSONParser`, integers by `Int.integer(_:)`.
  /// - Parameter bytes: the line, without its line end.
  /// - Returns: the message, or nil.
  static func fastLocations(_ bytes: UnsafeBufferPointer<UInt8>) -> DaemonMessage? {
    fastLocationsLine(bytes).map { .locations(client: $0.client, $0.fixes) }
  }

  /// A `locations` line in the shape the daemon writes it, read without a JSON tree (see
  /// ``fastLocations(_:)``): the manager's number and the fixes, without the message around them,
  /// for the app's reader to hand to the manager as they are; nil for any other line (which
  /// `decode(line:limit:)` then reads).
  /// - Parameter line: the line, without its line end.
  /// - Returns: the manager's number and the fixes, or nil.
  package static func decodeLocationsLine(_ line: [UInt8]) -> (client: Int, fixes: [Fix])? {
    line.withUnsafeBufferPointer { fastLocationsLine($0) }
  }

  private static func fastLocationsLine(_ bytes: UnsafeBufferPointer<UInt8>) -> (
    client: Int, fixes: [Fix]
  )? {
    var reader = LocationsLineReader(bytes: bytes)
    guard reader.literal(#"{"type":"locations","client":"#), let client = reader.integer(),
      reader.literal(#","locations":["#)
    else { return nil }
    var fixes: [Fix] = []
    if !reader.literal("]") {
      while true {
        guard let fix = reader.fix() else { return nil }
        fixes.append(fix)
        if reader.literal(",") { continue }
        guard reader.literal("]") else { return nil }
        break
      }
    }
    guard reader.literal("}"), reader.index == bytes.count else { return nil }
    return (client, fixes)
  }
}

/// The reader behind `DaemonProtocol.fastLocations`: a position in the line and the few shapes it
/// takes. Every method returns nil (or false) at the first byte it does not expect.
private struct LocationsLineReader {
  let bytes: UnsafeBufferPointer<UInt8>
  var index = 0

  /// Moves past `text` when the line has it here.
  mutating func literal(_ text: StaticString) -> Bool {
    let count = text.utf8CodeUnitCount
    guard let base = bytes.baseAddress, index + count <= bytes.count,
      memcmp(base + index, text.utf8Start, count) == 0
    else { return false }
    index += count
    return true
  }

  private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

  private mutating func skipDigits() {
    while let byte = current, byte &- UInt8(ascii: "0") < 10 { index += 1 }
  }

  /// A number by RFC 8259's grammar, converted to the nearest `Double` as `JSONParser` converts
  /// it (`ByteScalars.decimal`: Clinger's fast path, else the standard library).
  mutating func number() -> Double? {
    let start = index
    if current == UInt8(ascii: "-") { index += 1 }
    guard let first = current, first &- UInt8(ascii: "0") < 10 else { return nil }
    if first == UInt8(ascii: "0") { index += 1 } else { skipDigits() }
    if current == UInt8(ascii: ".") {
      index += 1
      guard let digit = current, digit &- UInt8(ascii: "0") < 10 else { return nil }
      skipDigits()
    }
    if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
      index += 1
      if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
      guard let digit = current, digit &- UInt8(ascii: "0") < 10 else { return nil }
      skipDigits()
    }
    // Correctly rounded, as `JSONParser`'s `Double(String)`, without a string per number.
    return ByteScalars.decimal(
      UnsafeBufferPointer(rebasing: bytes[start..<index]), readable: bytes.count - start)
  }

  /// A number that is an integer, as `Int`'s wire decoding takes it.
  mutating func integer() -> Int? {
    number().flatMap(Int.integer)
  }

  /// `null`, or what `read` reads; nil (outer) when neither is there.
  mutating func orNull<T>(_ read: (inout Self) -> T?) -> T?? {
    if literal("null") { return .some(nil) }
    guard let value = read(&self) else { return nil }
    return .some(value)
  }

  /// A string of printable ASCII without escapes, up to its closing quote (the opening one read).
  mutating func plainString() -> String? {
    let start = index
    while let byte = current, byte != UInt8(ascii: "\"") {
      guard byte >= 0x20, byte < 0x7F, byte != UInt8(ascii: "\\") else { return nil }
      index += 1
    }
    guard current == UInt8(ascii: "\"") else { return nil }
    let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
    index += 1
    return text
  }

  /// Each quality's wire name, as bytes with their closing quote.
  private static let qualities = FixQuality.allCases.map { ($0, Array($0.wireName.utf8) + [34]) }

  /// A quality's wire name and its closing quote (the opening one read), compared as bytes: no
  /// string is made for it.
  mutating func quality() -> FixQuality? {
    guard let base = bytes.baseAddress else { return nil }
    for (quality, name) in Self.qualities
    where index + name.count <= bytes.count && memcmp(base + index, name, name.count) == 0 {
      index += name.count
      return quality
    }
    return nil
  }

  /// One fix, its members in `Fix.wire`'s order.
  mutating func fix() -> Fix? {
    guard literal(#"{"latitude":"#), let latitude = number(),
      literal(#","longitude":"#), let longitude = number(),
      literal(#","altitude":"#), let altitude = orNull({ $0.number() }),
      literal(#","ellipsoidalAltitude":"#), let ellipsoidalAltitude = orNull({ $0.number() }),
      literal(#","horizontalAccuracy":"#), let horizontalAccuracy = number(),
      literal(#","verticalAccuracy":"#), let verticalAccuracy = number(),
      literal(#","speed":"#), let speed = number(),
      literal(#","speedAccuracy":"#), let speedAccuracy = number(),
      literal(#","course":"#), let course = number(),
      literal(#","courseAccuracy":"#), let courseAccuracy = number(),
      literal(#","time":"#), let time = number(),
      literal(#","quality":""#), let quality = quality(),
      literal(#","satellitesUsed":"#), let satellitesUsed = orNull({ $0.integer() }),
      literal(#","floor":"#), let floor = orNull({ $0.integer() }),
      literal(#","isSimulated":"#)
    else { return nil }
    let isSimulated: Bool
    if literal("true") {
      isSimulated = true
    } else if literal("false") {
      isSimulated = false
    } else {
      return nil
    }
    guard literal(#","source":""#), let source = plainString(), literal("}") else { return nil }
    return Fix(
      latitude: latitude, longitude: longitude, altitude: altitude,
      ellipsoidalAltitude: ellipsoidalAltitude, horizontalAccuracy: horizontalAccuracy,
      verticalAccuracy: verticalAccuracy, speed: speed, speedAccuracy: speedAccuracy,
      course: course, courseAccuracy: courseAccuracy, time: time, quality: quality,
      satellitesUsed: satellitesUsed, floor: floor, isSimulated: isSimulated, source: source)
  }
}
