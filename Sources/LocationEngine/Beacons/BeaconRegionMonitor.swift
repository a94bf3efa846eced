import LocationModel

/// Monitors beacon regions (`CLBeaconRegion` in `startMonitoring(for:)`, `CLMonitor`'s
/// `BeaconIdentityCondition`) of one group against the advertisements heard. A value type: pure.
///
/// The rule (ours: Apple documents entry when a matching beacon comes in range and exit when none
/// is, without a time): an advertisement of a beacon that satisfies the region's constraint is
/// evidence of *inside*; a region whose last matching advertisement (or, never heard, whose start
/// of monitoring) is ``exitAfter`` (30 s) old is evidence of *outside* at the next tick. Evidence
/// goes through the same ``RegionStateMachine`` as circular regions: the first decisive evidence
/// determines the state only, later changes are an entry or an exit followed by a determination,
/// and a region restored with a persisted state reports the crossing that happened while nobody
/// watched.
package struct BeaconRegionMonitor: Sendable {
  /// How long no matching beacon must be heard for a region to be outside, seconds.
  package static let exitAfter: Double = 30

  struct Entry: Sendable {
    var spec: RegionSpec
    var constraint: BeaconConstraint
    var machine: RegionStateMachine
    /// When a matching beacon was last heard, or monitoring started (monotonic seconds).
    var lastEvidence: Double
  }

  private var order: [String] = []
  private var entries: [String: Entry] = [:]

  /// No regions.
  package init() {}

  /// The number of regions.
  package var count: Int { entries.count }

  /// The regions, in the order they were first added.
  package var specs: [RegionSpec] { order.compactMap { entries[$0]?.spec } }

  /// A region's description.
  package func spec(of identifier: String) -> RegionSpec? { entries[identifier]?.spec }

  /// A region's state; nil when none has that identifier.
  package func state(of identifier: String) -> RegionState? { entries[identifier]?.machine.state }

  /// A determination of a region's current state (`requestState(for:)`).
  package func requestState(identifier: String) -> RegionEvent? {
    guard let entry = entries[identifier] else { return nil }
    return Self.event(entry, .determined(entry.machine.state))
  }

  /// Adds (or replaces) a beacon region, in `initialState`, watched from monotonic time `now`
  /// (`-infinity`: from the first tick, for a region restored before any clock reading). A spec
  /// without a beacon constraint is not added (false).
  @discardableResult
  package mutating func add(_ spec: RegionSpec, initialState: RegionState, at now: Double) -> Bool {
    guard let constraint = spec.beacon else { return false }
    if entries[spec.identifier] == nil { order.append(spec.identifier) }
    entries[spec.identifier] = Entry(
      spec: spec, constraint: constraint, machine: RegionStateMachine(state: initialState),
      lastEvidence: now)
    return true
  }

  /// Removes a region; returns it when there was one.
  package mutating func remove(identifier: String) -> RegionSpec? {
    guard let removed = entries.removeValue(forKey: identifier) else { return nil }
    order.removeAll { $0 == identifier }
    return removed.spec
  }

  /// The events an advertisement heard at monotonic time `now` causes: entries (or
  /// determinations) of the regions it satisfies.
  package mutating func observe(_ advertisement: BeaconAdvertisement, at now: Double)
    -> [RegionEvent]
  {
    var events: [RegionEvent] = []
    for identifier in order {
      guard var entry = entries[identifier], entry.constraint.matches(advertisement) else {
        continue
      }
      entry.lastEvidence = now
      events += Self.events(entry, entry.machine.observe(.inside))
      entries[identifier] = entry
    }
    return events
  }

  /// The events of a tick at monotonic time `now`: exits (or determinations of outside) of the
  /// regions with no matching beacon heard for ``exitAfter``.
  package mutating func tick(at now: Double) -> [RegionEvent] {
    var events: [RegionEvent] = []
    for identifier in order {
      guard var entry = entries[identifier], entry.machine.state != .outside else { continue }
      // Restored before the engine had a clock reading (`-infinity`): the wait starts now.
      if entry.lastEvidence == -.infinity {
        entries[identifier]?.lastEvidence = now
        continue
      }
      guard now - entry.lastEvidence >= Self.exitAfter else { continue }
      events += Self.events(entry, entry.machine.observe(.outside))
      entries[identifier] = entry
    }
    return events
  }

  static func events(_ entry: Entry, _ action: RegionStateMachine.Action) -> [RegionEvent] {
    switch action {
    case .none: []
    case .determine(let state): [event(entry, .determined(state))]
    case .enter: [event(entry, .entered), event(entry, .determined(.inside))]
    case .exit: [event(entry, .exited), event(entry, .determined(.outside))]
    }
  }

  static func event(_ entry: Entry, _ kind: RegionEvent.Kind) -> RegionEvent {
    RegionEvent(
      identifier: entry.spec.identifier, kind: kind, notifyOnEntry: entry.spec.notifyOnEntry,
      notifyOnExit: entry.spec.notifyOnExit)
  }
}
