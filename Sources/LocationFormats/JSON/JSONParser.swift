/// A JSON parser over bytes (RFC 8259's grammar), for one line of gpsd output or one message of
/// `locationd`'s protocol. Never traps on any input.
///
/// Our rules: nesting deeper than `maximumDepth` is an error (stack safety; gpsd nests three
/// levels, SKY's satellites; the daemon protocol four); anything but whitespace after the value
/// is an error. What to do with text that is not quite right depends on `strict`:
/// - lenient (gpsd's lines): a duplicate member name keeps the last value; invalid UTF-8 inside a
///   string and a lone UTF-16 surrogate escape become U+FFFD;
/// - strict (the daemon's protocol, where a peer may be hostile): each of these is an error.
package struct JSONParser {
  /// Arrays and objects nested deeper than this are refused (stack safety).
  package static let maximumDepth = 32

  /// What went wrong, and at which byte offset of the text.
  package struct Failure: Error, Equatable {
    /// The problem.
    package var reason: String
    /// The byte offset (from 0) where it was found.
    package var offset: Int
  }

  private let bytes: UnsafeBufferPointer<UInt8>
  private let strict: Bool
  private var index = 0

  private init(_ bytes: UnsafeBufferPointer<UInt8>, strict: Bool) {
    self.bytes = bytes
    self.strict = strict
  }

  /// Parses one complete JSON text.
  /// - Parameters:
  ///   - bytes: the text, without its line feed.
  ///   - strict: refuse duplicate member names, invalid UTF-8 and lone surrogates (default
  ///     false: keep the last member, replace with U+FFFD).
  /// - Returns: the value.
  /// - Throws: `Failure` naming the first problem and its offset.
  package static func parse(_ bytes: UnsafeBufferPointer<UInt8>, strict: Bool = false)
    throws(Failure)
    -> JSONValue
  {
    var parser = JSONParser(bytes, strict: strict)
    parser.skipWhitespace()
    let value = try parser.value(depth: 0)
    parser.skipWhitespace()
    guard parser.index == bytes.count else { throw parser.failure("text after the JSON value") }
    return value
  }

  /// Parses one complete JSON text held in an array.
  /// - Parameters:
  ///   - bytes: the text.
  ///   - strict: as for the buffer form.
  /// - Returns: the value.
  /// - Throws: `Failure` naming the first problem and its offset.
  package static func parse(_ bytes: [UInt8], strict: Bool = false) throws(Failure) -> JSONValue {
    let result = bytes.withUnsafeBufferPointer { buffer in
      Result { () throws(Failure) -> JSONValue in try parse(buffer, strict: strict) }
    }
    return try result.get()
  }

  private func failure(_ reason: String) -> Failure { Failure(reason: reason, offset: index) }

  private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

  private mutating func skipWhitespace() {
    while let byte = current,
      byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    {
      index += 1
    }
  }

  private mutating func value(depth: Int) throws(Failure) -> JSONValue {
    guard let byte = current else { throw failure("unexpected end of line") }
    switch byte {
    case UInt8(ascii: "{"):
      return try object(depth: depth + 1)
    case UInt8(ascii: "["):
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

  private mutating func literal(_ word: String) throws(Failure) {
    for byte in word.utf8 {
      guard current == byte else { throw failure("unknown literal") }
      index += 1
    }
  }

  private mutating func object(depth: Int) throws(Failure) -> JSONValue {
    guard depth <= Self.maximumDepth else { throw failure("nested too deeply") }
    index += 1  // {
    var members: [String: JSONValue] = [:]
    skipWhitespace()
    if current == UInt8(ascii: "}") {
      index += 1
      return .object(members)
    }
    while true {
      skipWhitespace()
      guard current == UInt8(ascii: "\"") else { throw failure("expected a member name") }
      let name = try string()
      skipWhitespace()
      guard current == UInt8(ascii: ":") else { throw failure("expected ':'") }
      index += 1
      skipWhitespace()
      let element = try value(depth: depth)
      if strict, members[name] != nil {
        throw failure("member \"\(name.prefix(64))\" appears twice")
      }
      members[name] = element
      skipWhitespace()
      switch current {
      case UInt8(ascii: ","):
        index += 1
      case UInt8(ascii: "}"):
        index += 1
        return .object(members)
      case nil:
        throw failure("unexpected end of line")
      default:
        throw failure("expected ',' or '}'")
      }
    }
  }

  private mutating func array(depth: Int) throws(Failure) -> JSONValue {
    guard depth <= Self.maximumDepth else { throw failure("nested too deeply") }
    index += 1  // [
    var elements: [JSONValue] = []
    skipWhitespace()
    if current == UInt8(ascii: "]") {
      index += 1
      return .array(elements)
    }
    while true {
      skipWhitespace()
      elements.append(try value(depth: depth))
      skipWhitespace()
      switch current {
      case UInt8(ascii: ","):
        index += 1
      case UInt8(ascii: "]"):
        index += 1
        return .array(elements)
      case nil:
        throw failure("unexpected end of line")
      default:
        throw failure("expected ',' or ']'")
      }
    }
  }

  /// A number by RFC 8259's grammar: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
  private mutating func number() throws(Failure) -> Double {
    let start = index
    if current == UInt8(ascii: "-") { index += 1 }
    guard let first = current, isDigit(first) else { throw failure("bad number") }
    if first == UInt8(ascii: "0") {
      index += 1
    } else {
      skipDigits()
    }
    if current == UInt8(ascii: ".") {
      index += 1
      guard let digit = current, isDigit(digit) else { throw failure("bad number") }
      skipDigits()
    }
    if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
      index += 1
      if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
      guard let digit = current, isDigit(digit) else { throw failure("bad number") }
      skipDigits()
    }
    let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
    // Swift's Double(String) rounds correctly; out-of-range magnitudes become ±infinity or ±0.
    guard let value = Double(text) else { throw failure("bad number") }
    return value
  }

  private func isDigit(_ byte: UInt8) -> Bool {
    byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
  }

  private mutating func skipDigits() {
    while let byte = current, isDigit(byte) { index += 1 }
  }

  private mutating func string() throws(Failure) -> String {
    index += 1  // opening quote
    var scalars: [UInt8] = []
    var start = index
    while true {
      guard let byte = current else { throw failure("unterminated string") }
      switch byte {
      case UInt8(ascii: "\""):
        scalars.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index]))
        index += 1
        if strict {
          guard let text = String(validating: scalars, as: UTF8.self) else {
            throw failure("a string is not valid UTF-8")
          }
          return text
        }
        return String(decoding: scalars, as: UTF8.self)
      case UInt8(ascii: "\\"):
        scalars.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index]))
        index += 1
        try escape(into: &scalars)
        start = index
      case 0..<0x20:
        throw failure("control character in a string")
      default:
        index += 1
      }
    }
  }

  private mutating func escape(into out: inout [UInt8]) throws(Failure) {
    guard let byte = current else { throw failure("unterminated string") }
    index += 1
    switch byte {
    case UInt8(ascii: "\""): out.append(0x22)
    case UInt8(ascii: "\\"): out.append(0x5C)
    case UInt8(ascii: "/"): out.append(0x2F)
    case UInt8(ascii: "b"): out.append(0x08)
    case UInt8(ascii: "f"): out.append(0x0C)
    case UInt8(ascii: "n"): out.append(0x0A)
    case UInt8(ascii: "r"): out.append(0x0D)
    case UInt8(ascii: "t"): out.append(0x09)
    case UInt8(ascii: "u"):
      var code = try hex4()
      if (0xD800..<0xDC00).contains(code) {
        // A UTF-16 surrogate pair (RFC 8259, section 7); a lone half becomes U+FFFD.
        if index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
          bytes[index + 1] == UInt8(ascii: "u")
        {
          index += 2
          let low = try hex4()
          if (0xDC00..<0xE000).contains(low) {
            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
          } else {
            code = try loneSurrogate()
          }
        } else {
          code = try loneSurrogate()
        }
      } else if (0xDC00..<0xE000).contains(code) {
        code = try loneSurrogate()
      }
      let scalar = Unicode.Scalar(code) ?? "\u{FFFD}"
      out.append(contentsOf: String(Character(scalar)).utf8)
    default:
      throw failure("bad escape")
    }
  }

  /// A lone UTF-16 surrogate escape: U+FFFD, or an error when strict.
  private func loneSurrogate() throws(Failure) -> UInt32 {
    if strict { throw failure("lone surrogate") }
    return 0xFFFD
  }

  private mutating func hex4() throws(Failure) -> UInt32 {
    guard index + 4 <= bytes.count else { throw failure("bad \\u escape") }
    var code: UInt32 = 0
    for _ in 0..<4 {
      let byte = bytes[index]
      let digit: UInt32
      switch byte {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
      case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
      case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
      default: throw failure("bad \\u escape")
      }
      code = code << 4 | digit
      index += 1
    }
    return code
  }
}

/// The gpsd decoder's name for the parser (lenient).
typealias GPSDJSONParser = JSONParser
