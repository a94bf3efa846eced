/// What a client asks of location updates (Apple's `desiredAccuracy` and `distanceFilter`).
package struct UpdateRequest: Sendable, Equatable {
  /// Wanted accuracy in metres; negative values are Apple's "best" constants.
  package var desiredAccuracy: Double
  /// Minimum distance in metres between delivered locations; zero or negative delivers every fix.
  package var distanceFilter: Double
  /// Whether updates pause while the device is stationary (`pausesLocationUpdatesAutomatically`;
  /// see `AutoPause`).
  package var pausesAutomatically: Bool
  /// The client's activity type (`activityType`), which sets the stationary radius and time.
  package var activity: ActivityType

  /// Creates a request.
  /// - Parameters:
  ///   - desiredAccuracy: Wanted accuracy in metres; negative: best.
  ///   - distanceFilter: Minimum distance between deliveries in metres; zero or negative: none.
  ///   - pausesAutomatically: Whether updates pause while stationary (default false here; the
  ///     public API's default is true).
  ///   - activity: The activity type (default `.other`).
  package init(
    desiredAccuracy: Double = -1, distanceFilter: Double = -1, pausesAutomatically: Bool = false,
    activity: ActivityType = .other
  ) {
    self.desiredAccuracy = desiredAccuracy
    self.distanceFilter = distanceFilter
    self.pausesAutomatically = pausesAutomatically
    self.activity = activity
  }
}

/// The kinds of activity (Apple's `CLActivityType` and `LiveConfiguration`).
package enum ActivityType: String, Sendable, Equatable, CaseIterable {
  /// Anything else.
  case other
  /// A car following roads.
  case automotiveNavigation
  /// Walking, running, cycling for exercise.
  case fitness
  /// Boats, trains, off-road.
  case otherNavigation
  /// In the air.
  case airborne
}
