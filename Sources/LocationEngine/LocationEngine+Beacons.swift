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

  /// `startRanging`: refused with `denied` unless the app may use beacons.
  mutating func startRanging(
    _ client: ClientID, _ constraint: BeaconConstraint, into effects: inout [EngineEffect]
  ) {
    guard mayUseBeacons else {
      effects.append(.rangingFailed(client, constraint, .denied))
      return
    }
    beaconRanging.start(client, constraint)
  }

  /// An advertisement: kept for ranging, and evidence for the beacon regions it satisfies.
  mutating func observe(
    _ advertisement: BeaconAdvertisement, at now: EngineInstant,
    into effects: inout [EngineEffect]
  ) {
    guard beaconsWanted else { return }
    beaconRanging.observe(advertisement, at: now.monotonic)
    for group in beaconRegions.keys.sorted() {
      guard let events = beaconRegions[group]?.observe(advertisement, at: now.monotonic),
        !events.isEmpty
      else { continue }
      effects.append(.regionEvents(group: group, events))
    }
  }

  /// The once-a-second tick: every ranged constraint's delivery, then the exits of beacon
  /// regions not heard for `BeaconRegionMonitor.exitAfter`.
  mutating func beaconTick(at now: EngineInstant, into effects: inout [EngineEffect]) {
    beaconTickArmed = false
    guard beaconsWanted else { return }
    for (client, constraint, beacons) in beaconRanging.tick(at: now.monotonic, wall: now.wall) {
      effects.append(.deliverBeacons(client, constraint, beacons))
    }
    for group in beaconRegions.keys.sorted() {
      guard let events = beaconRegions[group]?.tick(at: now.monotonic), !events.isEmpty else {
        continue
      }
      effects.append(.regionEvents(group: group, events))
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
