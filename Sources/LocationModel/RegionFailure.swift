/// Why a region is not monitored.
package enum RegionFailure: Sendable, Equatable {
  /// The region is invalid (radius, centre, identifier); the message says why
  /// (`CLError.regionMonitoringFailure`).
  case invalid(String)
  /// The app may not monitor regions (`CLError.regionMonitoringDenied`).
  case denied
}
