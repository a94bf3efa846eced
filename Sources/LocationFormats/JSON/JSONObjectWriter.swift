/// Writes one compact JSON object (RFC 8259) member by member, in the order given.
///
/// The caller gives only finite numbers (a NaN or an infinity has no JSON form): the writers of
/// formats validate their values first.
package struct JSONObjectWriter {
  private var text = "{"
  private var first = true

  /// Starts an object.
  package init() {}

  /// The object written so far, closed.
  package var result: String { text + "}" }

  /// A string member.
  package mutating func add(_ name: String, _ value: String) {
    key(name)
    Self.appendString(value, to: &text)
  }

  /// A whole-number member.
  package mutating func add(_ name: String, _ value: Int) {
    key(name)
    text += String(value)
  }

  /// A number member, in the shortest form that reads back as the same `Double`.
  package mutating func add(_ name: String, _ value: Double) {
    key(name)
    text += Self.number(value)
  }

  /// A member whose value is JSON text already (an array or an object).
  package mutating func add(_ name: String, json: String) {
    key(name)
    text += json
  }

  /// A member only when its value is known.
  package mutating func add(_ name: String, _ value: String?) {
    if let value { add(name, value) }
  }

  /// A member only when its value is known.
  package mutating func add(_ name: String, _ value: Int?) {
    if let value { add(name, value) }
  }

  /// A member only when its value is known.
  package mutating func add(_ name: String, _ value: Double?) {
    if let value { add(name, value) }
  }

  private mutating func key(_ name: String) {
    if !first { text += "," }
    first = false
    Self.appendString(name, to: &text)
    text += ":"
  }

  /// A finite number as JSON: integral values up to 2^53 without a fraction (`52`, not `52.0`),
  /// others in Swift's shortest round-trip form (`52.3711`, `1e-07`), which is valid JSON.
  package static func number(_ value: Double) -> String {
    if value.rounded() == value, abs(value) < 9_007_199_254_740_992 {
      return value == 0 ? "0" : String(Int64(value))
    }
    return String(value)
  }

  /// Appends a JSON string literal: quotes, backslashes and control characters escaped.
  package static func appendString(_ value: String, to text: inout String) {
    text += "\""
    for scalar in value.unicodeScalars {
      switch scalar {
      case "\"": text += "\\\""
      case "\\": text += "\\\\"
      case "\n": text += "\\n"
      case "\r": text += "\\r"
      case "\t": text += "\\t"
      case _ where scalar.value < 0x20:
        let hex = String(scalar.value, radix: 16)
        text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
      default: text.unicodeScalars.append(scalar)
      }
    }
    text += "\""
  }
}
