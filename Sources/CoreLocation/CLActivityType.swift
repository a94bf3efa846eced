/// Constants that indicate the type of activity associated with location updates.
public enum CLActivityType: Int, Sendable {
  /// The location manager is used for an unspecified activity.
  case other = 1

  /// Positioning in an automobile following a road network.
  case automotiveNavigation = 2

  /// Positioning during dedicated fitness sessions: walking, running, cycling.
  case fitness = 3

  /// Positioning for activities that may not follow roads: cycling, scooters, trains, boats,
  /// off-road vehicles.
  case otherNavigation = 4

  /// Positioning in the air.
  case airborne = 5
}
