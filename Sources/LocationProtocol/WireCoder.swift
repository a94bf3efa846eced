import LocationFormats

/// Reads or writes the members of one JSON object: the protocol's one field table.
///
/// Every value on the wire describes its members once, in a `wire(_:)` function that calls
/// ``field(_:_:)``, ``field(_:_:default:)``, ``optional(_:_:)`` ... for each member in order, passing
/// the member's name and the stored property. Run with an encoding coder, the function writes the
/// members in that order; run with a decoding coder, it reads each member into the property. So a
/// member's name, its type, whether it is required and its default are written once, for both
/// directions.
///
/// Decoding rules (ours, for both sides): a member that is absent or `null` is `missingField` when
/// required, else its default (or nil); a member of the wrong JSON type, an integer that is not
/// integral or out of range, or an unknown name is `malformed`, with the member's path in the
/// message; members nobody asks for are ignored, so a newer peer may add some.
package struct WireCoder {
  /// Where encoded members go (unused while decoding).
  package var writer: JSONWriter
  /// The members being read; nil while encoding.
  private let members: [String: JSONValue]?
  /// The path of this object inside the message ("" for the message itself), for errors.
  let path: String
  /// The message type, for errors.
  let type: String

  /// A coder that writes members after what `writer` holds (an open object).
  package init(encodingInto writer: JSONWriter) {
    self.writer = writer
    self.members = nil
    self.path = ""
    self.type = ""
  }

  /// A coder that reads the members of one object.
  package init(decoding members: [String: JSONValue], path: String = "", type: String = "") {
    self.writer = JSONWriter(capacity: 0)
    self.members = members
    self.path = path
    self.type = type
  }

  /// Whether this coder reads (else it writes).
  package var isDecoding: Bool { members != nil }

  // MARK: Members

  /// A required member.
  package mutating func field<T: WireValue>(_ key: String, _ value: inout T)
    throws(DaemonProtocolError)
  {
    guard let members else {
      writer.key(key)
      value.wireEncode(into: &writer)
      return
    }
    guard let json = Self.present(members[key]) else { throw missing(key) }
    value = try T.wireDecode(json, key: key, in: self)
  }

  /// A member that takes `default` when absent or `null`; always written.
  package mutating func field<T: WireValue>(_ key: String, _ value: inout T, default: T)
    throws(DaemonProtocolError)
  {
    guard let members else {
      writer.key(key)
      value.wireEncode(into: &writer)
      return
    }
    guard let json = Self.present(members[key]) else {
      value = `default`
      return
    }
    value = try T.wireDecode(json, key: key, in: self)
  }

  /// An optional member, written as `null` when nil (so the peer rebuilds the same value).
  package mutating func optional<T: WireValue>(_ key: String, _ value: inout T?)
    throws(DaemonProtocolError)
  {
    guard let members else {
      writer.key(key)
      if let value { value.wireEncode(into: &writer) } else { writer.null() }
      return
    }
    value = try Self.present(members[key]).map { (json) throws(DaemonProtocolError) in
      try T.wireDecode(json, key: key, in: self)
    }
  }

  /// An optional member left out when nil.
  package mutating func omittable<T: WireValue>(_ key: String, _ value: inout T?)
    throws(DaemonProtocolError)
  {
    guard members == nil else {
      try optional(key, &value)
      return
    }
    guard let present = value else { return }
    writer.key(key)
    present.wireEncode(into: &writer)
  }

  /// Whether the member is present and not `null` (decoding), or false (encoding).
  package func has(_ key: String) -> Bool { Self.present(members?[key]) != nil }

  // MARK: Errors

  /// The path of a member, for messages.
  func name(_ key: String) -> String { path.isEmpty ? key : path + "." + key }

  /// `malformed`, naming the member.
  package func malformed(_ key: String, _ problem: String) -> DaemonProtocolError {
    DaemonProtocolError(
      code: .malformed,
      message: "\(type.isEmpty ? "" : "\(type): ")\"\(name(key))\" \(problem)")
  }

  /// `missingField`, naming the member.
  func missing(_ key: String) -> DaemonProtocolError {
    DaemonProtocolError(
      code: .missingField,
      message: "\(type.isEmpty ? "" : "\(type): ")missing field \"\(name(key))\"")
  }

  private static func present(_ json: JSONValue?) -> JSONValue? {
    guard let json, json != .null else { return nil }
    return json
  }
}
