/// gpsd's `SKY` object, reduced to what a location client uses: the dilutions of precision and
/// satellite counts (the per-satellite list is counted, not kept).
public struct GPSDSky: Sendable, Equatable {
  /// The device that produced the report.
  public var device: String?
  /// Time of the report, seconds since 1970.
  public var time: Double?
  /// Horizontal dilution of precision.
  public var hdop: Double?
  /// Vertical dilution of precision.
  public var vdop: Double?
  /// Position (spherical) dilution of precision.
  public var pdop: Double?
  /// Satellites in view: `nSat`, else the length of `satellites`.
  public var satellitesVisible: Int?
  /// Satellites used in the solution: `uSat`, else the `satellites` marked `used`.
  public var satellitesUsed: Int?
  /// Members that were present but unusable.
  public var invalidFields: [String]

  /// Creates a report; every member defaults to absent.
  public init(
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
