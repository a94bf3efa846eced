/// A declination from the World Magnetic Model.
public struct MagneticDeclination: Sendable, Equatable {
  /// Degrees, positive east: true heading = magnetic heading + declination.
  public var degrees: Double
  /// The model that gave it, e.g. "WMM-2015v2" (chosen by the sample's date).
  public var modelName: String

  /// Creates a declination.
  ///
  /// - Parameters:
  ///   - degrees: Positive east.
  ///   - modelName: The model's name.
  public init(degrees: Double, modelName: String) {
    self.degrees = degrees
    self.modelName = modelName
  }
}
