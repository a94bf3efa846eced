/// A circular region read from a GeoJSON file: a Point feature with a radius.
///
/// The values map one to one onto `CLCircularRegion` (identifier, centre, radius) and its
/// `notifyOnEntry` / `notifyOnExit`.
package struct GeoJSONRegion: Sendable, Equatable {
  /// The region's identifier: the feature's `id`, else `properties.id`, else
  /// `properties.identifier` (a number is written in decimal, integers without a fraction).
  package var identifier: String
  /// The centre's latitude in degrees (WGS-84), the second GeoJSON coordinate.
  package var latitude: Double
  /// The centre's longitude in degrees (WGS-84), the first GeoJSON coordinate.
  package var longitude: Double
  /// The radius in metres, from `properties.radius`.
  package var radius: Double
  /// Whether entering the region is reported (`properties.notifyOnEntry`, default true as in
  /// CoreLocation).
  package var notifyOnEntry: Bool
  /// Whether leaving the region is reported (`properties.notifyOnExit`, default true as in
  /// CoreLocation).
  package var notifyOnExit: Bool

  /// Creates a region.
  package init(
    identifier: String, latitude: Double, longitude: Double, radius: Double,
    notifyOnEntry: Bool = true, notifyOnExit: Bool = true
  ) {
    self.identifier = identifier
    self.latitude = latitude
    self.longitude = longitude
    self.radius = radius
    self.notifyOnEntry = notifyOnEntry
    self.notifyOnExit = notifyOnExit
  }
}
