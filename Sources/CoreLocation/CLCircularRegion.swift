import Foundation

/// A circular geographic region, defined by a centre and a radius, that Core Location can
/// monitor (a geofence).
///
/// Equality: see ``CLRegion``.
open class CLCircularRegion: CLRegion {
  /// Creates a region defining a circular geographic area.
  ///
  /// - Parameters:
  ///   - center: The centre of the region.
  ///   - radius: The distance in metres from the centre to the boundary.
  ///   - identifier: A unique identifier for the region within the app.
  public init(center: CLLocationCoordinate2D, radius: CLLocationDistance, identifier: String) {
    super.init(identifier: identifier, center: center, radius: radius)
  }

  /// Decodes a region written by ``CLRegion/encode(with:)``.
  ///
  /// - Parameter coder: The keyed unarchiver to read from.
  /// - Returns: `nil` when the archive lacks the identifier, the centre or the radius.
  public required init?(coder: NSCoder) {
    super.init(coder: coder)
  }

  /// The centre of the region.
  open override var center: CLLocationCoordinate2D { storedCenter }

  /// The radius of the region in metres.
  open override var radius: CLLocationDistance { storedRadius }

  /// Returns whether the region contains a coordinate.
  ///
  /// Our rule (Apple publishes none): the coordinate is valid and its geodesic distance on the
  /// WGS 84 ellipsoid from the centre is at most ``radius``; the boundary counts as inside.
  ///
  /// - Parameter coordinate: The coordinate to test.
  /// - Returns: `true` when the coordinate lies within the circle.
  open override func contains(_ coordinate: CLLocationCoordinate2D) -> Bool {
    circleContains(coordinate)
  }

  /// Returns a new circular region with the same identifier, geometry and notification flags.
  ///
  /// - Parameter zone: Unused.
  /// - Returns: A `CLCircularRegion`.
  open override func copy(with zone: NSZone? = nil) -> Any {
    let copy = CLCircularRegion(center: storedCenter, radius: storedRadius, identifier: identifier)
    copy.notifyOnEntry = notifyOnEntry
    copy.notifyOnExit = notifyOnExit
    return copy
  }
}
