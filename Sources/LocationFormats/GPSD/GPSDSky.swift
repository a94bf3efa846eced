/// gpsd's `SKY` object, reduced to what a location client uses: the dilutions of precision and
/// satellite counts (the per-satellite list is counted, not kept).
package struct GPSDSky: Sendable, Equatable {
  /// The device that produced the report.
  package var device: String?
  /// Time of the report, seconds since 1970.
  package var time: Double?
  /// Horizontal dilution of precision.
  package var hdop: Double?
  /// Vertical dilution of precision.
  package var vdop: Double?
  /// Position (spherical) dilution of precision.
  package var pdop: Double?
  /// Satellites in view: `nSat`, else the length of `satellites`.
  package var satellitesVisible: Int?
  /// Satellites used in the solution: `uSat`, else the `satellites` marked `used`.
  package var satellitesUsed: Int?
  /// Members that were present but unusable.
  package var invalidFields: [String]

  /// Creates a report; every member defaults to absent.
  package init(
    device: String? = nil, time: Double? = nil, hdop: Double? = nil, vdop: Double? = nil,
    pdop: Double? = nil, satellitesVisible: Int? = nil, satellitesUsed: Int? = nil,
    invalidFields: [String] = []
  ) {
    self.device = device
    self.time = time
    self.hdop = hdop
    self.vdop = vdop
    self.pdop = pdop
    self.satellitesVisible = satellitesVisible
    self.satellitesUsed = satellitesUsed
    self.invalidFields = invalidFields
  }
}
