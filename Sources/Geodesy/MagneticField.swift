/// The geomagnetic field at one place and date, from the World Magnetic Model.
///
/// Angles are in degrees, intensities in nanotesla, yearly changes per year. Components are in the
/// local geodetic frame: north (X), east (Y) and down (Z).
package struct MagneticField: Sendable, Equatable {
  /// Declination D: the angle from true north to the horizontal field, degrees, positive east.
  package var declination: Double
  /// Inclination I (dip): the angle of the field below the horizontal, degrees, positive down.
  package var inclination: Double
  /// Horizontal intensity H, nT.
  package var horizontalIntensity: Double
  /// Total intensity F, nT.
  package var totalIntensity: Double
  /// North component X, nT.
  package var north: Double
  /// East component Y, nT.
  package var east: Double
  /// Down component Z, nT.
  package var down: Double
  /// Yearly change of the declination, degrees per year.
  package var declinationChange: Double
  /// Yearly change of the inclination, degrees per year.
  package var inclinationChange: Double
  /// Yearly change of the horizontal intensity, nT per year.
  package var horizontalIntensityChange: Double
  /// Yearly change of the total intensity, nT per year.
  package var totalIntensityChange: Double
  /// Yearly change of the north component, nT per year.
  package var northChange: Double
  /// Yearly change of the east component, nT per year.
  package var eastChange: Double
  /// Yearly change of the down component, nT per year.
  package var downChange: Double
  /// The model that produced the values, e.g. "WMM-2025".
  package var modelName: String

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
  package init(
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
  package var isInBlackoutZone: Bool { horizontalIntensity < 2_000 }

  /// True in the model's "caution zone" (H from 2,000 nT to below 6,000 nT), where compasses may be
  /// degraded (WMM technical report, section 5).
  package var isInCautionZone: Bool { horizontalIntensity >= 2_000 && horizontalIntensity < 6_000 }
}
