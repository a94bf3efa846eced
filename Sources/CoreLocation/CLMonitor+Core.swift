import Foundation
internal import LocationEngine
internal import LocationModel
import LocationServices
import Synchronization

/// The part of a `CLMonitor` that the hub talks to: the monitor's records and its event queue.
/// Deliveries arrive on the hub's executor and update the records at once, so a `record(for:)`
/// made after a location was delivered sees its effect. Sendable: every mutable field sits behind a
/// mutex, and the hub is called outside it.
final class MonitorCore: HubClient {
  /// Where a condition stands.
  enum Kind: Sendable, Equatable {
    /// The hub monitors it (or was asked to).
    case monitored
    /// The hub refused it because the app may not use location; it is added again when the app's
    /// authorization allows location (in this process; it is not persisted meanwhile).
    case awaitingAuthorization
    /// It cannot be monitored (unsupported type, or invalid); it is kept in memory only.
    case unmonitored
  }

  struct Entry {
    var condition: any CLCondition
    var spec: RegionSpec?
    var lastEvent: CLMonitor.Event
    var kind: Kind
    /// Requests sent to the hub for this identifier and not answered yet (only the answer to the
    /// latest one counts).
    var pendingAdds = 0
    /// The diagnostic flags of the last event delivered for this condition (`nil`: none yet).
    var announced: MonitorDiagnostics?
  }

  private struct State {
    var order: [String] = []
    var entries: [String: Entry] = [:]
    var diagnostics: MonitorDiagnostics
    var id: ClientID?
  }

  let hub: any LocationService
  let group: String
  let mailbox: MonitorMailbox
  private let state: Mutex<State>

  init(hub: any LocationService, group: String, mailbox: MonitorMailbox) {
    self.hub = hub
    self.group = group
    self.mailbox = mailbox
    state = Mutex(State(diagnostics: MonitorDiagnostics(hub.authorization)))
  }

  private var now: Date { Date(timeIntervalSince1970: hub.clock.now.wall) }

  /// Takes back the conditions the group holds (from the store), then registers with the hub:
  /// in that order, events the hub hands over at the registration (a daemon's events kept while
  /// the app was away) find their conditions.
  func open() {
    let restored = hub.regions(group: group)
    let date = now
    state.withLock { state in
      for (spec, regionState) in restored where state.entries[spec.identifier] == nil {
        let condition = Self.condition(for: spec)
        let event = CLMonitor.Event(
          identifier: spec.identifier, state: CLMonitor.Event.State(regionState), date: date,
          diagnostics: state.diagnostics)
        Self.insert(
          Entry(condition: condition, spec: spec, lastEvent: event, kind: .monitored),
          identifier: spec.identifier, into: &state)
      }
    }
    let id = hub.register(self)
    state.withLock { $0.id = id }
  }

  /// Unregisters from the hub and ends the event queue (the conditions stay in the store).
  func close() {
    if let id = state.withLock({ $0.id }) { hub.unregister(id) }
    mailbox.close()
  }

  // MARK: Conditions

  var identifiers: [String] { state.withLock { $0.order } }

  func record(for identifier: String) -> CLMonitor.Record? {
    state.withLock { state in
      state.entries[identifier].map {
        CLMonitor.Record(condition: $0.condition, lastEvent: $0.lastEvent)
      }
    }
  }

  func add(
    _ condition: any CLCondition, identifier: String, assuming assumed: CLMonitor.Event.State
  ) {
    let date = now
    // A beacon condition with no radio would only ever be "unsatisfied": unsupported instead, as
    // `startMonitoring(for: CLBeaconRegion)` fails then.
    if let spec = Self.spec(for: condition, identifier: identifier),
      spec.beacon == nil || hub.beaconsAvailable
    {
      let id = state.withLock { state -> ClientID? in
        let event = CLMonitor.Event(
          identifier: identifier, state: assumed, date: date, diagnostics: state.diagnostics)
        var entry = Entry(condition: condition, spec: spec, lastEvent: event, kind: .monitored)
        entry.pendingAdds = 1
        Self.insert(entry, identifier: identifier, into: &state)
        return state.id
      }
      hub.addRegion(spec, group: group, initialState: RegionState(assumed), requester: id)
      return
    }
    let (event, wasMonitored) = state.withLock { state -> (CLMonitor.Event, Bool) in
      let event = CLMonitor.Event(
        identifier: identifier, state: .unmonitored, date: date, diagnostics: state.diagnostics,
        conditionUnsupported: true)
      let wasMonitored = state.entries[identifier].map { $0.kind != .unmonitored } ?? false
      var entry = Entry(condition: condition, spec: nil, lastEvent: event, kind: .unmonitored)
      entry.announced = state.diagnostics
      Self.insert(entry, identifier: identifier, into: &state)
      return (event, wasMonitored)
    }
    if wasMonitored { hub.removeRegion(identifier: identifier, group: group) }
    mailbox.yield([event])
  }

  func remove(_ identifier: String) {
    let existed = state.withLock { state -> Bool in
      guard state.entries.removeValue(forKey: identifier) != nil else { return false }
      state.order.removeAll { $0 == identifier }
      return true
    }
    if existed { hub.removeRegion(identifier: identifier, group: group) }
  }

  /// The region a condition is monitored as: a circle, or a beacon region (inside while a
  /// matching beacon is heard, `BeaconRegionMonitor`'s rule); nil for a type this build does not
  /// monitor.
  static func spec(for condition: any CLCondition, identifier: String) -> RegionSpec? {
    if let circle = condition as? CLMonitor.CircularGeographicCondition {
      return RegionSpec(
        identifier: identifier, latitude: circle.center.latitude,
        longitude: circle.center.longitude, radius: circle.radius)
    }
    if let beacon = condition as? CLMonitor.BeaconIdentityCondition {
      return RegionSpec.beacon(
        identifier: identifier,
        BeaconConstraint(uuid: BeaconUUID(beacon.uuid), major: beacon.major, minor: beacon.minor))
    }
    return nil
  }

  /// The condition a stored region stands for.
  static func condition(for spec: RegionSpec) -> any CLCondition {
    if let beacon = spec.beacon {
      if let major = beacon.major, let minor = beacon.minor {
        return CLMonitor.BeaconIdentityCondition(
          uuid: beacon.uuid.foundationUUID, major: major, minor: minor)
      }
      if let major = beacon.major {
        return CLMonitor.BeaconIdentityCondition(uuid: beacon.uuid.foundationUUID, major: major)
      }
      return CLMonitor.BeaconIdentityCondition(uuid: beacon.uuid.foundationUUID)
    }
    return CLMonitor.CircularGeographicCondition(
      center: CLLocationCoordinate2D(latitude: spec.latitude, longitude: spec.longitude),
      radius: spec.radius)
  }

  /// Puts an entry in place of any with its identifier (keeping its place in `order` and counting
  /// the hub's answers still due for the old one).
  private static func insert(_ entry: Entry, identifier: String, into state: inout State) {
    var entry = entry
    if let previous = state.entries[identifier] {
      entry.pendingAdds += previous.pendingAdds
    } else {
      state.order.append(identifier)
    }
    state.entries[identifier] = entry
  }

  // MARK: HubClient

  /// A monitor reports the regions of its own group.
  var regionGroups: Set<String> { [group] }

  func hub(_ hub: any LocationService, deliver delivery: HubDelivery) {
    switch delivery {
    case .regionEvents(let group, let events):
      guard group == self.group else { return }
      regionEvents(events)
    case .regionStarted(let group, let spec):
      guard group == self.group else { return }
      state.withLock { state in
        guard var entry = state.entries[spec.identifier] else { return }
        entry.pendingAdds = max(0, entry.pendingAdds - 1)
        state.entries[spec.identifier] = entry
      }
    case .regionFailed(let group, let identifier, let failure):
      guard group == self.group else { return }
      regionFailed(identifier, failure)
    case .authorization(let snapshot):
      authorizationChanged(snapshot)
    case .locations, .error, .regionState, .heading, .headingInterference, .deferredFinished,
      .paused,
      .resumed, .visit, .beacons, .rangingFailed:
      break
    }
  }

  /// Changes of state become events; a determination that agrees with the condition's state (the
  /// state assumed with `add(_:identifier:assuming:)`, or restored) is no change and is not
  /// reported.
  private func regionEvents(_ events: [RegionEvent]) {
    let date = now
    let made = state.withLock { state -> [CLMonitor.Event] in
      var made: [CLMonitor.Event] = []
      for event in events {
        guard case .determined(let regionState) = event.kind,
          var entry = state.entries[event.identifier], entry.kind != .unmonitored
        else { continue }
        let newState = CLMonitor.Event.State(regionState)
        entry.kind = .monitored
        if entry.lastEvent.state != newState {
          entry.lastEvent = CLMonitor.Event(
            identifier: event.identifier, state: newState,
            date: event.date.map { Date(timeIntervalSince1970: $0) } ?? date,
            diagnostics: state.diagnostics)
          entry.announced = state.diagnostics
          made.append(entry.lastEvent)
        }
        state.entries[event.identifier] = entry
      }
      return made
    }
    mailbox.yield(made)
  }

  private func regionFailed(_ identifier: String, _ failure: RegionFailure) {
    let date = now
    let event = state.withLock { state -> CLMonitor.Event? in
      guard var entry = state.entries[identifier] else { return nil }
      entry.pendingAdds = max(0, entry.pendingAdds - 1)
      defer { state.entries[identifier] = entry }
      guard entry.pendingAdds == 0, entry.kind == .monitored else { return nil }
      switch failure {
      case .denied:
        entry.kind = .awaitingAuthorization
        var diagnostics = state.diagnostics
        if !diagnostics.blocksMonitoring { diagnostics.authorizationDenied = true }
        guard entry.announced != diagnostics else { return nil }
        entry.lastEvent = CLMonitor.Event(
          identifier: identifier, state: entry.lastEvent.state, date: date,
          diagnostics: diagnostics)
        entry.announced = diagnostics
      case .invalid, .notStored:
        entry.kind = .unmonitored
        entry.lastEvent = CLMonitor.Event(
          identifier: identifier, state: .unmonitored, date: date, diagnostics: state.diagnostics,
          conditionUnsupported: true)
        entry.announced = state.diagnostics
      }
      return entry.lastEvent
    }
    if let event { mailbox.yield([event]) }
  }

  /// A change of the flags events carry gives every condition an event with its current state and
  /// the new flags; conditions waiting for authorization are added again when it allows location.
  private func authorizationChanged(_ snapshot: AuthorizationSnapshot) {
    let diagnostics = MonitorDiagnostics(snapshot)
    let date = now
    let (made, again, id) = state.withLock {
      state -> ([CLMonitor.Event], [(RegionSpec, RegionState)], ClientID?) in
      guard state.diagnostics != diagnostics else { return ([], [], nil) }
      state.diagnostics = diagnostics
      var made: [CLMonitor.Event] = []
      var again: [(RegionSpec, RegionState)] = []
      for identifier in state.order {
        guard var entry = state.entries[identifier], entry.kind != .unmonitored else { continue }
        if entry.kind == .awaitingAuthorization, snapshot.allowsLocation, let spec = entry.spec {
          entry.kind = .monitored
          entry.pendingAdds += 1
          again.append((spec, RegionState(entry.lastEvent.state)))
        }
        entry.lastEvent = CLMonitor.Event(
          identifier: identifier, state: entry.lastEvent.state, date: date,
          diagnostics: diagnostics)
        entry.announced = diagnostics
        made.append(entry.lastEvent)
        state.entries[identifier] = entry
      }
      return (made, again, state.id)
    }
    mailbox.yield(made)
    for (spec, initialState) in again {
      hub.addRegion(spec, group: group, initialState: initialState, requester: id)
    }
  }
}

extension RegionState {
  /// The engine state a monitor's state starts a region in: satisfied is inside, unsatisfied
  /// outside, anything else unknown.
  init(_ state: CLMonitor.Event.State) {
    switch state {
    case .satisfied: self = .inside
    case .unsatisfied: self = .outside
    case .unknown, .unmonitored: self = .unknown
    }
  }
}
