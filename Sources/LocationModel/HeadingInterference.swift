/// A magnetic disturbance: the measured field is far from what the World Magnetic Model expects.
package struct HeadingInterference: Sendable, Equatable {
  /// The magnitude of the measured field, microtesla.
  package var measured: Double
  /// The World Magnetic Model's total intensity at the location, microtesla; nil when no location
  /// (or no model for the date) was available and the fixed band was used.
  package var expected: Double?

  /// Creates a report.
  ///
  /// - Parameters:
  ///   - measured: Microtesla.
  ///   - expected: Microtesla, if known.
  package init(measured: Double, expected: Double?) {
    self.measured = measured
    self.expected = expected
  }
}
