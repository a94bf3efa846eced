/// An error found while decoding a file or a stream: what is wrong, and where.
///
/// Coordinates never appear in `description` (CONTRIBUTING.md, "How the code is written").
package struct FormatError: Error, Sendable, Equatable, CustomStringConvertible {
  /// What kind of problem this is.
  package enum Code: String, Sendable, Equatable {
    /// The bytes are not the format at all (not XML, not NMEA, ...).
    case malformed
    /// A value is out of its range (latitude 91, NaN, a negative accuracy).
    case invalidValue
    /// A required element or field is missing.
    case missingField
    /// The file could not be read.
    case unreadable
    /// The file holds nothing usable.
    case empty
  }

  /// What kind of problem this is.
  package var code: Code
  /// A human-readable explanation, without coordinates.
  package var message: String
  /// The file (path or URL) the problem is in, if there is one.
  package var file: String?
  /// The 1-based line number, if known.
  package var line: Int?

  /// Creates an error.
  package init(_ code: Code, _ message: String, file: String? = nil, line: Int? = nil) {
    self.code = code
    self.message = message
    self.file = file
    self.line = line
  }

  package var description: String {
    var place = ""
    if let file { place += file }
    if let line { place += place.isEmpty ? "line \(line)" : ":\(line)" }
    return place.isEmpty ? message : "\(place): \(message)"
  }
}
