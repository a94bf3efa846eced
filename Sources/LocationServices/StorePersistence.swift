import Foundation
import Geodesy
import LocationEngine
import LocationModel
import LocationStore
import Synchronization

/// Hub persistence in the SQLite store. Every write is committed on return or throws the store's
/// error (the hub holds what depends on it: README, "When the store fails"); what was written is
/// also kept in memory, so that this process reads back its own decisions while the store fails.
/// Regions excepted: the engine of the hub that saved them holds every region it monitors, and
/// is the only reader of them in this process (a hub reads its regions once, when it is made, and
/// `locationd` never retires an app's host while it has regions), so a second copy here would
/// only cost memory (9 MB for 50,000 regions in `locbench daemon`). A failed read counts as
/// "nothing stored". Store errors never reach the app as crashes.
package final class StorePersistence: HubPersistence {
  /// The store.
  package let store: LocationStore
  private let fallback = MemoryPersistence()
  /// The least time between two commits of the last known location, in the fixes' own seconds.
  package let lastKnownLocationInterval: Double
  /// The time of the fix last committed as the last known location, if any.
  private let lastCommitted = Mutex<Double?>(nil)

  /// Wraps an open store.
  /// - Parameters:
  ///   - store: The store.
  ///   - lastKnownLocationInterval: A save of the last known location whose fix is less than this
  ///     many seconds newer than the last one committed is kept in memory only (0: every save is
  ///     committed). Every hub of a `locationd` saves the machine's location every 5 s, each on
  ///     its own beat: one commit (an `fsync`) per interval does for all of them.
  package init(store: LocationStore, lastKnownLocationInterval: Double = 0) {
    self.store = store
    self.lastKnownLocationInterval = lastKnownLocationInterval
  }

  /// The setting key of the global services switch.
  package static let servicesEnabledKey = "servicesEnabled"

  package func authorization(app: String) -> AuthorizationSnapshot? {
    guard let stored = (try? store.authorization(app: app)) ?? nil else {
      return fallback.authorization(app: app)
    }
    return AuthorizationSnapshot(
      status: stored.status, accuracy: stored.accuracy, once: stored.once)
  }

  package func setAuthorization(_ decision: AuthorizationSnapshot, app: String) throws(StoreError) {
    let snapshot = decision.persisted
    fallback.setAuthorization(snapshot, app: app)
    try store.setAuthorization(
      StoredAuthorization(
        status: snapshot.status, accuracy: snapshot.accuracy,
        updated: Date().timeIntervalSince1970, once: snapshot.once),
      app: app)
  }

  package func servicesEnabled() -> Bool {
    guard let value = (try? store.setting(Self.servicesEnabledKey)) ?? nil else {
      return fallback.servicesEnabled()
    }
    return value != "0"
  }

  package func setServicesEnabled(_ enabled: Bool) throws(StoreError) {
    fallback.setServicesEnabled(enabled)
    try store.setSetting(Self.servicesEnabledKey, enabled ? "1" : "0")
  }

  package func lastKnownLocation() -> Fix? {
    ((try? store.lastKnownLocation(app: "")) ?? nil) ?? fallback.lastKnownLocation()
  }

  package func saveLastKnownLocation(_ fix: Fix) throws(StoreError) {
    fallback.saveLastKnownLocation(fix)
    let interval = lastKnownLocationInterval
    let due = lastCommitted.withLock { last -> Bool in
      // A fix older than the last one committed (a replay that began again) is committed.
      if let last, fix.time >= last, fix.time - last < interval { return false }
      last = fix.time
      return true
    }
    guard due else { return }
    do {
      try store.saveLastKnownLocation(fix, app: "")
    } catch {
      lastCommitted.withLock { $0 = nil }
      throw error
    }
  }

  package func regions(app: String) -> [String: [(spec: RegionSpec, state: RegionState)]] {
    let stored: [StoredRegion]
    do {
      stored = try store.regions(app: app)
    } catch {
      FileHandle.standardError.write(
        Data("corelocation: store: regions unreadable: \(error)\n".utf8))
      return [:]
    }
    var result: [String: [(spec: RegionSpec, state: RegionState)]] = [:]
    for region in stored {
      let spec = RegionSpec(
        identifier: region.identifier, latitude: region.latitude, longitude: region.longitude,
        radius: region.radius, hysteresis: region.hysteresis, notifyOnEntry: region.notifyOnEntry,
        notifyOnExit: region.notifyOnExit, beacon: RegionSpec.beacon(fromStored: region.extra))
      result[region.group, default: []].append(
        (spec, RegionState(rawValue: region.state) ?? .unknown))
    }
    return result
  }

  package func saveRegion(_ spec: RegionSpec, state: RegionState, group: String, app: String)
    throws(StoreError)
  {
    try store.upsertRegion(
      StoredRegion(
        app: app, group: group, identifier: spec.identifier, latitude: spec.latitude,
        longitude: spec.longitude, radius: spec.radius, hysteresis: spec.hysteresis,
        notifyOnEntry: spec.notifyOnEntry, notifyOnExit: spec.notifyOnExit, state: state.rawValue,
        extra: spec.storedExtra))
  }

  package func deleteRegion(identifier: String, group: String, app: String) throws(StoreError) {
    try store.deleteRegion(app: app, group: group, identifier: identifier)
  }

  package func saveRegionStates(
    _ states: [(identifier: String, state: RegionState)], group: String, app: String, time: Double
  ) throws(StoreError) {
    do {
      try store.transaction {
        for (identifier, state) in states {
          do {
            try store.setRegionState(
              app: app, group: group, identifier: identifier, state: state.rawValue, time: time)
          } catch let error as StoreError where error.code == .notFound {
            // Not stored (its add could not be): it has no state to keep either.
            continue
          }
        }
      }
    } catch let error as StoreError {
      throw error
    } catch {
      throw StoreError(code: .other, message: "\(error)", operation: "saveRegionStates")
    }
  }

  package func monitorsVisits(app: String) -> Bool {
    (try? store.monitorsVisits(app: app)) ?? fallback.monitorsVisits(app: app)
  }

  package func setVisitMonitoring(_ on: Bool, app: String, time: Double) throws(StoreError) {
    fallback.setVisitMonitoring(on, app: app, time: time)
    try store.setVisitMonitoring(on, app: app, since: time)
  }
}

extension LocationHub {
  /// The store for a path, opened as `LocationStore.open(path:vfs:)` does (a damaged file moved
  /// aside, the integrity check after an unclean shutdown), its episodes told once each on
  /// standard error, and closed when the process exits; in memory when the path is `nil`, or when
  /// the store cannot be opened (said once: the app still works, but remembers nothing).
  static func makePersistence(_ path: String?, app: String) -> any HubPersistence {
    guard let path else { return MemoryPersistence() }
    do {
      let opening = try LocationStore.open(path: path)
      for notice in opening.notices { report(notice) }
      opening.store.setListener { report($0) }
      closeStoresAtExit()
      return StorePersistence(store: opening.store)
    } catch {
      FileHandle.standardError.write(
        Data("corelocation: store \(path) unavailable (\(error)); keeping state in memory\n".utf8))
      return MemoryPersistence()
    }
  }

  /// Writes a store notice on standard error: `corelocation: store PATH: ...`.
  static func report(_ notice: StoreNotice) {
    FileHandle.standardError.write(Data("corelocation: \(notice)\n".utf8))
  }

  /// Registers `LocationStore.closeAll()` with `atexit`, once: a program that ends through `exit`
  /// or by returning from `main` leaves its stores closed, the write-ahead log checkpointed.
  static func closeStoresAtExit() {
    _ = registerAtExit
  }

  private static let registerAtExit: Void = {
    atexit { LocationStore.closeAll() }
  }()
}
