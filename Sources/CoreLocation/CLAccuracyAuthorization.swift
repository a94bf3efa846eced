package import LocationModel

/// Constants that indicate the level of location accuracy the app is authorized to use.
public enum CLAccuracyAuthorization: Int, Sendable {
  /// The user authorized the app to access location data with full accuracy.
  case fullAccuracy = 0

  /// The user authorized the app to access location data with reduced accuracy only.
  case reducedAccuracy = 1
}

extension CLAccuracyAuthorization {
  /// The public accuracy of the runtime's accuracy.
  package init(_ accuracy: AccuracyAuthorization) {
    switch accuracy {
    case .fullAccuracy: self = .fullAccuracy
    case .reducedAccuracy: self = .reducedAccuracy
    }
  }

  /// The runtime's accuracy of this public one.
  package var modelValue: AccuracyAuthorization {
    switch self {
    case .fullAccuracy: return .fullAccuracy
    case .reducedAccuracy: return .reducedAccuracy
    }
  }
}
