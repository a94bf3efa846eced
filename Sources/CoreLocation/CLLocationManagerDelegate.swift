import Foundation

/// The methods you use to receive events from an associated location-manager object.
///
/// Every method is optional: the protocol extension gives each one a default that does nothing
/// (Swift on Linux has no `@objc optional`). Two defaults forward to the older methods Apple
/// deprecated, so a delegate written for either generation works:
/// `locationManager(_:didUpdateLocations:)` calls `locationManager(_:didUpdateTo:from:)` for each
/// location, and `locationManagerDidChangeAuthorization(_:)` calls
/// `locationManager(_:didChangeAuthorization:)`.
///
/// Delivery: on the run loop of the thread that created the manager (Apple's rule), whichever
/// thread or task started the service. When that thread is the main thread, through the main
/// dispatch queue, so both `RunLoop.main.run()` and `dispatchMain()` work.
public protocol CLLocationManagerDelegate: NSObjectProtocol {
  /// Tells the delegate when the app creates the location manager and when the authorization status
  /// changes.
  func locationManagerDidChangeAuthorization(_ manager: CLLocationManager)

  /// Tells the delegate its authorization status when the app creates the location manager and when
  /// the authorization status changes. Deprecated (iOS 14, macOS 11): use
  /// `locationManagerDidChangeAuthorization(_:)`.
  @available(*, deprecated, message: "Use locationManagerDidChangeAuthorization(_:)")
  func locationManager(
    _ manager: CLLocationManager, didChangeAuthorization status: CLAuthorizationStatus)

  /// Tells the delegate that the location manager was unable to retrieve a location value.
  func locationManager(_ manager: CLLocationManager, didFailWithError error: any Error)

  /// Tells the delegate that new location data is available.
  /// - Parameter locations: at least one location, oldest first; the last is the newest.
  func locationManager(_ manager: CLLocationManager, didUpdateLocations locations: [CLLocation])

  /// Tells the delegate that a new location value is available. Deprecated (iOS 6, macOS 10.12):
  /// use `locationManager(_:didUpdateLocations:)`.
  @available(*, deprecated, message: "Use locationManager(_:didUpdateLocations:)")
  func locationManager(
    _ manager: CLLocationManager, didUpdateTo newLocation: CLLocation, from oldLocation: CLLocation)

  /// Tells the delegate that updates will no longer be deferred.
  func locationManager(
    _ manager: CLLocationManager, didFinishDeferredUpdatesWithError error: (any Error)?)

  /// Tells the delegate that location updates were paused.
  func locationManagerDidPauseLocationUpdates(_ manager: CLLocationManager)

  /// Tells the delegate that the delivery of location updates has resumed.
  func locationManagerDidResumeLocationUpdates(_ manager: CLLocationManager)

  /// Tells the delegate that a new visit-related event was received.
  func locationManager(_ manager: CLLocationManager, didVisit visit: CLVisit)

  /// Tells the delegate that the location manager received updated heading information.
  func locationManager(_ manager: CLLocationManager, didUpdateHeading newHeading: CLHeading)

  /// Asks the delegate whether the heading calibration alert should be displayed.
  ///
  /// Asked once per interference episode (a magnetometer field more than 25 % away from the World
  /// Magnetic Model's total intensity at the place), after `didFailWithError` with
  /// `CLError.headingFailure`. On Linux, "displaying" means one line on standard error asking for a
  /// figure-eight away from metal, and headings delivered with `headingAccuracy` -1 until
  /// `dismissHeadingCalibrationDisplay()` or the next `startUpdatingHeading()`.
  func locationManagerShouldDisplayHeadingCalibration(_ manager: CLLocationManager) -> Bool

  /// Tells the delegate that the user entered the specified region.
  func locationManager(_ manager: CLLocationManager, didEnterRegion region: CLRegion)

  /// Tells the delegate that the user left the specified region.
  func locationManager(_ manager: CLLocationManager, didExitRegion region: CLRegion)

  /// Tells the delegate about the state of the specified region.
  func locationManager(
    _ manager: CLLocationManager, didDetermineState state: CLRegionState, for region: CLRegion)

  /// Tells the delegate that a region monitoring error occurred.
  func locationManager(
    _ manager: CLLocationManager, monitoringDidFailFor region: CLRegion?, withError error: any Error
  )

  /// Tells the delegate that a new region is being monitored.
  func locationManager(_ manager: CLLocationManager, didStartMonitoringFor region: CLRegion)

  /// Tells the delegate that the location manager detected at least one beacon that satisfies the
  /// provided constraint.
  func locationManager(
    _ manager: CLLocationManager, didRange beacons: [CLBeacon],
    satisfying beaconConstraint: CLBeaconIdentityConstraint)

  /// Tells the delegate that the location manager couldn't detect any beacons that satisfy the
  /// provided constraint.
  func locationManager(
    _ manager: CLLocationManager, didFailRangingFor beaconConstraint: CLBeaconIdentityConstraint,
    error: any Error)

  /// Tells the delegate that one or more beacons are in range. Deprecated (iOS 13).
  @available(*, deprecated, message: "Use locationManager(_:didRange:satisfying:)")
  func locationManager(
    _ manager: CLLocationManager, didRangeBeacons beacons: [CLBeacon], in region: CLBeaconRegion)

  /// Tells the delegate that an error occurred while gathering ranging information for a set of
  /// beacons. Deprecated (iOS 13).
  @available(*, deprecated, message: "Use locationManager(_:didFailRangingFor:error:)")
  func locationManager(
    _ manager: CLLocationManager, rangingBeaconsDidFailFor region: CLBeaconRegion,
    withError error: any Error)
}

extension CLLocationManagerDelegate {
  /// Default: forwards to `locationManager(_:didChangeAuthorization:)`.
  public func locationManagerDidChangeAuthorization(_ manager: CLLocationManager) {
    legacyForwarding.didChangeAuthorization(self, manager, manager.authorizationStatus)
  }

  /// Default: does nothing.
  public func locationManager(
    _ manager: CLLocationManager, didChangeAuthorization status: CLAuthorizationStatus
  ) {}

  /// Default: does nothing.
  public func locationManager(_ manager: CLLocationManager, didFailWithError error: any Error) {}

  /// Default: forwards each location to `locationManager(_:didUpdateTo:from:)`, with the location
  /// delivered before it (the first one is paired with itself when there was none).
  public func locationManager(
    _ manager: CLLocationManager, didUpdateLocations locations: [CLLocation]
  ) {
    var previous = manager.previousDeliveredLocation
    for location in locations {
      legacyForwarding.didUpdate(self, manager, to: location, from: previous ?? location)
      previous = location
    }
  }

  /// Default: does nothing.
  public func locationManager(
    _ manager: CLLocationManager, didUpdateTo newLocation: CLLocation, from oldLocation: CLLocation
  ) {}

  /// Default: does nothing.
  public func locationManager(
    _ manager: CLLocationManager, didFinishDeferredUpdatesWithError error: (any Error)?
  ) {}

  /// Default: does nothing.
  public func locationManagerDidPauseLocationUpdates(_ manager: CLLocationManager) {}

  /// Default: does nothing.
  public func locationManagerDidResumeLocationUpdates(_ manager: CLLocationManager) {}

  /// Default: does nothing.
  public func locationManager(_ manager: CLLocationManager, didVisit visit: CLVisit) {}

  /// Default: does nothing.
  public func locationManager(_ manager: CLLocationManager, didUpdateHeading newHeading: CLHeading)
  {}

  /// Default: `false`, as when an Apple delegate does not implement the method.
  public func locationManagerShouldDisplayHeadingCalibration(_ manager: CLLocationManager) -> Bool {
    false
  }

  /// Default: does nothing.
  public func locationManager(_ manager: CLLocationManager, didEnterRegion region: CLRegion) {}

  /// Default: does nothing.
  public func locationManager(_ manager: CLLocationManager, didExitRegion region: CLRegion) {}

  /// Default: does nothing.
  public func locationManager(
    _ manager: CLLocationManager, didDetermineState state: CLRegionState, for region: CLRegion
  ) {}

  /// Default: does nothing.
  public func locationManager(
    _ manager: CLLocationManager, monitoringDidFailFor region: CLRegion?, withError error: any Error
  ) {}

  /// Default: does nothing.
  public func locationManager(_ manager: CLLocationManager, didStartMonitoringFor region: CLRegion)
  {}

  /// Default: does nothing.
  public func locationManager(
    _ manager: CLLocationManager, didRange beacons: [CLBeacon],
    satisfying beaconConstraint: CLBeaconIdentityConstraint
  ) {}

  /// Default: does nothing.
  public func locationManager(
    _ manager: CLLocationManager, didFailRangingFor beaconConstraint: CLBeaconIdentityConstraint,
    error: any Error
  ) {}

  /// Default: does nothing.
  public func locationManager(
    _ manager: CLLocationManager, didRangeBeacons beacons: [CLBeacon], in region: CLBeaconRegion
  ) {}

  /// Default: does nothing.
  public func locationManager(
    _ manager: CLLocationManager, rangingBeaconsDidFailFor region: CLBeaconRegion,
    withError error: any Error
  ) {}
}

// The defaults forward to the deprecated methods through a protocol whose requirements are not
// deprecated (only their one implementation is), so that forwarding, which Apple's framework also
// does, raises no deprecation warning here while calls of the deprecated methods elsewhere do.
protocol LegacyDelegateForwarding {
  static func didChangeAuthorization(
    _ delegate: any CLLocationManagerDelegate, _ manager: CLLocationManager,
    _ status: CLAuthorizationStatus)
  static func didUpdate(
    _ delegate: any CLLocationManagerDelegate, _ manager: CLLocationManager,
    to newLocation: CLLocation, from oldLocation: CLLocation)
  static func didRange(
    _ delegate: any CLLocationManagerDelegate, _ manager: CLLocationManager,
    _ beacons: [CLBeacon], _ region: CLBeaconRegion)
  static func rangingFailed(
    _ delegate: any CLLocationManagerDelegate, _ manager: CLLocationManager,
    _ region: CLBeaconRegion, _ error: any Error)
}

enum LegacyDelegateCalls: LegacyDelegateForwarding {
  @available(*, deprecated)
  static func didChangeAuthorization(
    _ delegate: any CLLocationManagerDelegate, _ manager: CLLocationManager,
    _ status: CLAuthorizationStatus
  ) {
    delegate.locationManager(manager, didChangeAuthorization: status)
  }

  @available(*, deprecated)
  static func didUpdate(
    _ delegate: any CLLocationManagerDelegate, _ manager: CLLocationManager,
    to newLocation: CLLocation, from oldLocation: CLLocation
  ) {
    delegate.locationManager(manager, didUpdateTo: newLocation, from: oldLocation)
  }

  @available(*, deprecated)
  static func didRange(
    _ delegate: any CLLocationManagerDelegate, _ manager: CLLocationManager,
    _ beacons: [CLBeacon], _ region: CLBeaconRegion
  ) {
    delegate.locationManager(manager, didRangeBeacons: beacons, in: region)
  }

  @available(*, deprecated)
  static func rangingFailed(
    _ delegate: any CLLocationManagerDelegate, _ manager: CLLocationManager,
    _ region: CLBeaconRegion, _ error: any Error
  ) {
    delegate.locationManager(manager, rangingBeaconsDidFailFor: region, withError: error)
  }
}

/// The forwarding as its protocol type, so calls go through the (non-deprecated) requirements.
var legacyForwarding: any LegacyDelegateForwarding.Type { LegacyDelegateCalls.self }
