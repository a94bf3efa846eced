package import LocationModel

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

extension CLAuthorizationStatus {
  /// The public status of the runtime's status.
  package init(_ status: AuthorizationStatus) {
    switch status {
    case .notDetermined: self = .notDetermined
    case .restricted: self = .restricted
    case .denied: self = .denied
    case .authorizedAlways: self = .authorizedAlways
    case .authorizedWhenInUse: self = .authorizedWhenInUse
    }
  }

  /// The runtime's status of this public one.
  package var modelValue: AuthorizationStatus {
    switch self {
    case .notDetermined: return .notDetermined
    case .restricted: return .restricted
    case .denied: return .denied
    case .authorizedAlways: return .authorizedAlways
    case .authorizedWhenInUse: return .authorizedWhenInUse
    }
  }
}
