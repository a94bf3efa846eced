/// The geomagnetic field at one place and date, from the World Magnetic Model.
///
/// Angles are in degrees, intensities in nanotesla, yearly changes per year. Components are in the
/// local geodetic frame: north (X), east (Y) and down (Z).
public struct MagneticField: Sendable, Equatable {
  /// Declination D: the angle from true north to the horizontal field, degrees, positive east.
  public var declination: Double
  /// Inclination I (dip): the angle of the field below the horizontal, degrees, positive down.
  public var inclination: Double
  /// Horizontal intensity H, nT.
  public var horizontalIntensity: Double
  /// Total intensity F, nT.
  public var totalIntensity: Double
  /// North component X, nT.
  public var north: Double
  /// East component Y, nT.
  public var east: Double
  /// Down component Z, nT.
  public var down: Double
  /// Yearly change of the declination, degrees per year.
  public var declinationChange: Double
  /// Yearly change of the inclination, degrees per year.
  public var inclinationChange: Double
  /// Yearly change of the horizontal intensity, nT per year.
  public var horizontalIntensityChange: Double
  /// Yearly change of the total intensity, nT per year.
  public var totalIntensityChange: Double
  /// Yearly change of the north component, nT per year.
  public var northChange: Double
  /// Yearly change of the east component, nT per year.
  public var eastChange: Double
  /// Yearly change of the down component, nT per year.
  public var downChange: Double
  /// The model that produced the values, e.g. "WMM-2025".
  public var modelName: String

  /// Creates a field from its elements (the model fills every one).
  ///
  /// - Parameters:
  ///   - declination: Degrees, positive east.
  ///   - inclination: Degrees, positive down.
  ///   - horizontalIntensity: nT.
  ///   - totalIntensity: nT.
  ///   - north: X, nT.
  ///   - east: Y, nT.
  ///   - down: Z, nT.
  ///   - declinationChange: Degrees per year.
  ///   - inclinationChange: Degrees per year.
  ///   - horizontalIntensityChange: nT per year.
  ///   - totalIntensityChange: nT per year.
  ///   - northChange: nT per year.
  ///   - eastChange: nT per year.
  ///   - downChange: nT per year.
  ///   - modelName: The model's name.
  public init(
    declination: Double,
    inclination: Double,
    horizontalIntensity: Double,
    totalIntensity: Double,
    north: Double,
    east: Double,
    down: Double,
    declinationChange: Double,
    inclinationChange: Double,
    horizontalIntensityChange: Double,
    totalIntensityChange: Double,
    northChange: Double,
    eastChange: Double,
    downChange: Double,
    modelName: String
  ) {
    self.declination = declination
    self.inclination = inclination
    self.horizontalIntensity = horizontalIntensity
    self.totalIntensity = totalIntensity
    self.north = north
    self.east = east
    self.down = down
    self.declinationChange = declinationChange
    self.inclinationChange = inclinationChange
    self.horizontalIntensityChange = horizontalIntensityChange
    self.totalIntensityChange = totalIntensityChange
    self.northChange = northChange
    self.eastChange = eastChange
    self.downChange = downChange
    self.modelName = modelName
  }

  /// True in the model's "blackout zone" (H below 2,000 nT, near the magnetic poles), where
  /// compasses are unreliable and the declination should not be trusted (WMM technical report,
  /// section 5).
  public var isInBlackoutZone: Bool { horizontalIntensity < 2_000 }

  /// True in the model's "caution zone" (H from 2,000 nT to below 6,000 nT), where compasses may be
  /// degraded (WMM technical report, section 5).
  public var isInCautionZone: Bool { horizontalIntensity >= 2_000 && horizontalIntensity < 6_000 }
}
