/// Constants that indicate the app's authorization to use location services.
public enum CLAuthorizationStatus: Int32, Sendable {
  /// The user has not chosen whether the app can use location services.
  case notDetermined = 0

  /// The app is not authorized to use location services, and the user cannot change that.
  case restricted = 1

  /// The user denied the use of location services for the app, or they are disabled globally.
  case denied = 2

  /// The user authorized the app to start location services at any time.
  case authorizedAlways = 3

  /// The user authorized the app to start location services while it is in use.
  case authorizedWhenInUse = 4

  /// The user authorized the app to use location services (the macOS name of
  /// ``authorizedAlways``, same raw value 3).
  @available(*, deprecated, renamed: "authorizedAlways")
  public static var authorized: CLAuthorizationStatus { .authorizedAlways }
}
