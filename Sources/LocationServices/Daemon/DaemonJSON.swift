/// A JSON value as the daemon protocol reads it (RFC 8259).
///
/// The protocol has its own small parser rather than Foundation's, so that its limits are ours
/// and documented: nesting at most ``DaemonJSON/maximumDepth`` levels, strings must be valid
/// UTF-8 (escapes included: a lone surrogate is an error), an object with a repeated key is an
/// error, and numbers are IEEE doubles (integers are exact up to 2^53).
public enum DaemonJSON: Sendable, Equatable {
  /// `null`.
  case null
  /// `true` or `false`.
  case bool(Bool)
  /// A number.
  case number(Double)
  /// A string.
  case string(String)
  /// An array.
  case array([DaemonJSON])
  /// An object (member order is not kept).
  case object([String: DaemonJSON])

  /// The deepest nesting of arrays and objects accepted (the protocol needs four).
  public static let maximumDepth = 32

  /// Parses one JSON text (surrounding whitespace allowed, nothing else after the value).
  ///
  /// - Parameter bytes: UTF-8 bytes.
  /// - Returns: The value.
  /// - Throws: ``DaemonProtocolError`` with code `malformed`, naming the byte offset.
  public static func parse(_ bytes: [UInt8]) throws(DaemonProtocolError) -> DaemonJSON {
    var parser = JSONParser(bytes: bytes)
    parser.skipWhitespace()
    let value = try parser.value(depth: 0)
    parser.skipWhitespace()
    guard parser.index == bytes.count else {
      throw parser.failure("unexpected data after the value")
    }
    return value
  }
}

/// A recursive-descent JSON parser over a byte array; never traps on any input.
private struct JSONParser {
  let bytes: [UInt8]
  var index = 0

  init(bytes: [UInt8]) { self.bytes = bytes }

  func failure(_ what: String) -> DaemonProtocolError {
    DaemonProtocolError(code: .malformed, message: "malformed JSON at byte \(index): \(what)")
  }

  mutating func skipWhitespace() {
    while index < bytes.count {
      switch bytes[index] {
      case 0x20, 0x09, 0x0A, 0x0D: index += 1
      default: return
      }
    }
  }

  mutating func value(depth: Int) throws(DaemonProtocolError) -> DaemonJSON {
    guard index < bytes.count else { throw failure("unexpected end of input") }
    switch bytes[index] {
    case UInt8(ascii: "{"):
      guard depth < DaemonJSON.maximumDepth else { throw failure("nested too deeply") }
      return try object(depth: depth + 1)
    case UInt8(ascii: "["):
      guard depth < DaemonJSON.maximumDepth else { throw failure("nested too deeply") }
      return try array(depth: depth + 1)
    case UInt8(ascii: "\""):
      return .string(try string())
    case UInt8(ascii: "t"):
      try literal("true")
      return .bool(true)
    case UInt8(ascii: "f"):
      try literal("false")
      return .bool(false)
    case UInt8(ascii: "n"):
      try literal("null")
      return .null
    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
      return .number(try number())
    default:
      throw failure("unexpected character")
    }
  }

  mutating func literal(_ word: String) throws(DaemonProtocolError) {
    let expected = Array(word.utf8)
    guard bytes.count - index >= expected.count else { throw failure("unexpected end of input") }
    guard bytes[index..<index + expected.count].elementsEqual(expected) else {
      throw failure("unknown literal")
    }
    index += expected.count
  }

  mutating func object(depth: Int) throws(DaemonProtocolError) -> DaemonJSON {
    index += 1
    var members: [String: DaemonJSON] = [:]
    skipWhitespace()
    if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
      index += 1
      return .object(members)
    }
    while true {
      skipWhitespace()
      guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
        throw failure("expected a member name")
      }
      let key = try string()
      skipWhitespace()
      guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
        throw failure("expected ':'")
      }
      index += 1
      skipWhitespace()
      let member = try value(depth: depth)
      guard members.updateValue(member, forKey: key) == nil else {
        throw failure("member \"\(DaemonProtocolError.clip(key))\" appears twice")
      }
      skipWhitespace()
      guard index < bytes.count else { throw failure("unexpected end of input") }
      if bytes[index] == UInt8(ascii: ",") {
        index += 1
        continue
      }
      guard bytes[index] == UInt8(ascii: "}") else { throw failure("expected ',' or '}'") }
      index += 1
      return .object(members)
    }
  }

  mutating func array(depth: Int) throws(DaemonProtocolError) -> DaemonJSON {
    index += 1
    var elements: [DaemonJSON] = []
    skipWhitespace()
    if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
      index += 1
      return .array(elements)
    }
    while true {
      skipWhitespace()
      elements.append(try value(depth: depth))
      skipWhitespace()
      guard index < bytes.count else { throw failure("unexpected end of input") }
      if bytes[index] == UInt8(ascii: ",") {
        index += 1
        continue
      }
      guard bytes[index] == UInt8(ascii: "]") else { throw failure("expected ',' or ']'") }
      index += 1
      return .array(elements)
    }
  }

  /// A number: RFC 8259 section 6 grammar checked here, the value converted by the standard
  /// library's correctly rounded parser.
  mutating func number() throws(DaemonProtocolError) -> Double {
    let start = index
    if bytes[index] == UInt8(ascii: "-") { index += 1 }
    guard index < bytes.count, isDigit(bytes[index]) else { throw failure("expected a digit") }
    if bytes[index] == UInt8(ascii: "0") {
      index += 1
    } else {
      while index < bytes.count, isDigit(bytes[index]) { index += 1 }
    }
    if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
      index += 1
      guard index < bytes.count, isDigit(bytes[index]) else { throw failure("expected a digit") }
      while index < bytes.count, isDigit(bytes[index]) { index += 1 }
    }
    if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
      index += 1
      if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-")
      {
        index += 1
      }
      guard index < bytes.count, isDigit(bytes[index]) else { throw failure("expected a digit") }
      while index < bytes.count, isDigit(bytes[index]) { index += 1 }
    }
    let text = String(decoding: bytes[start..<index], as: UTF8.self)
    guard let value = Double(text) else { throw failure("number out of range") }
    return value
  }

  func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

  mutating func string() throws(DaemonProtocolError) -> String {
    index += 1
    var scalars: [UInt8] = []
    var runStart = index
    while true {
      guard index < bytes.count else { throw failure("unterminated string") }
      let byte = bytes[index]
      if byte == UInt8(ascii: "\"") {
        scalars.append(contentsOf: bytes[runStart..<index])
        index += 1
        break
      }
      if byte < 0x20 { throw failure("control character in a string") }
      if byte != UInt8(ascii: "\\") {
        index += 1
        continue
      }
      scalars.append(contentsOf: bytes[runStart..<index])
      index += 1
      guard index < bytes.count else { throw failure("unterminated string") }
      let escape = bytes[index]
      index += 1
      switch escape {
      case UInt8(ascii: "\""): scalars.append(UInt8(ascii: "\""))
      case UInt8(ascii: "\\"): scalars.append(UInt8(ascii: "\\"))
      case UInt8(ascii: "/"): scalars.append(UInt8(ascii: "/"))
      case UInt8(ascii: "b"): scalars.append(0x08)
      case UInt8(ascii: "f"): scalars.append(0x0C)
      case UInt8(ascii: "n"): scalars.append(0x0A)
      case UInt8(ascii: "r"): scalars.append(0x0D)
      case UInt8(ascii: "t"): scalars.append(0x09)
      case UInt8(ascii: "u"):
        var code = try hex4()
        if (0xD800...0xDBFF).contains(code) {
          guard bytes.count - index >= 2, bytes[index] == UInt8(ascii: "\\"),
            bytes[index + 1] == UInt8(ascii: "u")
          else { throw failure("lone surrogate") }
          index += 2
          let low = try hex4()
          guard (0xDC00...0xDFFF).contains(low) else { throw failure("lone surrogate") }
          code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
        } else if (0xDC00...0xDFFF).contains(code) {
          throw failure("lone surrogate")
        }
        guard let scalar = Unicode.Scalar(code) else { throw failure("invalid escape") }
        scalars.append(contentsOf: Array(String(Character(scalar)).utf8))
      default:
        throw failure("invalid escape")
      }
      runStart = index
    }
    guard let text = String(validating: scalars, as: UTF8.self) else {
      throw failure("a string is not valid UTF-8")
    }
    return text
  }

  mutating func hex4() throws(DaemonProtocolError) -> UInt32 {
    guard bytes.count - index >= 4 else { throw failure("unterminated escape") }
    var code: UInt32 = 0
    for _ in 0..<4 {
      let byte = bytes[index]
      let digit: UInt32
      switch byte {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
      case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
      case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
      default: throw failure("invalid escape")
      }
      code = code << 4 | digit
      index += 1
    }
    return code
  }
}

/// Writes one JSON object, member by member, into a byte buffer (the encoder's half).
///
/// Doubles are written in Swift's shortest round-trip form; non-finite doubles, which JSON cannot
/// carry, are written as the strings `"NaN"`, `"Infinity"` and `"-Infinity"` (our rule; the
/// decoder accepts them wherever a number is expected).
struct JSONWriter {
  var bytes: [UInt8] = []
  private var needsComma: [Bool] = []

  init() { bytes.reserveCapacity(256) }

  mutating func beginObject() {
    separate()
    bytes.append(UInt8(ascii: "{"))
    needsComma.append(false)
  }

  mutating func endObject() {
    bytes.append(UInt8(ascii: "}"))
    needsComma.removeLast()
    wrote()
  }

  mutating func beginArray() {
    separate()
    bytes.append(UInt8(ascii: "["))
    needsComma.append(false)
  }

  mutating func endArray() {
    bytes.append(UInt8(ascii: "]"))
    needsComma.removeLast()
    wrote()
  }

  /// Writes a member name; the value follows with one of the value writers.
  mutating func key(_ name: String) {
    separate()
    writeString(name)
    bytes.append(UInt8(ascii: ":"))
    // The value that follows must not add a comma.
    if !needsComma.isEmpty { needsComma[needsComma.count - 1] = false }
  }

  private mutating func separate() {
    guard let last = needsComma.last else { return }
    if last { bytes.append(UInt8(ascii: ",")) }
  }

  private mutating func wrote() {
    if !needsComma.isEmpty { needsComma[needsComma.count - 1] = true }
  }

  mutating func string(_ value: String) {
    separate()
    writeString(value)
    wrote()
  }

  mutating func double(_ value: Double) {
    separate()
    if value.isFinite {
      // Whole numbers up to 2^53 without ".0": shorter, and what integer-minded readers expect.
      if value == value.rounded(), abs(value) < 9_007_199_254_740_992 {
        bytes.append(contentsOf: String(Int64(value)).utf8)
      } else {
        bytes.append(contentsOf: value.description.utf8)
      }
    } else {
      writeString(value.isNaN ? "NaN" : (value > 0 ? "Infinity" : "-Infinity"))
    }
    wrote()
  }

  mutating func int(_ value: Int) {
    separate()
    bytes.append(contentsOf: String(value).utf8)
    wrote()
  }

  mutating func int64(_ value: Int64) {
    separate()
    bytes.append(contentsOf: String(value).utf8)
    wrote()
  }

  mutating func bool(_ value: Bool) {
    separate()
    bytes.append(contentsOf: (value ? "true" : "false").utf8)
    wrote()
  }

  mutating func null() {
    separate()
    bytes.append(contentsOf: "null".utf8)
    wrote()
  }

  private mutating func writeString(_ value: String) {
    bytes.append(UInt8(ascii: "\""))
    for byte in value.utf8 {
      switch byte {
      case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
      case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
      case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
      case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
      case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
      case 0..<0x20:
        let hex = Array("0123456789abcdef".utf8)
        bytes.append(contentsOf: Array("\\u00".utf8))
        bytes.append(hex[Int(byte >> 4)])
        bytes.append(hex[Int(byte & 0xF)])
      default: bytes.append(byte)
      }
    }
    bytes.append(UInt8(ascii: "\""))
  }
}
