/// The latitude and longitude of a location, in the WGS 84 reference frame.
///
/// As in Apple's SDK, the structure has no `Equatable` conformance: compare `latitude` and
/// `longitude` yourself.
public struct CLLocationCoordinate2D: Sendable {
  /// The latitude in degrees; positive is north of the equator.
  public var latitude: CLLocationDegrees

  /// The longitude in degrees; positive is east of the prime meridian.
  public var longitude: CLLocationDegrees

  /// Creates the coordinate at latitude 0, longitude 0.
  public init() {
    self.latitude = 0
    self.longitude = 0
  }

  /// Creates a coordinate with the given latitude and longitude.
  ///
  /// - Parameters:
  ///   - latitude: The latitude in degrees.
  ///   - longitude: The longitude in degrees.
  public init(latitude: CLLocationDegrees, longitude: CLLocationDegrees) {
    self.latitude = latitude
    self.longitude = longitude
  }
}

/// An invalid coordinate: latitude -180, longitude -180, as in Apple's SDK.
public let kCLLocationCoordinate2DInvalid = CLLocationCoordinate2D(latitude: -180, longitude: -180)

/// Returns whether a coordinate is valid.
///
/// - Parameter coord: The coordinate to check.
/// - Returns: `true` when the latitude is within -90...90 and the longitude within -180...180
///   (both bounds included); `false` otherwise, and for NaN.
public func CLLocationCoordinate2DIsValid(_ coord: CLLocationCoordinate2D) -> Bool {
  (-90.0...90.0).contains(coord.latitude) && (-180.0...180.0).contains(coord.longitude)
}

/// Makes a coordinate from a latitude and a longitude.
///
/// - Parameters:
///   - latitude: The latitude in degrees.
///   - longitude: The longitude in degrees.
/// - Returns: The coordinate; no validation or normalization is done.
public func CLLocationCoordinate2DMake(
  _ latitude: CLLocationDegrees,
  _ longitude: CLLocationDegrees
) -> CLLocationCoordinate2D {
  CLLocationCoordinate2D(latitude: latitude, longitude: longitude)
}
