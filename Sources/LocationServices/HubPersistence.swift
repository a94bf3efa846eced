import Geodesy
import LocationEngine
import LocationModel
import LocationStore
import Synchronization

/// What a hub keeps across launches: the app's authorization, the global services switch, the
/// last known location and the regions with their states. `StorePersistence` keeps them in the
/// SQLite store; `MemoryPersistence` in memory (tests, and `CORELOCATION_STORE=:memory:`).
///
/// Every write can fail and says so (`StoreError`): the caller decides what a failure means. The
/// hub's rule (README, "When the store fails"): a failed commit of region states is "not yet", the
/// events wait and the commit is retried (``CommitOutbox``); a region that cannot be stored is not
/// monitored; a last known location that cannot be stored is not retried (the next one will be).
/// Reads never fail: what cannot be read counts as nothing stored.
package protocol HubPersistence: Sendable {
  /// The stored decision for an app, if any.
  func authorization(app: String) -> AuthorizationSnapshot?
  /// Stores a decision; committed on return.
  func setAuthorization(_ snapshot: AuthorizationSnapshot, app: String) throws(StoreError)
  /// The global switch behind `locationServicesEnabled()` (default on).
  func servicesEnabled() -> Bool
  /// Sets the global switch; committed on return.
  func setServicesEnabled(_ enabled: Bool) throws(StoreError)
  /// The last known location.
  func lastKnownLocation() -> Fix?
  /// Stores the last known location; committed on return.
  func saveLastKnownLocation(_ fix: Fix) throws(StoreError)
  /// Every stored region of an app, by group, with its last state.
  func regions(app: String) -> [String: [(spec: RegionSpec, state: RegionState)]]
  /// Stores (or replaces by identifier) a region with its state; committed on return.
  func saveRegion(_ spec: RegionSpec, state: RegionState, group: String, app: String)
    throws(StoreError)
  /// Deletes a region (nothing when it is not stored); committed on return.
  func deleteRegion(identifier: String, group: String, app: String) throws(StoreError)
  /// Stores new states of regions, all or nothing; returns only once they are committed. A
  /// region that is not stored is skipped.
  func saveRegionStates(
    _ states: [(identifier: String, state: RegionState)], group: String, app: String, time: Double
  ) throws(StoreError)
  /// Commits what one evaluation changed: the new states behind `events` (and, for a persistence
  /// that keeps events for absent apps, the events themselves, in the same transaction, so that a
  /// crash never leaves a state without its event or an event twice). Returns once committed;
  /// throws when nothing was (the caller holds the events and tries again).
  /// The default stores the states with `saveRegionStates`.
  func commitRegionEvents(_ events: [RegionEvent], group: String, app: String, time: Double)
    throws(StoreError)
  /// Commits a visit before anyone is told of it, for a persistence that keeps events for absent
  /// apps; returns once committed; throws when nothing was (the caller holds the visit and tries
  /// again). The default keeps nothing (an app in its own process hears visits only while it
  /// runs).
  func commitVisit(_ visit: Visit, app: String, time: Double) throws(StoreError)
  /// Whether the app monitors visits (`startMonitoringVisits()`, kept until it stops).
  func monitorsVisits(app: String) -> Bool
  /// Turns visit monitoring on or off for the app; committed on return.
  func setVisitMonitoring(_ on: Bool, app: String, time: Double) throws(StoreError)
}

extension HubPersistence {
  package func commitVisit(_ visit: Visit, app: String, time: Double) throws(StoreError) {}

  package func commitRegionEvents(
    _ events: [RegionEvent], group: String, app: String, time: Double
  ) throws(StoreError) {
    let states = RegionEvent.determinedStates(events)
    if !states.isEmpty { try saveRegionStates(states, group: group, app: app, time: time) }
  }
}

extension RegionEvent {
  /// The new state of each region that `events` determine, in order.
  package static func determinedStates(_ events: [RegionEvent]) -> [(
    identifier: String, state: RegionState
  )] {
    events.compactMap { event in
      if case .determined(let state) = event.kind { return (event.identifier, state) }
      return nil
    }
  }
}

/// Persistence in memory only.
package final class MemoryPersistence: HubPersistence {
  private struct State {
    var authorizations: [String: AuthorizationSnapshot] = [:]
    var servicesEnabled = true
    var lastKnown: Fix?
    var regions: [String: [String: RegionList]] = [:]
    var visitApps: Set<String> = []
  }

  /// One group's regions in the order they were added, with an index by identifier, so that
  /// adding or updating one region costs O(1) however many there are.
  private struct RegionList {
    var items: [(spec: RegionSpec, state: RegionState)] = []
    var positions: [String: Int] = [:]

    mutating func upsert(_ spec: RegionSpec, _ state: RegionState) {
      if let index = positions[spec.identifier] {
        items[index] = (spec, state)
      } else {
        positions[spec.identifier] = items.count
        items.append((spec, state))
      }
    }

    mutating func setState(_ state: RegionState, of identifier: String) {
      if let index = positions[identifier] { items[index].state = state }
    }

    mutating func remove(_ identifier: String) {
      guard let index = positions.removeValue(forKey: identifier) else { return }
      items.remove(at: index)
      for position in index..<items.count { positions[items[position].spec.identifier] = position }
    }
  }

  private let state = Mutex(State())

  /// Creates an empty store, optionally with a last known location.
  package init(lastKnownLocation: Fix? = nil) {
    state.withLock { $0.lastKnown = lastKnownLocation }
  }

  package func authorization(app: String) -> AuthorizationSnapshot? {
    state.withLock { $0.authorizations[app] }
  }

  package func setAuthorization(_ snapshot: AuthorizationSnapshot, app: String) {
    state.withLock { $0.authorizations[app] = snapshot.persisted }
  }

  package func servicesEnabled() -> Bool { state.withLock { $0.servicesEnabled } }

  package func setServicesEnabled(_ enabled: Bool) {
    state.withLock { $0.servicesEnabled = enabled }
  }

  package func lastKnownLocation() -> Fix? { state.withLock { $0.lastKnown } }

  package func saveLastKnownLocation(_ fix: Fix) { state.withLock { $0.lastKnown = fix } }

  package func regions(app: String) -> [String: [(spec: RegionSpec, state: RegionState)]] {
    state.withLock { ($0.regions[app] ?? [:]).mapValues(\.items) }
  }

  package func saveRegion(
    _ spec: RegionSpec, state regionState: RegionState, group: String, app: String
  ) {
    state.withLock {
      $0.regions[app, default: [:]][group, default: RegionList()].upsert(spec, regionState)
    }
  }

  package func deleteRegion(identifier: String, group: String, app: String) {
    state.withLock { $0.regions[app]?[group]?.remove(identifier) }
  }

  package func saveRegionStates(
    _ states: [(identifier: String, state: RegionState)], group: String, app: String, time: Double
  ) {
    state.withLock { state in
      for (identifier, regionState) in states {
        state.regions[app]?[group]?.setState(regionState, of: identifier)
      }
    }
  }

  package func monitorsVisits(app: String) -> Bool {
    state.withLock { $0.visitApps.contains(app) }
  }

  package func setVisitMonitoring(_ on: Bool, app: String, time: Double) {
    state.withLock {
      if on { $0.visitApps.insert(app) } else { $0.visitApps.remove(app) }
    }
  }

}
