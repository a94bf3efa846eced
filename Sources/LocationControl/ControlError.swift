/// Why a `locationctl` command failed, with the exit status it maps to.
package struct ControlError: Error, Equatable, Sendable, CustomStringConvertible {
  /// The kind of failure.
  package enum Code: Equatable, Sendable {
    /// The socket could not be reached (exit status 3).
    case cannotConnect
    /// The daemon answered with an `error` message (exit status 1); the payload is its code.
    case daemon(String)
    /// The daemon broke the protocol, closed the connection or did not answer (exit status 1).
    case protocolViolation
    /// Reading or writing the socket failed (exit status 1).
    case io
  }

  /// The kind of failure.
  package var code: Code
  /// A message for people: what happened and, where there is one, what to do.
  package var message: String

  /// Creates an error.
  ///
  /// - Parameters:
  ///   - code: The kind of failure.
  ///   - message: The message for people.
  package init(_ code: Code, _ message: String) {
    self.code = code
    self.message = message
  }

  /// The message.
  package var description: String { message }

  /// The exit status `locationctl` ends with for this error.
  package var exitStatus: Int32 {
    switch code {
    case .cannotConnect: return LocationControlCommand.ExitCode.cannotConnect.rawValue
    case .daemon, .protocolViolation, .io:
      return LocationControlCommand.ExitCode.daemonError.rawValue
    }
  }
}
