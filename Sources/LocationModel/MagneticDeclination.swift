/// A declination from the World Magnetic Model.
package struct MagneticDeclination: Sendable, Equatable {
  /// Degrees, positive east: true heading = magnetic heading + declination.
  package var degrees: Double
  /// The model that gave it, e.g. "WMM-2015v2" (chosen by the sample's date).
  package var modelName: String

  /// Creates a declination.
  ///
  /// - Parameters:
  ///   - degrees: Positive east.
  ///   - modelName: The model's name.
  package init(degrees: Double, modelName: String) {
    self.degrees = degrees
    self.modelName = modelName
  }
}
