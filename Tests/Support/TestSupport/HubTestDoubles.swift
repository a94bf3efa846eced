import Foundation
import Geodesy
import LocationEngine
import LocationModel
import LocationServices
import LocationSources
import Synchronization

/// A hub client that records every delivery.
package final class RecordingClient: HubClient {
  package init() {}

  private let received = Mutex<[HubDelivery]>([])

  package func hub(_ hub: LocationHub, deliver delivery: HubDelivery) {
    received.withLock { $0.append(delivery) }
  }

  /// Everything delivered, in order.
  package var deliveries: [HubDelivery] { received.withLock { $0 } }

  /// The locations delivered, flattened, oldest first.
  package var locations: [Fix] {
    deliveries.flatMap { delivery -> [Fix] in
      if case .locations(let fixes) = delivery { return fixes }
      return []
    }
  }

  /// The errors delivered, in order.
  package var errors: [(EngineError, String?)] {
    deliveries.compactMap { delivery in
      if case .error(let error, let message) = delivery { return (error, message) }
      return nil
    }
  }

  /// The authorization statuses delivered, in order.
  package var statuses: [AuthorizationStatus] {
    deliveries.compactMap { delivery in
      if case .authorization(let snapshot) = delivery { return snapshot.status }
      return nil
    }
  }

  /// Forgets what was delivered so far.
  package func reset() { received.withLock { $0 = [] } }
}

/// A source the test drives by hand: it remembers its context while running.
package final class ScriptedSource: LocationSource {
  package let descriptor: SourceDescriptor
  private let state = Mutex<(context: (any SourceContext)?, starts: Int, stops: Int)>((nil, 0, 0))

  package init(
    url: String = "scripted://test", nominalAccuracy: Double = 5, power: PowerCost = .none,
    producesBeacons: Bool = false, producesScans: Bool = false
  ) {
    descriptor = SourceDescriptor(
      url: url, nominalAccuracy: nominalAccuracy, power: power,
      producesLocation: !producesBeacons, producesBeacons: producesBeacons,
      producesScans: producesScans)
  }

  package func start(context: any SourceContext) {
    state.withLock {
      $0.context = context
      $0.starts += 1
    }
  }

  package func stop() {
    state.withLock {
      $0.context = nil
      $0.stops += 1
    }
  }

  package var isRunning: Bool { state.withLock { $0.context != nil } }
  package var starts: Int { state.withLock { $0.starts } }
  package var stops: Int { state.withLock { $0.stops } }

  /// Sends a fix, if running.
  package func emit(_ fix: Fix) { state.withLock { $0.context }?.emit(fix) }
  /// Sends a beacon advertisement, if running.
  package func emit(_ advertisement: BeaconAdvertisement) {
    state.withLock { $0.context }?.emitAdvertisement(advertisement)
  }
  /// Sends a Wi-Fi scan, if running.
  package func emit(_ scan: WifiScan) { state.withLock { $0.context }?.emitScan(scan) }
  /// Reports a problem, if running.
  package func fail(_ error: SourceError) { state.withLock { $0.context }?.fail(error) }
  /// Ends, if running.
  package func end() { state.withLock { $0.context }?.end() }
}

/// A fix at a place and time.
package func fix(
  _ latitude: Double, _ longitude: Double, time: Double = 1_767_225_600, accuracy: Double = 5
)
  -> Fix
{
  Fix(latitude: latitude, longitude: longitude, horizontalAccuracy: accuracy, time: time)
}

extension LocationHub.Sources {
  /// The URLs, if these are URLs.
  package var urls: [SourceURL]? {
    if case .urls(let urls) = self { return urls }
    return nil
  }

  /// The message, if no source is available.
  package var unavailableMessage: String? {
    if case .unavailable(let message) = self { return message }
    return nil
  }
}

/// A persistence that keeps everything in `base` but for what it implements itself: a test
/// double overrides the one or two calls it watches or fails.
package protocol ForwardingPersistence: HubPersistence {
  var base: MemoryPersistence { get }
}

extension ForwardingPersistence {
  package func authorization(app: String) -> AuthorizationSnapshot? { base.authorization(app: app) }
  package func setAuthorization(_ snapshot: AuthorizationSnapshot, app: String) {
    base.setAuthorization(snapshot, app: app)
  }
  package func servicesEnabled() -> Bool { base.servicesEnabled() }
  package func setServicesEnabled(_ enabled: Bool) { base.setServicesEnabled(enabled) }
  package func lastKnownLocation() -> Fix? { base.lastKnownLocation() }
  package func saveLastKnownLocation(_ fix: Fix) { base.saveLastKnownLocation(fix) }
  package func regions(app: String) -> [String: [(spec: RegionSpec, state: RegionState)]] {
    base.regions(app: app)
  }
  package func saveRegion(_ spec: RegionSpec, state: RegionState, group: String, app: String) {
    base.saveRegion(spec, state: state, group: group, app: app)
  }
  package func deleteRegion(identifier: String, group: String, app: String) {
    base.deleteRegion(identifier: identifier, group: group, app: app)
  }
  package func saveRegionStates(
    _ states: [(identifier: String, state: RegionState)], group: String, app: String,
    time: Double
  ) {
    base.saveRegionStates(states, group: group, app: app, time: time)
  }
  package func monitorsVisits(app: String) -> Bool { base.monitorsVisits(app: app) }
  package func setVisitMonitoring(_ on: Bool, app: String, time: Double) {
    base.setVisitMonitoring(on, app: app, time: time)
  }
}
