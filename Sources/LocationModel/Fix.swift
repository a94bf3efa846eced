/// One position report from a source: the engine's own value type, independent of `CLLocation`.
///
/// `Fix` lives in `LocationModel`, the target of values that every layer shares: producers
/// (`LocationFormats`, `LocationSources`), the engine, the store and the daemon's protocol
/// (`docs/architecture.md`, "Layers").
///
/// Conventions follow Apple's `CLLocation` so that mapping is a copy:
/// - `horizontalAccuracy` is the radius of 68 % confidence in metres; negative means the coordinate is
///   invalid. Sources that report another confidence convert before building a `Fix`.
/// - `verticalAccuracy`, `speed`, `speedAccuracy`, `course`, `courseAccuracy`: negative means unknown.
/// - `time` is wall-clock time in seconds since 1970-01-01T00:00:00Z (UTC).
package struct Fix: Sendable, Equatable {
  /// Geodetic latitude on WGS-84, degrees, -90...90.
  package var latitude: Double
  /// Geodetic longitude on WGS-84, degrees, -180...180.
  package var longitude: Double
  /// Height above mean sea level in metres, if known.
  package var altitude: Double?
  /// Height above the WGS-84 ellipsoid in metres, if known.
  package var ellipsoidalAltitude: Double?
  /// Radius of 68 % confidence in metres; negative: the coordinate is invalid.
  package var horizontalAccuracy: Double
  /// 68 % confidence of the altitudes in metres; negative: unknown.
  package var verticalAccuracy: Double
  /// Ground speed in metres per second; negative: unknown.
  package var speed: Double
  /// 68 % confidence of `speed` in metres per second; negative: unknown.
  package var speedAccuracy: Double
  /// Course over ground, degrees clockwise from true north, 0..<360; negative: unknown.
  package var course: Double
  /// 68 % confidence of `course` in degrees; negative: unknown.
  package var courseAccuracy: Double
  /// Time of the fix: seconds since 1970-01-01T00:00:00Z.
  package var time: Double
  /// How the position was obtained.
  package var quality: FixQuality
  /// Number of satellites used in the solution, if the source says.
  package var satellitesUsed: Int?
  /// Building floor, if the source knows it.
  package var floor: Int?
  /// True when the fix was produced by software (replay, simulation) rather than a receiver.
  package var isSimulated: Bool
  /// The URL (or another stable name) of the source that produced the fix.
  package var source: String

  /// Creates a fix; every optional measure defaults to "unknown".
  package init(
    latitude: Double,
    longitude: Double,
    altitude: Double? = nil,
    ellipsoidalAltitude: Double? = nil,
    horizontalAccuracy: Double,
    verticalAccuracy: Double = -1,
    speed: Double = -1,
    speedAccuracy: Double = -1,
    course: Double = -1,
    courseAccuracy: Double = -1,
    time: Double,
    quality: FixQuality = .autonomous,
    satellitesUsed: Int? = nil,
    floor: Int? = nil,
    isSimulated: Bool = false,
    source: String = ""
  ) {
    self.latitude = latitude
    self.longitude = longitude
    self.altitude = altitude
    self.ellipsoidalAltitude = ellipsoidalAltitude
    self.horizontalAccuracy = horizontalAccuracy
    self.verticalAccuracy = verticalAccuracy
    self.speed = speed
    self.speedAccuracy = speedAccuracy
    self.course = course
    self.courseAccuracy = courseAccuracy
    self.time = time
    self.quality = quality
    self.satellitesUsed = satellitesUsed
    self.floor = floor
    self.isSimulated = isSimulated
    self.source = source
  }

  /// True when latitude and longitude are finite and in range and the accuracy is not negative.
  package var hasValidCoordinate: Bool {
    latitude.isFinite && longitude.isFinite && abs(latitude) <= 90 && abs(longitude) <= 180
      && horizontalAccuracy >= 0
  }
}

/// How a position was obtained (NMEA GGA quality indicator, gpsd `status`, or the source's nature).
package enum FixQuality: Int, Sendable, Equatable, CaseIterable {
  /// No position.
  case none = 0
  /// Autonomous GNSS fix.
  case autonomous = 1
  /// Differential GNSS (DGPS, SBAS).
  case differential = 2
  /// Precise positioning service (PPS).
  case precise = 3
  /// RTK with fixed integers.
  case rtkFixed = 4
  /// RTK with float integers.
  case rtkFloat = 5
  /// Dead reckoning (estimated).
  case estimated = 6
  /// Entered by hand (a static position).
  case manual = 7
  /// Simulated (replay, simulator).
  case simulated = 8
  /// Network-derived (Wi-Fi, cell, IP), as from GeoClue.
  case network = 9

  /// Whether this is `.simulated`. A decoder asks for every fix it makes: `quality == .simulated`
  /// in another module calls `==` through the enum's `Equatable` witness table (a lazy accessor
  /// and a dispatch thunk, cold code on the way from the receiver to the app); this getter is one
  /// direct call. (Swift 6.3 inlines no `package` declaration across modules, `@inlinable` or
  /// not: `docs/performance.md`, "Latency".)
  package var isSimulated: Bool {
    if case .simulated = self { return true }
    return false
  }
}
