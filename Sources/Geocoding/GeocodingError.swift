/// Why a geocoding request gave no answer: a code, a message, the underlying cause and where it
/// was raised. Coordinates stay out of the message.
package struct GeocodingError: Error, CustomStringConvertible, Sendable {
  /// What went wrong, in the terms `CLError` maps from.
  package enum Code: Sendable, Equatable {
    /// Nothing matched (also: bad input, such as a NaN coordinate or an empty string).
    case noResult
    /// The request was canceled.
    case canceled
    /// A geocoding server failed or could not be reached, or the rate limit was exceeded.
    case network
    /// The gazetteer file is missing, unreadable or not a gazetteer.
    case dataUnavailable
  }

  /// The code.
  package var code: Code
  /// A sentence for people.
  package var message: String
  /// The error that caused this one, if any.
  package var cause: (any Error & Sendable)?
  /// The source file and line that raised it.
  package var location: String

  /// Creates an error.
  package init(
    _ code: Code, _ message: String, cause: (any Error & Sendable)? = nil,
    file: StaticString = #fileID, line: UInt = #line
  ) {
    self.code = code
    self.message = message
    self.cause = cause
    self.location = "\(file):\(line)"
  }

  /// The message, with the cause when there is one.
  package var description: String {
    cause.map { "\(message): \($0)" } ?? message
  }
}
