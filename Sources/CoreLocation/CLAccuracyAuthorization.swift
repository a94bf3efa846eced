/// Constants that indicate the level of location accuracy the app is authorized to use.
public enum CLAccuracyAuthorization: Int, Sendable {
  /// The user authorized the app to access location data with full accuracy.
  case fullAccuracy = 0

  /// The user authorized the app to access location data with reduced accuracy only.
  case reducedAccuracy = 1
}
