/// gpsd's `ATT` object: a compass, an attitude sensor or an IMU (`$HCHDT`, `$--HDT`, Unicore
/// `GPYBM`, u-blox ESF, ...). Angles are degrees; status members are gpsd's one-letter codes
/// (`C` calibrated, `L` low alarm, `M` low warning, `N` normal, `O` high warning, `P` high
/// alarm, `V` magnetometer voltage level alarm).
package struct GPSDAttitude: Sendable, Equatable {
  /// The device that produced the report.
  package var device: String?
  /// Time of the report, seconds since 1970.
  package var time: Double?
  /// Heading, degrees from true north.
  package var heading: Double?
  /// Heading, degrees from magnetic north (`mheading`).
  package var magneticHeading: Double?
  /// Magnetometer status (`mag_st`).
  package var magneticStatus: String?
  /// Pitch, degrees.
  package var pitch: Double?
  /// Pitch sensor status (`pitch_st`).
  package var pitchStatus: String?
  /// Roll, degrees.
  package var roll: Double?
  /// Roll sensor status (`roll_st`).
  package var rollStatus: String?
  /// Yaw, degrees.
  package var yaw: Double?
  /// Yaw sensor status (`yaw_st`).
  package var yawStatus: String?
  /// Rate of turn, degrees per minute (`rot`).
  package var rateOfTurn: Double?
  /// Magnetic dip, degrees.
  package var dip: Double?
  /// Magnitude of the magnetic field (`mag_len`), sensor units.
  package var magneticLength: Double?
  /// Magnetic field, x component (`mag_x`).
  package var magneticX: Double?
  /// Magnetic field, y component (`mag_y`).
  package var magneticY: Double?
  /// Magnetic field, z component (`mag_z`).
  package var magneticZ: Double?
  /// Magnitude of the acceleration (`acc_len`).
  package var accelerationLength: Double?
  /// Acceleration, x component (`acc_x`).
  package var accelerationX: Double?
  /// Acceleration, y component (`acc_y`).
  package var accelerationY: Double?
  /// Acceleration, z component (`acc_z`).
  package var accelerationZ: Double?
  /// Rotation rate about x (`gyro_x`), degrees per second.
  package var gyroX: Double?
  /// Rotation rate about y (`gyro_y`), degrees per second.
  package var gyroY: Double?
  /// Rotation rate about z (`gyro_z`), degrees per second.
  package var gyroZ: Double?
  /// Sensor temperature (`temp`), degrees Celsius.
  package var temperature: Double?
  /// Water depth (`depth`), metres.
  package var depth: Double?
  /// Members that were present but unusable.
  package var invalidFields: [String]

  /// Creates a report with only a device and time; set the other members as needed.
  package init(device: String? = nil, time: Double? = nil, invalidFields: [String] = []) {
    self.device = device
    self.time = time
    self.invalidFields = invalidFields
  }
}
