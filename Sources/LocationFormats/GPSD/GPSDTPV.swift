/// gpsd's `TPV` object (time, position, velocity). Every member is optional, as in the protocol;
/// a member that is present but not usable (a string where a number belongs, a non-finite or
/// out-of-range number) is nil here and named in `invalidFields`.
///
/// Uncertainties (`eph`, `epv`, `eps`, `epd`, ...) are gpsd's: 95 % confidence figures in metres,
/// metres per second or degrees. `fix(receivedAt:source:)` converts them to the 68 % figures a
/// `Fix` carries.
package struct GPSDTPV: Sendable, Equatable {
  /// The device that produced the report (`/dev/ttyUSB0`, `tcp://...`).
  package var device: String?
  /// 0 unknown, 1 no fix, 2 two-dimensional fix, 3 three-dimensional fix.
  package var mode: Int?
  /// gpsd's fix status: 0 unknown, 1 GPS, 2 DGPS, 3 RTK fixed, 4 RTK float, 5 dead reckoning,
  /// 6 GNSS plus dead reckoning, 7 time only (surveyed-in), 8 simulated, 9 P(Y).
  package var status: Int?
  /// Time of the fix, seconds since 1970-01-01T00:00:00Z, from the ISO 8601 `time` member.
  package var time: Double?
  /// Latitude, degrees north, -90...90.
  package var latitude: Double?
  /// Longitude, degrees east, -180...180.
  package var longitude: Double?
  /// Height above the WGS-84 ellipsoid (`altHAE`), metres.
  package var altitudeHAE: Double?
  /// Height above mean sea level (`altMSL`), metres.
  package var altitudeMSL: Double?
  /// The legacy `alt` member (mean sea level in gpsd 3.20 and later), metres.
  package var altitude: Double?
  /// Geoid separation (`geoidSep`), metres.
  package var geoidSeparation: Double?
  /// Estimated horizontal position error, 95 %, metres.
  package var eph: Double?
  /// Estimated vertical error, 95 %, metres.
  package var epv: Double?
  /// Estimated longitude error, 95 %, metres.
  package var epx: Double?
  /// Estimated latitude error, 95 %, metres.
  package var epy: Double?
  /// Estimated time error, 95 %, seconds.
  package var ept: Double?
  /// Speed over ground, metres per second.
  package var speed: Double?
  /// Course over ground, degrees from true north, 0..<360.
  package var track: Double?
  /// Course over ground, degrees from magnetic north (`magtrack`).
  package var magneticTrack: Double?
  /// Magnetic variation (`magvar`), degrees, east positive.
  package var magneticVariation: Double?
  /// Climb (positive) or sink rate, metres per second.
  package var climb: Double?
  /// Estimated speed error, 95 %, metres per second.
  package var eps: Double?
  /// Estimated track error, 95 %, degrees.
  package var epd: Double?
  /// Estimated climb error, 95 %, metres per second.
  package var epc: Double?
  /// Members that were present but unusable (wrong type, not finite, out of range).
  package var invalidFields: [String]

  /// Creates a report; every member defaults to absent.
  package init(
    device: String? = nil, mode: Int? = nil, status: Int? = nil, time: Double? = nil,
    latitude: Double? = nil, longitude: Double? = nil, altitudeHAE: Double? = nil,
    altitudeMSL: Double? = nil, altitude: Double? = nil, geoidSeparation: Double? = nil,
    eph: Double? = nil, epv: Double? = nil, epx: Double? = nil, epy: Double? = nil,
    ept: Double? = nil, speed: Double? = nil, track: Double? = nil, magneticTrack: Double? = nil,
    magneticVariation: Double? = nil, climb: Double? = nil, eps: Double? = nil,
    epd: Double? = nil, epc: Double? = nil, invalidFields: [String] = []
  ) {
    self.device = device
    self.mode = mode
    self.status = status
    self.time = time
    self.latitude = latitude
    self.longitude = longitude
    self.altitudeHAE = altitudeHAE
    self.altitudeMSL = altitudeMSL
    self.altitude = altitude
    self.geoidSeparation = geoidSeparation
    self.eph = eph
    self.epv = epv
    self.epx = epx
    self.epy = epy
    self.ept = ept
    self.speed = speed
    self.track = track
    self.magneticTrack = magneticTrack
    self.magneticVariation = magneticVariation
    self.climb = climb
    self.eps = eps
    self.epd = epd
    self.epc = epc
    self.invalidFields = invalidFields
  }
}
