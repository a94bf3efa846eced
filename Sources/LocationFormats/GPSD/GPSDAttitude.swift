/// gpsd's `ATT` object: a compass, an attitude sensor or an IMU (`$HCHDT`, `$--HDT`, Unicore
/// `GPYBM`, u-blox ESF, ...). Angles are degrees; status members are gpsd's one-letter codes
/// (`C` calibrated, `L` low alarm, `M` low warning, `N` normal, `O` high warning, `P` high
/// alarm, `V` magnetometer voltage level alarm).
public struct GPSDAttitude: Sendable, Equatable {
  /// The device that produced the report.
  public var device: String?
  /// Time of the report, seconds since 1970.
  public var time: Double?
  /// Heading, degrees from true north.
  public var heading: Double?
  /// Heading, degrees from magnetic north (`mheading`).
  public var magneticHeading: Double?
  /// Magnetometer status (`mag_st`).
  public var magneticStatus: String?
  /// Pitch, degrees.
  public var pitch: Double?
  /// Pitch sensor status (`pitch_st`).
  public var pitchStatus: String?
  /// Roll, degrees.
  public var roll: Double?
  /// Roll sensor status (`roll_st`).
  public var rollStatus: String?
  /// Yaw, degrees.
  public var yaw: Double?
  /// Yaw sensor status (`yaw_st`).
  public var yawStatus: String?
  /// Rate of turn, degrees per minute (`rot`).
  public var rateOfTurn: Double?
  /// Magnetic dip, degrees.
  public var dip: Double?
  /// Magnitude of the magnetic field (`mag_len`), sensor units.
  public var magneticLength: Double?
  /// Magnetic field, x component (`mag_x`).
  public var magneticX: Double?
  /// Magnetic field, y component (`mag_y`).
  public var magneticY: Double?
  /// Magnetic field, z component (`mag_z`).
  public var magneticZ: Double?
  /// Magnitude of the acceleration (`acc_len`).
  public var accelerationLength: Double?
  /// Acceleration, x component (`acc_x`).
  public var accelerationX: Double?
  /// Acceleration, y component (`acc_y`).
  public var accelerationY: Double?
  /// Acceleration, z component (`acc_z`).
  public var accelerationZ: Double?
  /// Rotation rate about x (`gyro_x`), degrees per second.
  public var gyroX: Double?
  /// Rotation rate about y (`gyro_y`), degrees per second.
  public var gyroY: Double?
  /// Rotation rate about z (`gyro_z`), degrees per second.
  public var gyroZ: Double?
  /// Sensor temperature (`temp`), degrees Celsius.
  public var temperature: Double?
  /// Water depth (`depth`), metres.
  public var depth: Double?
  /// Members that were present but unusable.
  public var invalidFields: [String]

  /// Creates a report with only a device and time; set the other members as needed.
  public init(device: String? = nil, time: Double? = nil, invalidFields: [String] = []) {
    self.device = device
    self.time = time
    self.invalidFields = invalidFields
  }
}
