import LocationModel

/// Beacons in the step function: ranging (``BeaconRanging``) and beacon regions
/// (``BeaconRegionMonitor``), fed by advertisements and ticked once a second while either is
/// wanted. Both need the app to be allowed location at full accuracy, as on Apple platforms: an
/// app with reduced accuracy gets no ranging and no beacon region.
extension LocationEngine {
  /// The ranging tick's period, seconds: Apple delivers ranging about once a second.
  package static let beaconTickPeriod: Double = 1

  /// Whether beacon advertisements are wanted now.
  var beaconsWanted: Bool {
    mayUseBeacons && (beaconRanging.isRanging || !beaconRegions.isEmpty)
  }

  /// Whether the app may range and watch beacon regions: allowed, at full accuracy.
  var mayUseBeacons: Bool {
    allowed && fullAccuracy && reduction == nil
  }

  mutating func handleBeaconEvent(
    _ event: EngineEvent, at now: EngineInstant, into effects: inout [EngineEffect]
  ) {
    switch event {
    case .startRanging(let client, let constraint):
      guard mayUseBeacons else {
        effects.append(.rangingFailed(client, constraint, .denied))
        return
      }
      beaconRanging.start(client, constraint)
    case .stopRanging(let client, let constraint):
      beaconRanging.stop(client, constraint)
    case .advertisement(let advertisement):
      guard beaconsWanted else { return }
      beaconRanging.observe(advertisement, at: now.monotonic)
      for group in beaconRegions.keys.sorted() {
        guard let events = beaconRegions[group]?.observe(advertisement, at: now.monotonic),
          !events.isEmpty
        else { continue }
        effects.append(.regionEvents(group: group, events))
      }
    case .timerFired(.beaconTick):
      beaconTickArmed = false
      guard beaconsWanted else { return }
      for (client, constraint, beacons) in beaconRanging.tick(
        at: now.monotonic, wall: now.wall)
      {
        effects.append(.deliverBeacons(client, constraint, beacons))
      }
      for group in beaconRegions.keys.sorted() {
        guard let events = beaconRegions[group]?.tick(at: now.monotonic), !events.isEmpty else {
          continue
        }
        effects.append(.regionEvents(group: group, events))
      }
    default:
      break
    }
  }

  /// Ends every client's ranging with `denied` (authorization withdrawn or reduced).
  mutating func failRanging(into effects: inout [EngineEffect]) {
    for client in beaconRanging.constraints.keys.sorted() {
      for constraint in beaconRanging.remove(client) {
        effects.append(.rangingFailed(client, constraint, .denied))
      }
    }
  }

  /// Emits `demandBeacons` when it changes, and keeps the tick armed while beacons are wanted.
  mutating func updateBeaconDemand(at now: EngineInstant, into effects: inout [EngineEffect]) {
    let wanted = beaconsWanted
    if lastBeaconDemand != wanted {
      lastBeaconDemand = wanted
      effects.append(.demandBeacons(wanted))
    }
    if wanted, !beaconTickArmed {
      beaconTickArmed = true
      effects.append(.armTimer(.beaconTick, deadline: now.monotonic + Self.beaconTickPeriod))
    } else if !wanted, beaconTickArmed {
      beaconTickArmed = false
      effects.append(.cancelTimer(.beaconTick))
    }
  }

  /// The beacon constraints a client ranges, in order.
  package func rangedConstraints(_ client: ClientID) -> [BeaconConstraint] {
    beaconRanging.constraints(of: client)
  }
}
