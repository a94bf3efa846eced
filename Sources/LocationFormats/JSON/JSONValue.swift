/// A JSON value (RFC 8259), as `JSONParser` reads it: one line of gpsd's protocol, or one message
/// of `locationd`'s.
///
/// Numbers are kept as `Double` (integers are exact up to 2^53); a number too big for a `Double`
/// parses to an infinity and is rejected by the field readers, not here. Object member order is not
/// kept.
package indirect enum JSONValue: Sendable, Equatable {
  /// `null`.
  case null
  /// `true` or `false`.
  case bool(Bool)
  /// A number.
  case number(Double)
  /// A string.
  case string(String)
  /// An array.
  case array([JSONValue])
  /// An object.
  case object([String: JSONValue])
}

/// The gpsd decoder's name for a JSON value.
typealias GPSDJSONValue = JSONValue
