import Foundation
internal import Geodesy

/// The latitude, longitude, altitude, course and accuracy information of one location report.
///
/// Location objects are immutable. Equality and hashing are object identity, as for Apple's
/// `CLLocation`, which does not override `isEqual(_:)`: compare the properties you care about.
open class CLLocation: NSObject, NSCopying, NSSecureCoding, @unchecked Sendable {
  // @unchecked Sendable (as Apple's SDK declares it): every stored property is a `let`, and the
  // floor and source information objects it holds are immutable too, so a location can be read
  // from any thread.

  /// The measured values, kept together so that every initializer fills them in one place.
  struct Values: Sendable {
    var coordinate: CLLocationCoordinate2D
    var altitude: CLLocationDistance
    var ellipsoidalAltitude: CLLocationDistance
    var horizontalAccuracy: CLLocationAccuracy
    var verticalAccuracy: CLLocationAccuracy
    var course: CLLocationDirection
    var courseAccuracy: CLLocationDirectionAccuracy
    var speed: CLLocationSpeed
    var speedAccuracy: CLLocationSpeedAccuracy
    var timestamp: Date
  }

  private enum Key {
    static let latitude = "kCLLocationCodingKeyCoordinateLatitude"
    static let longitude = "kCLLocationCodingKeyCoordinateLongitude"
    static let altitude = "kCLLocationCodingKeyAltitude"
    static let ellipsoidalAltitude = "kCLLocationCodingKeyEllipsoidalAltitude"
    static let horizontalAccuracy = "kCLLocationCodingKeyHorizontalAccuracy"
    static let verticalAccuracy = "kCLLocationCodingKeyVerticalAccuracy"
    static let course = "kCLLocationCodingKeyCourse"
    static let courseAccuracy = "kCLLocationCodingKeyCourseAccuracy"
    static let speed = "kCLLocationCodingKeySpeed"
    static let speedAccuracy = "kCLLocationCodingKeySpeedAccuracy"
    static let timestamp = "kCLLocationCodingKeyTimestamp"
    static let floor = "kCLLocationCodingKeyFloor"
    static let sourceInformation = "kCLLocationCodingKeySourceInformation"
  }

  private let values: Values
  private let storedFloor: CLFloor?
  private let storedSourceInformation: CLLocationSourceInformation?

  // MARK: Creating a location

  /// Creates a location with every value given (Core Location's own initializer).
  init(values: Values, floor: CLFloor?, sourceInformation: CLLocationSourceInformation?) {
    self.values = values
    self.storedFloor = floor
    self.storedSourceInformation = sourceInformation
    super.init()
  }

  /// Creates a location at latitude 0, longitude 0 with the defaults of
  /// ``init(latitude:longitude:)``.
  public override init() {
    self.values = CLLocation.publicValues(
      coordinate: CLLocationCoordinate2D(), altitude: 0, horizontalAccuracy: 0,
      verticalAccuracy: -1, course: -1, courseAccuracy: -1, speed: -1, speedAccuracy: -1,
      timestamp: Date())
    self.storedFloor = nil
    self.storedSourceInformation = nil
    super.init()
  }

  /// Creates a location with the specified latitude and longitude.
  ///
  /// As Apple documents: `altitude` and `horizontalAccuracy` are 0, `verticalAccuracy` is -1 (the
  /// altitude is invalid), `speed` and `course` are -1, and `timestamp` is the time of creation.
  /// `speedAccuracy` and `courseAccuracy` are -1 as well.
  ///
  /// - Parameters:
  ///   - latitude: The latitude of the coordinate.
  ///   - longitude: The longitude of the coordinate.
  public init(latitude: CLLocationDegrees, longitude: CLLocationDegrees) {
    self.values = CLLocation.publicValues(
      coordinate: CLLocationCoordinate2D(latitude: latitude, longitude: longitude),
      altitude: 0, horizontalAccuracy: 0, verticalAccuracy: -1,
      course: -1, courseAccuracy: -1, speed: -1, speedAccuracy: -1, timestamp: Date())
    self.storedFloor = nil
    self.storedSourceInformation = nil
    super.init()
  }

  /// Creates a location with the specified coordinate and altitude information.
  ///
  /// `speed`, `course`, `speedAccuracy` and `courseAccuracy` are -1 (invalid).
  ///
  /// - Parameters:
  ///   - coordinate: The latitude and longitude.
  ///   - altitude: The altitude above mean sea level, in metres.
  ///   - hAccuracy: The radius of uncertainty of the coordinate in metres; negative: invalid.
  ///   - vAccuracy: The accuracy of the altitude in metres; negative: the altitude is invalid.
  ///   - timestamp: The time to associate with the location.
  public init(
    coordinate: CLLocationCoordinate2D,
    altitude: CLLocationDistance,
    horizontalAccuracy hAccuracy: CLLocationAccuracy,
    verticalAccuracy vAccuracy: CLLocationAccuracy,
    timestamp: Date
  ) {
    self.values = CLLocation.publicValues(
      coordinate: coordinate, altitude: altitude,
      horizontalAccuracy: hAccuracy, verticalAccuracy: vAccuracy,
      course: -1, courseAccuracy: -1, speed: -1, speedAccuracy: -1, timestamp: timestamp)
    self.storedFloor = nil
    self.storedSourceInformation = nil
    super.init()
  }

  /// Creates a location with the specified coordinate, altitude and course information.
  ///
  /// `speedAccuracy` and `courseAccuracy` are -1 (invalid).
  ///
  /// - Parameters:
  ///   - coordinate: The latitude and longitude.
  ///   - altitude: The altitude above mean sea level, in metres.
  ///   - hAccuracy: The radius of uncertainty of the coordinate in metres; negative: invalid.
  ///   - vAccuracy: The accuracy of the altitude in metres; negative: the altitude is invalid.
  ///   - course: The direction of travel in degrees clockwise from true north.
  ///   - speed: The speed in metres per second.
  ///   - timestamp: The time to associate with the location.
  public init(
    coordinate: CLLocationCoordinate2D,
    altitude: CLLocationDistance,
    horizontalAccuracy hAccuracy: CLLocationAccuracy,
    verticalAccuracy vAccuracy: CLLocationAccuracy,
    course: CLLocationDirection,
    speed: CLLocationSpeed,
    timestamp: Date
  ) {
    self.values = CLLocation.publicValues(
      coordinate: coordinate, altitude: altitude,
      horizontalAccuracy: hAccuracy, verticalAccuracy: vAccuracy,
      course: course, courseAccuracy: -1, speed: speed, speedAccuracy: -1, timestamp: timestamp)
    self.storedFloor = nil
    self.storedSourceInformation = nil
    super.init()
  }

  /// Creates a location with the specified coordinate, altitude, course and accuracy information.
  ///
  /// - Parameters:
  ///   - coordinate: The latitude and longitude.
  ///   - altitude: The altitude above mean sea level, in metres.
  ///   - hAccuracy: The radius of uncertainty of the coordinate in metres; negative: invalid.
  ///   - vAccuracy: The accuracy of the altitude in metres; negative: the altitude is invalid.
  ///   - course: The direction of travel in degrees clockwise from true north.
  ///   - courseAccuracy: The accuracy of the course in degrees; negative: the course is invalid.
  ///   - speed: The speed in metres per second.
  ///   - speedAccuracy: The accuracy of the speed in m/s; negative: the speed is invalid.
  ///   - timestamp: The time to associate with the location.
  public init(
    coordinate: CLLocationCoordinate2D,
    altitude: CLLocationDistance,
    horizontalAccuracy hAccuracy: CLLocationAccuracy,
    verticalAccuracy vAccuracy: CLLocationAccuracy,
    course: CLLocationDirection,
    courseAccuracy: CLLocationDirectionAccuracy,
    speed: CLLocationSpeed,
    speedAccuracy: CLLocationSpeedAccuracy,
    timestamp: Date
  ) {
    self.values = CLLocation.publicValues(
      coordinate: coordinate, altitude: altitude,
      horizontalAccuracy: hAccuracy, verticalAccuracy: vAccuracy,
      course: course, courseAccuracy: courseAccuracy,
      speed: speed, speedAccuracy: speedAccuracy, timestamp: timestamp)
    self.storedFloor = nil
    self.storedSourceInformation = nil
    super.init()
  }

  /// Creates a location with the specified coordinate, altitude, course, accuracy and source
  /// information.
  ///
  /// - Parameters:
  ///   - coordinate: The latitude and longitude.
  ///   - altitude: The altitude above mean sea level, in metres.
  ///   - hAccuracy: The radius of uncertainty of the coordinate in metres; negative: invalid.
  ///   - vAccuracy: The accuracy of the altitude in metres; negative: the altitude is invalid.
  ///   - course: The direction of travel in degrees clockwise from true north.
  ///   - courseAccuracy: The accuracy of the course in degrees; negative: the course is invalid.
  ///   - speed: The speed in metres per second.
  ///   - speedAccuracy: The accuracy of the speed in m/s; negative: the speed is invalid.
  ///   - timestamp: The time to associate with the location.
  ///   - sourceInfo: Where the location comes from.
  public init(
    coordinate: CLLocationCoordinate2D,
    altitude: CLLocationDistance,
    horizontalAccuracy hAccuracy: CLLocationAccuracy,
    verticalAccuracy vAccuracy: CLLocationAccuracy,
    course: CLLocationDirection,
    courseAccuracy: CLLocationDirectionAccuracy,
    speed: CLLocationSpeed,
    speedAccuracy: CLLocationSpeedAccuracy,
    timestamp: Date,
    sourceInfo: CLLocationSourceInformation
  ) {
    self.values = CLLocation.publicValues(
      coordinate: coordinate, altitude: altitude,
      horizontalAccuracy: hAccuracy, verticalAccuracy: vAccuracy,
      course: course, courseAccuracy: courseAccuracy,
      speed: speed, speedAccuracy: speedAccuracy, timestamp: timestamp)
    self.storedFloor = nil
    self.storedSourceInformation = sourceInfo
    super.init()
  }

  /// The values of a location made by a public initializer. Those initializers take no
  /// ellipsoidal height, so ours is a rule: `ellipsoidalAltitude` repeats `altitude` when the
  /// altitude is valid (the geoid separation is not modelled), and is 0 when it is not (Apple's
  /// documented value for an invalid ellipsoidal altitude).
  private static func publicValues(
    coordinate: CLLocationCoordinate2D,
    altitude: CLLocationDistance,
    horizontalAccuracy: CLLocationAccuracy,
    verticalAccuracy: CLLocationAccuracy,
    course: CLLocationDirection,
    courseAccuracy: CLLocationDirectionAccuracy,
    speed: CLLocationSpeed,
    speedAccuracy: CLLocationSpeedAccuracy,
    timestamp: Date
  ) -> Values {
    Values(
      coordinate: coordinate, altitude: altitude,
      ellipsoidalAltitude: verticalAccuracy > 0 ? altitude : 0,
      horizontalAccuracy: horizontalAccuracy, verticalAccuracy: verticalAccuracy,
      course: course, courseAccuracy: courseAccuracy,
      speed: speed, speedAccuracy: speedAccuracy, timestamp: timestamp)
  }

  // MARK: Location attributes

  /// The geographical coordinate.
  open var coordinate: CLLocationCoordinate2D { values.coordinate }

  /// The altitude above mean sea level in metres; valid only when ``verticalAccuracy`` is positive.
  open var altitude: CLLocationDistance { values.altitude }

  /// The height above the WGS 84 ellipsoid in metres; valid only when ``verticalAccuracy`` is
  /// positive, and 0 when it is not.
  open var ellipsoidalAltitude: CLLocationDistance { values.ellipsoidalAltitude }

  /// The radius of uncertainty of the coordinate in metres (68 % confidence); negative means the
  /// coordinate is invalid.
  open var horizontalAccuracy: CLLocationAccuracy { values.horizontalAccuracy }

  /// The uncertainty of the altitudes in metres (68 % confidence); 0 or negative means the
  /// altitudes are invalid.
  open var verticalAccuracy: CLLocationAccuracy { values.verticalAccuracy }

  /// The direction of travel in degrees clockwise from true north; negative means invalid.
  open var course: CLLocationDirection { values.course }

  /// The accuracy of ``course`` in degrees; negative means the course is invalid.
  open var courseAccuracy: CLLocationDirectionAccuracy { values.courseAccuracy }

  /// The instantaneous speed in metres per second; negative means invalid.
  open var speed: CLLocationSpeed { values.speed }

  /// The accuracy of ``speed`` in metres per second; negative means the speed is invalid.
  open var speedAccuracy: CLLocationSpeedAccuracy { values.speedAccuracy }

  /// The time at which the location was determined.
  open var timestamp: Date { values.timestamp }

  /// The logical floor of the building, or `nil` when the source does not know it.
  open var floor: CLFloor? { storedFloor }

  /// Information about the source of the location; `nil` for locations made without it.
  open var sourceInformation: CLLocationSourceInformation? { storedSourceInformation }

  // MARK: Distance

  /// Returns the distance in metres from this location to another one.
  ///
  /// The distance is the length of the geodesic between the two coordinates on the WGS 84
  /// ellipsoid; altitudes are ignored, as Apple documents.
  ///
  /// - Parameter location: The other location.
  /// - Returns: The distance in metres.
  open func distance(from location: CLLocation) -> CLLocationDistance {
    Geodesic.wgs84.distance(
      latitude1: coordinate.latitude, longitude1: coordinate.longitude,
      latitude2: location.coordinate.latitude, longitude2: location.coordinate.longitude)
  }

  /// Returns the distance in metres from this location to another one.
  ///
  /// - Parameter location: The other location.
  /// - Returns: ``distance(from:)``.
  @available(*, deprecated, renamed: "distance(from:)")
  open func getDistanceFrom(_ location: CLLocation) -> CLLocationDistance {
    distance(from: location)
  }

  // MARK: Description

  /// Apple's format: `<+37.33233141,-122.03121860> +/- 5.00m (speed 0.00 mps / course -1.00) @`
  /// followed by the timestamp in the current locale (short date, full time).
  open override var description: String {
    let formatter = DateFormatter()
    formatter.dateStyle = .short
    formatter.timeStyle = .full
    let position = String(
      format: "<%+.8f,%+.8f> +/- %.2fm", coordinate.latitude, coordinate.longitude,
      horizontalAccuracy)
    let motion = String(format: "(speed %.2f mps / course %.2f)", speed, course)
    return "\(position) \(motion) @ \(formatter.string(from: timestamp))"
  }

  // MARK: NSCopying

  /// Returns the location itself: locations are immutable.
  ///
  /// - Parameter zone: Unused.
  /// - Returns: `self`.
  open func copy(with zone: NSZone? = nil) -> Any {
    self
  }

  // MARK: NSSecureCoding

  /// `true`: locations decode only through the secure-coding checks.
  public class var supportsSecureCoding: Bool { true }

  /// Encodes every value of the location with keyed coding.
  ///
  /// - Parameter coder: The keyed archiver to write to.
  open func encode(with coder: NSCoder) {
    coder.encode(values.coordinate.latitude, forKey: Key.latitude)
    coder.encode(values.coordinate.longitude, forKey: Key.longitude)
    coder.encode(values.altitude, forKey: Key.altitude)
    coder.encode(values.ellipsoidalAltitude, forKey: Key.ellipsoidalAltitude)
    coder.encode(values.horizontalAccuracy, forKey: Key.horizontalAccuracy)
    coder.encode(values.verticalAccuracy, forKey: Key.verticalAccuracy)
    coder.encode(values.course, forKey: Key.course)
    coder.encode(values.courseAccuracy, forKey: Key.courseAccuracy)
    coder.encode(values.speed, forKey: Key.speed)
    coder.encode(values.speedAccuracy, forKey: Key.speedAccuracy)
    coder.encode(values.timestamp.timeIntervalSinceReferenceDate, forKey: Key.timestamp)
    if let storedFloor {
      coder.encode(storedFloor, forKey: Key.floor)
    }
    if let storedSourceInformation {
      coder.encode(storedSourceInformation, forKey: Key.sourceInformation)
    }
  }

  /// Decodes a location written by ``encode(with:)``.
  ///
  /// - Parameter coder: The keyed unarchiver to read from.
  /// - Returns: `nil` when the archive lacks the coordinate or the timestamp. Other missing values
  ///   decode as invalid (-1; 0 for the altitudes).
  public required init?(coder: NSCoder) {
    guard coder.allowsKeyedCoding,
      coder.containsValue(forKey: Key.latitude),
      coder.containsValue(forKey: Key.longitude),
      coder.containsValue(forKey: Key.timestamp)
    else { return nil }
    func decode(_ key: String, absent: Double) -> Double {
      coder.containsValue(forKey: key) ? coder.decodeDouble(forKey: key) : absent
    }
    self.values = Values(
      coordinate: CLLocationCoordinate2D(
        latitude: coder.decodeDouble(forKey: Key.latitude),
        longitude: coder.decodeDouble(forKey: Key.longitude)),
      altitude: decode(Key.altitude, absent: 0),
      ellipsoidalAltitude: decode(Key.ellipsoidalAltitude, absent: 0),
      horizontalAccuracy: decode(Key.horizontalAccuracy, absent: -1),
      verticalAccuracy: decode(Key.verticalAccuracy, absent: -1),
      course: decode(Key.course, absent: -1),
      courseAccuracy: decode(Key.courseAccuracy, absent: -1),
      speed: decode(Key.speed, absent: -1),
      speedAccuracy: decode(Key.speedAccuracy, absent: -1),
      timestamp: Date(timeIntervalSinceReferenceDate: coder.decodeDouble(forKey: Key.timestamp)))
    // Decoding an absent key is an error under secure coding, hence the checks.
    self.storedFloor =
      coder.containsValue(forKey: Key.floor)
      ? coder.decodeObject(of: CLFloor.self, forKey: Key.floor) : nil
    self.storedSourceInformation =
      coder.containsValue(forKey: Key.sourceInformation)
      ? coder.decodeObject(of: CLLocationSourceInformation.self, forKey: Key.sourceInformation)
      : nil
    super.init()
  }
}
