import Geodesy
import LocationModel

/// Region monitoring in the step function (README, "Behaviour beyond Apple's documentation", Regions; the rule itself is
/// `RegionEvidence`): regions live in groups, each with its own `RegionMonitor` (spatial index and
/// state machines). Every fix is evaluated against every group while the app is allowed location;
/// changes become `regionEvents` effects, which the runtime persists before delivering.
extension LocationEngine {
  mutating func addRegion(
    group: String, _ spec: RegionSpec, initialState: RegionState, requester: ClientID?,
    at now: EngineInstant, into effects: inout [EngineEffect]
  ) {
    // Apple's rule: an app with reduced accuracy cannot monitor regions.
    guard allowed, reduction == nil else {
      effects.append(
        .regionRejected(group: group, identifier: spec.identifier, .denied, requester: requester))
      return
    }
    guard group.utf8.count <= RegionSpec.maximumGroupBytes else {
      effects.append(
        .regionRejected(
          group: group, identifier: spec.identifier,
          .invalid(
            "the monitor's name is \(group.utf8.count - "monitor:".utf8.count) bytes long; at most "
              + "\(RegionSpec.maximumGroupBytes - "monitor:".utf8.count) are accepted"),
          requester: requester))
      return
    }
    if let limit = maximumRegionCount,
      regionState(group: group, identifier: spec.identifier) == nil,
      regionCount >= limit
    {
      effects.append(
        .regionRejected(
          group: group, identifier: spec.identifier,
          .invalid("at most \(limit) regions may be monitored at once; stop monitoring one first"),
          requester: requester))
      return
    }
    if spec.beacon != nil {
      guard fullAccuracy else {
        effects.append(
          .regionRejected(group: group, identifier: spec.identifier, .denied, requester: requester))
        return
      }
      addBeaconRegion(
        group: group, spec, initialState: initialState, requester: requester, at: now,
        into: &effects)
      return
    }
    let events: [RegionEvent]
    do {
      // In place: a copy of the group's monitor per add would make adding n regions O(n²).
      events = try regions[group, default: RegionMonitor(maximumRadius: maximumRegionRadius)].add(
        spec, initialState: initialState)
    } catch {
      if regions[group]?.count == 0 { regions[group] = nil }
      effects.append(
        .regionRejected(
          group: group, identifier: spec.identifier, .invalid(error.message), requester: requester))
      return
    }
    // Replaced by identifier, whatever its kind.
    if beaconRegions[group]?.remove(identifier: spec.identifier) != nil,
      beaconRegions[group]?.count == 0
    {
      beaconRegions[group] = nil
    }
    effects.append(
      .regionAdded(
        group: group, spec, state: regions[group]?.state(of: spec.identifier) ?? .unknown,
        requester: requester))
    if !events.isEmpty { effects.append(.regionEvents(group: group, events)) }
  }

  /// Restores persisted regions before the engine handles its first event (no effects: sources
  /// start when the first event computes the demand). Invalid ones (a store edited by hand) are
  /// skipped: they could not have been added through the API.
  package mutating func restoreRegions(
    group: String, _ specs: [RegionSpec], _ states: [RegionState]
  ) {
    var monitor = regions[group] ?? RegionMonitor(maximumRadius: maximumRegionRadius)
    monitor.reserveCapacity(monitor.count + specs.count)
    for (index, spec) in specs.enumerated() {
      let state = index < states.count ? states[index] : .unknown
      if spec.beacon != nil {
        // Watched from the first event's time: a restored region is outside only after
        // `exitAfter` with no beacon heard, counted from the first tick.
        beaconRegions[group, default: BeaconRegionMonitor()].add(
          spec, initialState: state, at: -.infinity)
        continue
      }
      _ = try? monitor.add(spec, initialState: state)
    }
    monitor.buildIndex()
    if monitor.count > 0 { regions[group] = monitor }
  }

  mutating func evaluateRegions(_ fix: Fix, into effects: inout [EngineEffect]) {
    if regions.count == 1, let group = regions.keys.first {
      if let events = regions[group]?.evaluate(fix), !events.isEmpty {
        effects.append(.regionEvents(group: group, events))
      }
      return
    }
    for group in regions.keys.sorted() {
      guard let events = regions[group]?.evaluate(fix), !events.isEmpty else { continue }
      effects.append(.regionEvents(group: group, events))
    }
  }

  /// The regions of a group: the circles in the order they were first added, then the beacon
  /// regions in theirs.
  package func regionSpecs(group: String) -> [RegionSpec] {
    (regions[group]?.specs ?? []) + (beaconRegions[group]?.specs ?? [])
  }

  /// One region of a group.
  package func regionSpec(group: String, identifier: String) -> RegionSpec? {
    regions[group]?.spec(of: identifier) ?? beaconRegions[group]?.spec(of: identifier)
  }

  /// The state of one region.
  package func regionState(group: String, identifier: String) -> RegionState? {
    regions[group]?.state(of: identifier) ?? beaconRegions[group]?.state(of: identifier)
  }

  /// Removes a region of either kind; false when the group has none of that identifier.
  mutating func removeAnyRegion(group: String, identifier: String) -> Bool {
    if regions[group]?.remove(identifier: identifier) != nil {
      if regions[group]?.count == 0 { regions[group] = nil }
      return true
    }
    if beaconRegions[group]?.remove(identifier: identifier) != nil {
      if beaconRegions[group]?.count == 0 { beaconRegions[group] = nil }
      return true
    }
    return false
  }

  /// Adds (or replaces) a beacon region: monitored from now, determined by the advertisements
  /// and ticks that follow (``BeaconRegionMonitor``'s rule).
  mutating func addBeaconRegion(
    group: String, _ spec: RegionSpec, initialState: RegionState, requester: ClientID?,
    at now: EngineInstant, into effects: inout [EngineEffect]
  ) {
    if regions[group]?.remove(identifier: spec.identifier) != nil, regions[group]?.count == 0 {
      regions[group] = nil
    }
    beaconRegions[group, default: BeaconRegionMonitor()].add(
      spec, initialState: initialState, at: now.monotonic)
    effects.append(
      .regionAdded(group: group, spec, state: initialState, requester: requester))
  }
}
