import LocationFormats

/// A JSON value as the daemon protocol reads it: LocationFormats' `JSONValue`, parsed strictly.
package typealias DaemonJSON = JSONValue

extension JSONValue {
  /// Parses one message of the daemon protocol with `JSONParser` in strict mode, so that its limits
  /// are ours and documented: nesting at most `JSONParser.maximumDepth` levels, strings must be
  /// valid UTF-8 (escapes included: a lone surrogate is an error), an object with a repeated key is
  /// an error, and numbers are IEEE doubles (integers are exact up to 2^53).
  ///
  /// - Parameter bytes: UTF-8 bytes.
  /// - Returns: The value.
  /// - Throws: ``DaemonProtocolError`` with code `malformed`, naming the byte offset.
  package static func parse(_ bytes: [UInt8]) throws(DaemonProtocolError) -> JSONValue {
    do {
      return try JSONParser.parse(bytes, strict: true)
    } catch {
      throw DaemonProtocolError(
        code: .malformed,
        message: "malformed JSON at byte \(error.offset): \(DaemonProtocolError.clip(error.reason))"
      )
    }
  }
}

/// Writes one JSON object, member by member, into a byte buffer (the encoder's half).
///
/// Doubles are written in Swift's shortest round-trip form; non-finite doubles, which JSON cannot
/// carry, are written as the strings `"NaN"`, `"Infinity"` and `"-Infinity"` (our rule; the
/// decoder accepts them wherever a number is expected).
package struct JSONWriter {
  package var bytes: [UInt8] = []
  private var needsComma: [Bool] = []

  /// A writer whose buffer has room for `capacity` bytes.
  package init(capacity: Int = 256) { bytes.reserveCapacity(capacity) }

  package mutating func beginObject() {
    separate()
    bytes.append(UInt8(ascii: "{"))
    needsComma.append(false)
  }

  package mutating func endObject() {
    bytes.append(UInt8(ascii: "}"))
    needsComma.removeLast()
    wrote()
  }

  package mutating func beginArray() {
    separate()
    bytes.append(UInt8(ascii: "["))
    needsComma.append(false)
  }

  package mutating func endArray() {
    bytes.append(UInt8(ascii: "]"))
    needsComma.removeLast()
    wrote()
  }

  /// Writes a member name; the value follows with one of the value writers.
  package mutating func key(_ name: String) {
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

  package mutating func string(_ value: String) {
    separate()
    writeString(value)
    wrote()
  }

  package mutating func double(_ value: Double) {
    separate()
    Self.appendDouble(value, to: &bytes)
    wrote()
  }

  /// A double as the writer writes it: whole numbers up to 2^53 without ".0" (shorter, and what
  /// integer-minded readers expect), others in Swift's shortest round-trip form, non-finite ones
  /// as the strings `"NaN"`, `"Infinity"` and `"-Infinity"`.
  ///
  /// The text is copied from the string's own contiguous bytes, not through a `String.UTF8View`
  /// iterated into the array (generic code that `locationd` ran cold at every fix it encodes).
  package static func appendDouble(_ value: Double, to bytes: inout [UInt8]) {
    if value.isFinite {
      if value == value.rounded(), abs(value) < 9_007_199_254_740_992 {
        appendInteger(Int64(value), to: &bytes)
      } else {
        var text = value.description
        text.withUTF8 { bytes.append(contentsOf: $0) }
      }
    } else {
      appendString(value.isNaN ? "NaN" : (value > 0 ? "Infinity" : "-Infinity"), to: &bytes)
    }
  }

  /// An integer in decimal, as `String(value)` writes it, without making the string: the digits
  /// are written backwards into a buffer on the stack and appended in one copy.
  package static func appendInteger(_ value: Int64, to bytes: inout [UInt8]) {
    if value < 0 { bytes.append(UInt8(ascii: "-")) }
    var magnitude = value.magnitude
    // 20 digits at most (UInt64.max has 20).
    var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
    withUnsafeMutableBytes(of: &digits) { buffer in
      var index = buffer.count
      repeat {
        index -= 1
        buffer[index] = UInt8(truncatingIfNeeded: magnitude % 10) &+ UInt8(ascii: "0")
        magnitude /= 10
      } while magnitude > 0
      bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[index...]))
    }
  }

  package mutating func int(_ value: Int) {
    separate()
    Self.appendInteger(Int64(value), to: &bytes)
    wrote()
  }

  package mutating func int64(_ value: Int64) {
    separate()
    Self.appendInteger(value, to: &bytes)
    wrote()
  }

  package mutating func bool(_ value: Bool) {
    separate()
    bytes.append(contentsOf: (value ? "true" : "false").utf8)
    wrote()
  }

  package mutating func null() {
    separate()
    bytes.append(contentsOf: "null".utf8)
    wrote()
  }

  private mutating func writeString(_ value: String) {
    Self.appendString(value, to: &bytes)
  }

  /// A string as the writer writes it: quoted, with `"`, `\\` and control characters escaped.
  /// A string with none of them (the usual case) is copied from its contiguous bytes at once.
  package static func appendString(_ value: String, to bytes: inout [UInt8]) {
    var value = value
    let plain = value.withUTF8 { text -> Bool in
      for byte in text
      where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
        return false
      }
      bytes.append(UInt8(ascii: "\""))
      bytes.append(contentsOf: text)
      bytes.append(UInt8(ascii: "\""))
      return true
    }
    if !plain { appendEscaped(value, to: &bytes) }
  }

  /// `appendString` for a string with something to escape.
  private static func appendEscaped(_ value: String, to bytes: inout [UInt8]) {
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
      default: bytes.append(byte)  // a byte
      }
    }
    bytes.append(UInt8(ascii: "\""))
  }
}
