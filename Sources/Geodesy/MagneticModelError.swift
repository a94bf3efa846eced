/// Why the World Magnetic Model could not give a field.
///
/// Messages never contain the position asked about.
package struct MagneticModelError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The kinds of failure.
  package enum Code: Sendable, Equatable {
    /// The date is outside ``MagneticModel/validRange`` (2010.0...2030.0): no model covers it.
    case outOfValidRange
    /// A latitude, longitude, height or date that is not a finite number in its range.
    case invalidInput
  }

  /// What went wrong.
  package var code: Code
  /// A human-readable explanation.
  package var message: String

  /// Creates an error.
  ///
  /// - Parameters:
  ///   - code: The kind of failure.
  ///   - message: A human-readable explanation (no coordinates).
  package init(code: Code, message: String) {
    self.code = code
    self.message = message
  }

  /// The message, prefixed by the code.
  package var description: String { "MagneticModelError.\(code): \(message)" }
}
