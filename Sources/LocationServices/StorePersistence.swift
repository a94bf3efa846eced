import Foundation
import Geodesy
import LocationEngine
import LocationModel
import LocationStore

/// Hub persistence in the SQLite store. Store errors never reach the app as crashes: a failed read
/// counts as "nothing stored", a failed write is reported once on standard error (libraries log; the
/// app keeps working on what it has in memory).
package final class StorePersistence: HubPersistence {
  private let store: LocationStore
  private let fallback = MemoryPersistence()

  /// Wraps an open store.
  package init(store: LocationStore) {
    self.store = store
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

  package func setAuthorization(_ snapshot: AuthorizationSnapshot, app: String) {
    fallback.setAuthorization(snapshot, app: app)
    report {
      try store.setAuthorization(
        StoredAuthorization(
          status: snapshot.status, accuracy: snapshot.accuracy,
          updated: Date().timeIntervalSince1970, once: snapshot.once),
        app: app)
    }
  }

  package func servicesEnabled() -> Bool {
    guard let value = (try? store.setting(Self.servicesEnabledKey)) ?? nil else {
      return fallback.servicesEnabled()
    }
    return value != "0"
  }

  package func setServicesEnabled(_ enabled: Bool) {
    fallback.setServicesEnabled(enabled)
    report { try store.setSetting(Self.servicesEnabledKey, enabled ? "1" : "0") }
  }

  package func lastKnownLocation() -> Fix? {
    ((try? store.lastKnownLocation(app: "")) ?? nil) ?? fallback.lastKnownLocation()
  }

  package func saveLastKnownLocation(_ fix: Fix) {
    fallback.saveLastKnownLocation(fix)
    report { try store.saveLastKnownLocation(fix, app: "") }
  }

  package func regions(app: String) -> [String: [(spec: RegionSpec, state: RegionState)]] {
    let stored: [StoredRegion]
    do {
      stored = try store.regions(app: app)
    } catch {
      FileHandle.standardError.write(
        Data("corelocation: store: regions unreadable: \(error)\n".utf8))
      return fallback.regions(app: app)
    }
    var result: [String: [(spec: RegionSpec, state: RegionState)]] = [:]
    for region in stored {
      let spec = RegionSpec(
        identifier: region.identifier, latitude: region.latitude, longitude: region.longitude,
        radius: region.radius, hysteresis: region.hysteresis, notifyOnEntry: region.notifyOnEntry,
        notifyOnExit: region.notifyOnExit)
      result[region.group, default: []].append(
        (spec, RegionState(rawValue: region.state) ?? .unknown))
    }
    return result
  }

  package func saveRegion(_ spec: RegionSpec, state: RegionState, group: String, app: String) {
    fallback.saveRegion(spec, state: state, group: group, app: app)
    report {
      try store.upsertRegion(
        StoredRegion(
          app: app, group: group, identifier: spec.identifier, latitude: spec.latitude,
          longitude: spec.longitude, radius: spec.radius, hysteresis: spec.hysteresis,
          notifyOnEntry: spec.notifyOnEntry, notifyOnExit: spec.notifyOnExit, state: state.rawValue)
      )
    }
  }

  package func deleteRegion(identifier: String, group: String, app: String) {
    fallback.deleteRegion(identifier: identifier, group: group, app: app)
    report { try store.deleteRegion(app: app, group: group, identifier: identifier) }
  }

  package func saveRegionStates(
    _ states: [(identifier: String, state: RegionState)], group: String, app: String, time: Double
  ) {
    fallback.saveRegionStates(states, group: group, app: app, time: time)
    report {
      try store.transaction {
        for (identifier, state) in states {
          try store.setRegionState(
            app: app, group: group, identifier: identifier, state: state.rawValue, time: time)
        }
      }
    }
  }

  private func report(_ write: () throws -> Void) {
    do {
      try write()
    } catch {
      FileHandle.standardError.write(Data("corelocation: store: \(error)\n".utf8))
    }
  }
}

extension LocationHub {
  /// The store for a path; in memory when the path is `nil` or the store cannot be opened (said once
  /// on standard error: the app still works, but remembers nothing).
  static func makePersistence(_ path: String?, app: String) -> any HubPersistence {
    guard let path else { return MemoryPersistence() }
    do {
      return StorePersistence(store: try LocationStore(path: path))
    } catch {
      FileHandle.standardError.write(
        Data("corelocation: store \(path) unavailable (\(error)); keeping state in memory\n".utf8))
      return MemoryPersistence()
    }
  }
}
