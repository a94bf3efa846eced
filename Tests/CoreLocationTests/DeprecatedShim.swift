import CoreLocation
import Foundation

// Calls Apple's deprecated API through protocol requirements, so that the tests exercise it without
// deprecation warnings (the test build treats warnings as errors).
protocol DeprecatedAPI {
  static var authorized: CLAuthorizationStatus { get }
  static func circularRegion(
    center: CLLocationCoordinate2D, radius: CLLocationDistance, identifier: String
  ) -> CLRegion
  static func center(of region: CLRegion) -> CLLocationCoordinate2D
  static func radius(of region: CLRegion) -> CLLocationDistance
  static func contains(_ region: CLRegion, _ coordinate: CLLocationCoordinate2D) -> Bool
  static func distance(from a: CLLocation, to b: CLLocation) -> CLLocationDistance
  static func servicesEnabled(_ manager: CLLocationManager) -> Bool
  static func setPurpose(_ manager: CLLocationManager, _ purpose: String?)
  static func startRangingBeacons(_ manager: CLLocationManager, in region: CLBeaconRegion)
  static func stopRangingBeacons(_ manager: CLLocationManager, in region: CLBeaconRegion)
  static func rangedRegions(_ manager: CLLocationManager) -> Set<CLRegion>
}

enum DeprecatedShim: DeprecatedAPI {
  @available(*, deprecated)
  static var authorized: CLAuthorizationStatus { .authorized }

  @available(*, deprecated)
  static func circularRegion(
    center: CLLocationCoordinate2D, radius: CLLocationDistance, identifier: String
  ) -> CLRegion {
    CLRegion(circularRegionWithCenter: center, radius: radius, identifier: identifier)
  }

  @available(*, deprecated)
  static func center(of region: CLRegion) -> CLLocationCoordinate2D { region.center }

  @available(*, deprecated)
  static func radius(of region: CLRegion) -> CLLocationDistance { region.radius }

  @available(*, deprecated)
  static func contains(_ region: CLRegion, _ coordinate: CLLocationCoordinate2D) -> Bool {
    region.contains(coordinate)
  }

  @available(*, deprecated)
  static func distance(from a: CLLocation, to b: CLLocation) -> CLLocationDistance {
    a.getDistanceFrom(b)
  }

  @available(*, deprecated)
  static func servicesEnabled(_ manager: CLLocationManager) -> Bool {
    manager.locationServicesEnabled
  }

  @available(*, deprecated)
  static func setPurpose(_ manager: CLLocationManager, _ purpose: String?) {
    manager.purpose = purpose
  }

  @available(*, deprecated)
  static func startRangingBeacons(_ manager: CLLocationManager, in region: CLBeaconRegion) {
    manager.startRangingBeacons(in: region)
  }

  @available(*, deprecated)
  static func stopRangingBeacons(_ manager: CLLocationManager, in region: CLBeaconRegion) {
    manager.stopRangingBeacons(in: region)
  }

  @available(*, deprecated)
  static func rangedRegions(_ manager: CLLocationManager) -> Set<CLRegion> {
    manager.rangedRegions
  }
}

/// The shim as its protocol type, so calls go through the (non-deprecated) requirements.
var deprecated: any DeprecatedAPI.Type { DeprecatedShim.self }

/// Sets the deprecated `purpose` through the shim.
func setPurpose(_ manager: CLLocationManager, _ purpose: String?) {
  deprecated.setPurpose(manager, purpose)
}

/// Reads the deprecated `locationServicesEnabled` instance property through the shim.
func servicesEnabledProperty(_ manager: CLLocationManager) -> Bool {
  deprecated.servicesEnabled(manager)
}
