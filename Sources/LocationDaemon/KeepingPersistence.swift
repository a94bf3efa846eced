import Geodesy
import LocationEngine
import LocationModel
import LocationServices
import LocationStore
import Synchronization

/// The persistence an app host gives its hub: the daemon's, with region evaluations committed
/// through the host, which keeps the events of an absent app in the same transaction.
final class KeepingPersistence: HubPersistence {
  final class WeakHost: @unchecked Sendable {
    // @unchecked: read and written only under the owner's mutex.
    weak var value: AppHost?
  }

  let base: any HubPersistence
  let host = Mutex(WeakHost())

  init(base: any HubPersistence) { self.base = base }

  func authorization(app: String) -> AuthorizationSnapshot? { base.authorization(app: app) }
  func setAuthorization(_ snapshot: AuthorizationSnapshot, app: String) throws(StoreError) {
    try base.setAuthorization(snapshot, app: app)
  }
  func servicesEnabled() -> Bool { base.servicesEnabled() }
  func setServicesEnabled(_ enabled: Bool) throws(StoreError) {
    try base.setServicesEnabled(enabled)
  }
  func lastKnownLocation() -> Fix? { base.lastKnownLocation() }
  func saveLastKnownLocation(_ fix: Fix) throws(StoreError) {
    try base.saveLastKnownLocation(fix)
  }
  func regions(app: String) -> [String: [(spec: RegionSpec, state: RegionState)]] {
    base.regions(app: app)
  }
  /// Through the host, which publishes the region of an app that opted in (in one transaction).
  func saveRegion(_ spec: RegionSpec, state: RegionState, group: String, app: String)
    throws(StoreError)
  {
    if let host = host.withLock({ $0.value }) {
      try host.saveRegion(spec, state: state, group: group, base: base)
    } else {
      try base.saveRegion(spec, state: state, group: group, app: app)
    }
  }
  func deleteRegion(identifier: String, group: String, app: String) throws(StoreError) {
    try base.deleteRegion(identifier: identifier, group: group, app: app)
    host.withLock { $0.value }?.regionDeleted()
  }
  func saveRegionStates(
    _ states: [(identifier: String, state: RegionState)], group: String, app: String, time: Double
  ) throws(StoreError) {
    try base.saveRegionStates(states, group: group, app: app, time: time)
  }
  func monitorsVisits(app: String) -> Bool { base.monitorsVisits(app: app) }
  func setVisitMonitoring(_ on: Bool, app: String, time: Double) throws(StoreError) {
    try base.setVisitMonitoring(on, app: app, time: time)
  }
  /// Through the host, which keeps the visit for the app until a connection acknowledges it;
  /// throws when nothing was committed, and the hub holds the visit.
  func commitVisit(_ visit: Visit, app: String, time: Double) throws(StoreError) {
    if let host = host.withLock({ $0.value }) {
      try host.commitVisit(visit, time: time, base: base)
    } else {
      try base.commitVisit(visit, app: app, time: time)
    }
  }
  /// Through the host (which keeps the events of an absent app in the same transaction); throws
  /// when nothing was committed, and the hub holds the events.
  func commitRegionEvents(_ events: [RegionEvent], group: String, app: String, time: Double)
    throws(StoreError)
  {
    if let host = host.withLock({ $0.value }) {
      try host.commitRegionEvents(events, group: group, time: time, base: base)
    } else {
      try base.commitRegionEvents(events, group: group, app: app, time: time)
    }
  }
}
