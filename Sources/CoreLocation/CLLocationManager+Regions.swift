import Foundation
internal import LocationEngine
internal import LocationModel
import LocationServices

// Region monitoring (README, "Behaviour beyond Apple's documentation", Regions).
//
// The rule, which Apple does not publish: a location at distance `d` from the centre of a circle of
// radius `r`, with horizontal accuracy `a`, is evidence of *inside* when `d <= r - max(a, h)` and of
// *outside* when `d >= r + max(a, h)`, where `h` is the region's hysteresis (the `desiredAccuracy`
// given to `startMonitoring(for:desiredAccuracy:)`, 5 m by default); anything between is no
// evidence. The first decisive location sets the state and calls
// `locationManager(_:didDetermineState:for:)` only; later changes call `didEnterRegion` /
// `didExitRegion` (when `notifyOnEntry` / `notifyOnExit`) and `didDetermineState`.
//
// Regions belong to the app, are shared by all of its managers (every manager's delegate is told),
// are replaced by identifier, and persist in the store with their last state: a process that
// restarts finds them in `monitoredRegions`, and a crossing that happened while it was not running
// is reported at the first decisive location. States are committed before delegates are told. The
// number of regions is limited by memory, not by 20; evaluation uses a spatial index.
extension CLLocationManager {
  /// The group under which `CLLocationManager` regions are kept in the store.
  static let regionGroup = "manager"

  /// The region object delivered for a monitored region: a `CLBeaconRegion` for a beacon region,
  /// else a `CLCircularRegion`.
  static func region(for spec: RegionSpec) -> CLRegion {
    if let beacon = spec.beacon {
      let region = CLBeaconRegion(
        uuid: beacon.uuid.foundationUUID, majorValue: beacon.major, minorValue: beacon.minor,
        identifier: spec.identifier)
      region.notifyOnEntry = spec.notifyOnEntry
      region.notifyOnExit = spec.notifyOnExit
      return region
    }
    let region = CLCircularRegion(
      center: CLLocationCoordinate2D(latitude: spec.latitude, longitude: spec.longitude),
      radius: spec.radius, identifier: spec.identifier)
    region.notifyOnEntry = spec.notifyOnEntry
    region.notifyOnExit = spec.notifyOnExit
    return region
  }
}

extension ManagerCore {
  /// A manager reports the regions of the `manager` group.
  var regionGroups: Set<String> { [CLLocationManager.regionGroup] }

  func startMonitoring(_ region: CLRegion, hysteresis: Double) {
    guard let id else { return }
    rememberRegion(region)
    if let beaconRegion = region as? CLBeaconRegion {
      guard environment.hub.beaconsAvailable else {
        deliverRegionFailure(
          identifier: region.identifier,
          error: CLError(
            .regionMonitoringFailure,
            userInfo: [
              NSLocalizedDescriptionKey:
                "beacon regions cannot be monitored: no powered Bluetooth LE adapter (BlueZ) or "
                + "beacon recording is configured"
            ]))
        return
      }
      // Beacon regions (README, "Beacons"): inside while a matching beacon is heard, outside
      // after 30 s without one (`BeaconRegionMonitor`'s rule); persisted and watched like circles.
      let spec = RegionSpec.beacon(
        identifier: region.identifier, beaconRegion.beaconIdentityConstraint.engineConstraint,
        notifyOnEntry: region.notifyOnEntry, notifyOnExit: region.notifyOnExit)
      environment.hub.addRegion(
        spec, group: CLLocationManager.regionGroup, initialState: .unknown, requester: id)
      return
    }
    let spec = RegionSpec(
      identifier: region.identifier, latitude: region.storedCenter.latitude,
      longitude: region.storedCenter.longitude, radius: region.storedRadius, hysteresis: hysteresis,
      notifyOnEntry: region.notifyOnEntry, notifyOnExit: region.notifyOnExit)
    environment.hub.addRegion(
      spec, group: CLLocationManager.regionGroup, initialState: .unknown, requester: id)
  }

  func requestState(_ region: CLRegion) {
    guard let id else { return }
    rememberRegion(region)
    environment.hub.requestRegionState(
      identifier: region.identifier, group: CLLocationManager.regionGroup, requester: id)
  }

  /// Handles the region deliveries of the hub.
  func deliverRegion(_ delivery: HubDelivery, target: DeliveryTarget) {
    switch delivery {
    case .regionEvents(let group, let events):
      guard group == CLLocationManager.regionGroup else { return }
      var calls: [RegionCall] = []
      for event in events {
        guard let spec = environment.hub.region(identifier: event.identifier, group: group)?.spec
        else {
          continue
        }
        calls.append(RegionCall(event: event, spec: spec))
      }
      guard !calls.isEmpty else { return }
      let regionCalls = calls
      target.run { [self] in
        guard let manager = managerReference else { return }
        for call in regionCalls {
          let region = CLLocationManager.region(for: call.spec)
          switch call.event.kind {
          case .entered:
            if call.event.shouldNotify {
              delegate?.locationManager(manager, didEnterRegion: region)
            }
          case .exited:
            if call.event.shouldNotify { delegate?.locationManager(manager, didExitRegion: region) }
          case .determined(let state):
            delegate?.locationManager(
              manager, didDetermineState: CLRegionState(rawValue: state.rawValue) ?? .unknown,
              for: region)
          }
        }
      }
    case .regionStarted(let group, let spec):
      guard group == CLLocationManager.regionGroup else { return }
      let region = takeRegion(spec.identifier) ?? CLLocationManager.region(for: spec)
      let box = UncheckedRegion(region: region)
      target.run { [self] in
        guard let manager = managerReference, let region = box.region else { return }
        delegate?.locationManager(manager, didStartMonitoringFor: region)
      }
    case .regionFailed(let group, let identifier, let failure):
      guard group == CLLocationManager.regionGroup else { return }
      let error: CLError
      switch failure {
      case .invalid(let message), .notStored(let message):
        error = CLError(.regionMonitoringFailure, userInfo: [NSLocalizedDescriptionKey: message])
      case .denied:
        error = CLError(
          .regionMonitoringDenied,
          userInfo: [NSLocalizedDescriptionKey: "region monitoring is not authorized"])
      }
      deliverRegionFailure(identifier: identifier, error: error, target: target)
    case .regionState(let group, let event):
      guard group == CLLocationManager.regionGroup, case .determined(let state) = event.kind,
        let spec = environment.hub.region(identifier: event.identifier, group: group)?.spec
      else { return }
      _ = takeRegion(event.identifier)
      let call = RegionCall(event: event, spec: spec)
      target.run { [self] in
        guard let manager = managerReference else { return }
        delegate?.locationManager(
          manager, didDetermineState: CLRegionState(rawValue: state.rawValue) ?? .unknown,
          for: CLLocationManager.region(for: call.spec))
      }
    case .locations, .error, .authorization, .heading, .headingInterference, .deferredFinished,
      .paused,
      .resumed, .visit, .beacons, .rangingFailed:
      break
    }
  }

  private func deliverRegionFailure(
    identifier: String, error: CLError, target: DeliveryTarget? = nil
  ) {
    let box = UncheckedRegion(region: takeRegion(identifier))
    let errorBox = UncheckedError(error: error)
    (target ?? currentTarget).run { [self] in
      guard let manager = managerReference else { return }
      delegate?.locationManager(
        manager, monitoringDidFailFor: box.region, withError: errorBox.error)
    }
  }
}

/// One region callback to make.
struct RegionCall: Sendable {
  let event: RegionEvent
  let spec: RegionSpec
}

/// A region handed to the delivery thread (the app's own object, or one made for the callback).
struct UncheckedRegion: @unchecked Sendable {
  // @unchecked: the object is only read on the delivery thread after this point.
  let region: CLRegion?
}
