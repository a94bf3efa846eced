import Foundation
internal import LocationEngine
internal import LocationModel
import LocationServices
import Synchronization

// Beacon ranging (README, "Beacons"). The estimator and the cadence are `BeaconRanging`'s rule:
// about once a second per ranged constraint, the beacons that satisfy it, closest first; RSSI
// smoothed over a second; accuracy from the log-distance path-loss model. Ranging needs location
// authorization at full accuracy; the constraints of the deprecated region forms and of the
// current ones are kept apart, so that stopping one form leaves the other ranging.

/// What a manager ranges: the objects the app passed, by the engine's constraint.
struct RangingState {
  /// `startRangingBeacons(satisfying:)`: the app's constraint objects.
  var constraints: [BeaconConstraint: CLBeaconIdentityConstraint] = [:]
  /// `startRangingBeacons(in:)`: the app's regions, by identifier.
  var regions: [BeaconConstraint: [String: CLBeaconRegion]] = [:]

  /// Whether the engine ranges `constraint` for some form.
  func ranges(_ constraint: BeaconConstraint) -> Bool {
    constraints[constraint] != nil || regions[constraint]?.isEmpty == false
  }
}

extension ManagerCore {
  /// `startRangingBeacons(satisfying:)`.
  func startRanging(_ constraint: CLBeaconIdentityConstraint) {
    guard environment.hub.beaconsAvailable else {
      return failRanging { manager, delegate, error in
        delegate.locationManager(manager, didFailRangingFor: constraint, error: error)
      }
    }
    let value = constraint.engineConstraint
    let wasRanged = rangingState.withLock { state -> Bool in
      defer { state.constraints[value] = constraint }
      return state.ranges(value)
    }
    if !wasRanged, let id { environment.hub.startRanging(id, value) }
  }

  /// `stopRangingBeacons(satisfying:)`.
  func stopRanging(_ constraint: CLBeaconIdentityConstraint) {
    let value = constraint.engineConstraint
    let stillRanged = rangingState.withLock { state -> Bool in
      state.constraints[value] = nil
      return state.ranges(value)
    }
    if !stillRanged, let id { environment.hub.send(.stopRanging(id, value)) }
  }

  /// `startRangingBeacons(in:)`.
  func startRanging(_ region: CLBeaconRegion) {
    guard environment.hub.beaconsAvailable else {
      return failRanging { manager, delegate, error in
        legacyForwarding.rangingFailed(delegate, manager, region, error)
      }
    }
    let value = region.beaconIdentityConstraint.engineConstraint
    let copy = region.copy() as? CLBeaconRegion ?? region
    let wasRanged = rangingState.withLock { state -> Bool in
      defer { state.regions[value, default: [:]][region.identifier] = copy }
      return state.ranges(value)
    }
    if !wasRanged, let id { environment.hub.startRanging(id, value) }
  }

  /// `stopRangingBeacons(in:)`.
  func stopRanging(_ region: CLBeaconRegion) {
    let value = region.beaconIdentityConstraint.engineConstraint
    let stillRanged = rangingState.withLock { state -> Bool in
      state.regions[value]?[region.identifier] = nil
      if state.regions[value]?.isEmpty == true { state.regions[value] = nil }
      return state.ranges(value)
    }
    if !stillRanged, let id { environment.hub.send(.stopRanging(id, value)) }
  }

  /// The constraints ranged through `startRangingBeacons(satisfying:)`.
  var rangedConstraints: Set<CLBeaconIdentityConstraint> {
    Set(rangingState.withLock { Array($0.constraints.values) })
  }

  /// The regions ranged through `startRangingBeacons(in:)`.
  var rangedBeaconRegions: Set<CLRegion> {
    Set(rangingState.withLock { $0.regions.values.flatMap { Array($0.values) } })
  }

  /// A ranging delivery or failure from the hub, on the delegate's thread.
  func deliverRanging(_ delivery: HubDelivery, target: DeliveryTarget) {
    switch delivery {
    case .beacons(let constraint, let ranged):
      let (object, regions) = rangingState.withLock {
        ($0.constraints[constraint], Array(($0.regions[constraint] ?? [:]).values))
      }
      let box = UncheckedRanging(
        beacons: ranged.map(CLBeacon.init(ranged:)), constraint: object, regions: regions)
      target.run { [self] in
        guard let manager = managerReference, let delegate else { return }
        if let constraint = box.constraint {
          delegate.locationManager(manager, didRange: box.beacons, satisfying: constraint)
        }
        for region in box.regions {
          legacyForwarding.didRange(delegate, manager, box.beacons, region)
        }
      }
    case .rangingFailed(let constraint, let error):
      // The engine ended the ranging: both forms of it.
      let (object, regions) = rangingState.withLock { state in
        (
          state.constraints.removeValue(forKey: constraint),
          Array((state.regions.removeValue(forKey: constraint) ?? [:]).values)
        )
      }
      let failure = UncheckedError(error: Self.clError(error, message: nil))
      let box = UncheckedRanging(beacons: [], constraint: object, regions: regions)
      target.run { [self] in
        guard let manager = managerReference, let delegate else { return }
        if let constraint = box.constraint {
          delegate.locationManager(manager, didFailRangingFor: constraint, error: failure.error)
        }
        for region in box.regions {
          legacyForwarding.rangingFailed(delegate, manager, region, failure.error)
        }
      }
    default:
      break
    }
  }
}

/// A ranging delivery handed to the delegate's thread; the objects are immutable or copies.
struct UncheckedRanging: @unchecked Sendable {
  let beacons: [CLBeacon]
  let constraint: CLBeaconIdentityConstraint?
  let regions: [CLBeaconRegion]
}

extension CLBeaconIdentityConstraint {
  /// The engine's form of the constraint.
  var engineConstraint: BeaconConstraint {
    BeaconConstraint(uuid: BeaconUUID(uuid), major: major, minor: minor)
  }
}

extension BeaconUUID {
  /// Foundation's UUID as the engine's.
  package init(_ uuid: UUID) {
    let bytes = withUnsafeBytes(of: uuid.uuid) { Array($0) }
    // 16 bytes always.
    self = BeaconUUID(bytes: bytes) ?? BeaconUUID(high: 0, low: 0)
  }

  /// The engine's UUID as Foundation's.
  package var foundationUUID: UUID {
    let b = bytes
    return UUID(
      uuid: (
        b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
        b[14], b[15]
      ))
  }
}

extension CLBeacon {
  /// A beacon of a ranging delivery.
  convenience init(ranged: RangedBeacon) {
    self.init(
      uuid: ranged.uuid.foundationUUID, major: ranged.major, minor: ranged.minor,
      proximity: CLProximity(rawValue: ranged.proximity.rawValue) ?? .unknown,
      accuracy: ranged.accuracy, rssi: ranged.rssi,
      timestamp: Date(timeIntervalSince1970: ranged.time))
  }
}
