/// One visit event: a place where the device stayed, reported once when the stay is recognised
/// (no departure yet) and once when it ends (`CLVisit`; the rule is `VisitDetector`'s).
///
/// Times are wall-clock seconds since 1970 and are the times of the fixes that bound the stay,
/// never the time the event was made.
package struct Visit: Sendable, Equatable, Hashable {
  /// Latitude of the place, degrees (WGS-84).
  package var latitude: Double
  /// Longitude of the place, degrees (WGS-84).
  package var longitude: Double
  /// Radius of uncertainty of the place, metres.
  package var horizontalAccuracy: Double
  /// When the device arrived, seconds since 1970; nil when it was already there when monitoring
  /// began (`CLVisit.arrivalDate` is then `Date.distantPast`).
  package var arrival: Double?
  /// When it left, seconds since 1970; nil while it is still there (`CLVisit.departureDate` is
  /// then `Date.distantFuture`).
  package var departure: Double?

  /// Creates a visit.
  /// - Parameters:
  ///   - latitude: Degrees.
  ///   - longitude: Degrees.
  ///   - horizontalAccuracy: Metres.
  ///   - arrival: Seconds since 1970, or nil when unknown.
  ///   - departure: Seconds since 1970, or nil while the stay goes on.
  package init(
    latitude: Double, longitude: Double, horizontalAccuracy: Double, arrival: Double?,
    departure: Double?
  ) {
    self.latitude = latitude
    self.longitude = longitude
    self.horizontalAccuracy = horizontalAccuracy
    self.arrival = arrival
    self.departure = departure
  }

  /// Whether this is the event of a departure (it has a departure time).
  package var isDeparture: Bool { departure != nil }
}
