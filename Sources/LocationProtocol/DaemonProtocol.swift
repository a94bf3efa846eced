import LocationFormats
import LocationModel

/// `locationd`'s wire protocol, version 1: line-delimited JSON over a Unix stream socket
/// (`docs/protocol.md`).
///
/// Rules of this codec (ours, documented for both sides):
/// - One JSON object per line, UTF-8, terminated by `\n` (a `\r` before it is tolerated); at most
///   ``DaemonLineReader/defaultLimit`` bytes without the terminator.
/// - Members the decoder does not know are ignored, so a newer peer may add fields. A required
///   member that is absent or `null` is `missingField`; a member of the wrong JSON type, an
///   integer that is not integral or out of range, an unknown enumeration value or an invalid
///   group name is `malformed`; an unknown `type` is `unknownType`.
/// - Numbers are doubles. Non-finite doubles are written as the strings `"NaN"`, `"Infinity"`,
///   `"-Infinity"`, which the decoder accepts wherever a double is expected.
/// - Optional values are written as `null` (never left out) so that the peer rebuilds the same
///   value; the decoder also accepts them absent.
package enum DaemonProtocol {
  /// The protocol version this code speaks.
  package static let version = 1

  /// The longest `purpose` text the daemon keeps, in UTF-8 bytes.
  package static let maximumPurposeBytes = 1000

  /// Decodes one line (with or without its `\n` / `\r\n` terminator).
  ///
  /// Never traps, whatever the bytes: this is the fuzz target's entry point.
  /// - Parameters:
  ///   - line: The line's bytes.
  ///   - limit: The longest line accepted, bytes: 64 KiB for what a peer sends the daemon; a
  ///     client reading the daemon allows more (a welcome lists every region of the app, a
  ///     deferred batch many locations).
  /// - Returns: The message.
  /// - Throws: ``DaemonProtocolError`` with code `tooLarge`, `malformed`, `unknownType` or
  ///   `missingField`;
  ///   its `id` is set when the line was an object with an integral `id`.
  package static func decode(
    line: some Collection<UInt8>, limit: Int = DaemonLineReader.defaultLimit
  ) throws(DaemonProtocolError) -> DaemonMessage {
    var bytes = Array(line)
    if bytes.last == UInt8(ascii: "\n") { bytes.removeLast() }
    if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
    guard bytes.count <= limit else {
      throw DaemonProtocolError(code: .tooLarge, message: "a line is longer than \(limit) bytes")
    }
    if let message = bytes.withUnsafeBufferPointer({ fastLocations($0) }) { return message }
    return try decodeGenerally(bytes)
  }

  /// `decode(line:limit:)` without the fast path for `locations` lines: the JSON tree, then the
  /// message's members.
  /// - Parameter bytes: the line without its line end, within the limit.
  /// - Returns: The message.
  /// - Throws: ``DaemonProtocolError``, as `decode(line:limit:)`.
  static func decodeGenerally(_ bytes: [UInt8]) throws(DaemonProtocolError) -> DaemonMessage {
    let json = try DaemonJSON.parse(bytes)
    guard case .object(let members) = json else {
      throw DaemonProtocolError(code: .malformed, message: "a message must be a JSON object")
    }
    var id: Int?
    if case .number(let number) = members["id"] { id = Int.integer(number) }
    do {
      return try decodeMessage(members)
    } catch {
      var error = error
      if error.id == nil { error.id = id }
      throw error
    }
  }

  /// Encodes a message as one line, terminated by `\n`.
  /// - Parameter message: The message.
  /// - Returns: The line's bytes (UTF-8 JSON without raw newlines, then `\n`).
  package static func encode(_ message: DaemonMessage) -> [UInt8] {
    var writer = JSONWriter()
    writer.beginObject()
    writer.key("type")
    writer.string(message.type)
    var coder = WireCoder(encodingInto: writer)
    var copy = message
    // An encoding coder never throws: it writes every member as it is.
    try? copy.wire(&coder)
    writer = coder.writer
    writer.endObject()
    writer.bytes.append(UInt8(ascii: "\n"))
    return writer.bytes
  }

  /// The JSON array of a `locations` message's fixes, encoded once for every manager that receives
  /// the same fixes (see ``encodeLocations(client:fixesJSON:)``).
  /// - Parameter fixes: The fixes.
  /// - Returns: The array's bytes.
  package static func encodeFixes(_ fixes: [Fix]) -> [UInt8] {
    encodeFixesDirectly(fixes)
  }

  /// A `locations` message around fixes already encoded with ``encodeFixes(_:)``: the same bytes
  /// as `encode(.locations(client:fixes))`, without encoding the fixes again (the daemon sends
  /// one fix to many managers).
  /// - Parameters:
  ///   - client: The manager's number.
  ///   - fixesJSON: The encoded fixes.
  /// - Returns: The line, newline-terminated.
  package static func encodeLocations(client: Int, fixesJSON: [UInt8]) -> [UInt8] {
    var bytes = Array(#"{"type":"locations","client":"#.utf8)
    bytes.reserveCapacity(bytes.count + 16 + fixesJSON.count)
    JSONWriter.appendInteger(Int64(client), to: &bytes)
    bytes.append(contentsOf: #","locations":"#.utf8)
    bytes.append(contentsOf: fixesJSON)
    bytes.append(contentsOf: "}\n".utf8)
    return bytes
  }

  /// Whether a region group name is valid: `manager`, or `monitor:` followed by a non-empty name.
  /// - Parameter group: The name.
  /// - Returns: Whether the protocol accepts it.
  package static func isValidGroup(_ group: String) -> Bool {
    group == "manager" || (group.hasPrefix("monitor:") && group.utf8.count > "monitor:".utf8.count)
  }

  // MARK: Decoding

  private static func decodeMessage(_ members: [String: JSONValue]) throws(DaemonProtocolError)
    -> DaemonMessage
  {
    guard let typeValue = members["type"], typeValue != .null else {
      throw DaemonProtocolError(code: .missingField, message: "the message has no \"type\"")
    }
    guard case .string(let type) = typeValue else {
      throw DaemonProtocolError(code: .malformed, message: "\"type\" must be a string")
    }
    guard let kind = DaemonMessage.Kind(rawValue: type) else {
      throw DaemonProtocolError(
        code: .unknownType, message: "unknown message type \"\(DaemonProtocolError.clip(type))\"")
    }
    var coder = WireCoder(decoding: members, type: type)
    var message = DaemonMessage.blank(kind)
    try message.wire(&coder)
    return message
  }
}
