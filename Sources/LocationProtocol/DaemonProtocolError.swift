/// The `code` of an `error` message: a protocol error (the peer did something wrong) or a
/// delivery error (`locationUnknown`, `denied`, `sourcesEnded`: what `CLError` a manager reports).
///
/// A string wrapper rather than an enum, so that a peer of an older version decodes a code added
/// later instead of failing; compare with the constants.
package struct DaemonErrorCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
  /// The code as written on the wire.
  package var rawValue: String

  /// Wraps a wire code.
  /// - Parameter rawValue: The code.
  package init(rawValue: String) { self.rawValue = rawValue }

  /// `hello` named a protocol version this daemon does not speak; the connection is closed.
  package static let unsupportedVersion = DaemonErrorCode(rawValue: "unsupportedVersion")
  /// A line longer than ``DaemonLineReader/defaultLimit``; the connection is closed.
  package static let tooLarge = DaemonErrorCode(rawValue: "tooLarge")
  /// Not JSON, not an object, a field of the wrong type or out of range, a bad group name, or a
  /// connection that ended in the middle of a line.
  package static let malformed = DaemonErrorCode(rawValue: "malformed")
  /// A `type` this side does not know.
  package static let unknownType = DaemonErrorCode(rawValue: "unknownType")
  /// A required field is absent (or `null`).
  package static let missingField = DaemonErrorCode(rawValue: "missingField")
  /// A `client` number that was never registered on this connection (or already unregistered).
  package static let notRegistered = DaemonErrorCode(rawValue: "notRegistered")
  /// The peer may not do this: the control or agent role without privileges, a request of another
  /// role (an app request on a control connection, a control request on an app connection), a
  /// peer whose executable cannot be identified.
  package static let forbidden = DaemonErrorCode(rawValue: "forbidden")
  /// The named app, region or request does not exist.
  package static let notFound = DaemonErrorCode(rawValue: "notFound")
  /// A cap of the daemon's configuration was reached for this peer (connections of its uid, app
  /// identities of its uid, requests held for its app); the request is refused, nothing else.
  package static let tooMany = DaemonErrorCode(rawValue: "tooMany")
  /// Understood but not available in this daemon.
  package static let unsupported = DaemonErrorCode(rawValue: "unsupported")
  /// Out of order: a message before `hello`, a second `hello`, a manager number registered twice, a
  /// message only the daemon sends.
  package static let outOfOrder = DaemonErrorCode(rawValue: "protocol")
  /// Delivery: no location could be obtained right now (`CLError.locationUnknown`).
  package static let locationUnknown = DaemonErrorCode(rawValue: "locationUnknown")
  /// Delivery: not authorized or services off (`CLError.denied`).
  package static let denied = DaemonErrorCode(rawValue: "denied")
  /// Delivery: every source has ended for good.
  package static let sourcesEnded = DaemonErrorCode(rawValue: "sourcesEnded")

  /// The wire code.
  package var description: String { rawValue }
}

/// A protocol error: what the decoder throws and what the server answers with an `error` message.
///
/// Messages name the field and the problem, never a coordinate (CONTRIBUTING.md, "How the code is written").
package struct DaemonProtocolError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The code.
  package var code: DaemonErrorCode
  /// A sentence for people.
  package var message: String
  /// The `id` of the control request that failed, when the decoder could read one.
  package var id: Int?

  /// Creates an error.
  /// - Parameters:
  ///   - code: The code.
  ///   - message: A sentence for people.
  ///   - id: The failing request's `id`, if known.
  package init(code: DaemonErrorCode, message: String, id: Int? = nil) {
    self.code = code
    self.message = message
    self.id = id
  }

  /// The code and the message.
  package var description: String { "\(code.rawValue): \(message)" }

  /// A peer-supplied string cut to 64 characters for messages.
  static func clip(_ text: String) -> String {
    text.count <= 64 ? text : String(text.prefix(64)) + "..."
  }
}
