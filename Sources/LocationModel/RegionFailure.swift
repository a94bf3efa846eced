/// Why a region is not monitored.
package enum RegionFailure: Sendable, Equatable {
  /// The region is invalid (radius, centre, identifier); the message says why
  /// (`CLError.regionMonitoringFailure`).
  case invalid(String)
  /// The app may not monitor regions (`CLError.regionMonitoringDenied`).
  case denied
  /// The region could not be stored (a full disk, an I/O error), so it is not monitored; the
  /// message names the cause (`CLError.regionMonitoringFailure`; README, "When the store fails").
  case notStored(String)
}
