import Geodesy
import Synchronization

/// What a hub keeps across launches: the app's authorization, the global services switch and the
/// last known location. `StorePersistence` keeps them in the SQLite store; `MemoryPersistence` in
/// memory (tests, and the fallback when the store cannot be opened).
public protocol HubPersistence: Sendable {
  /// The stored decision for an app, if any.
  func authorization(app: String) -> AuthorizationSnapshot?
  /// Stores a decision.
  func setAuthorization(_ snapshot: AuthorizationSnapshot, app: String)
  /// The global switch behind `locationServicesEnabled()` (default on).
  func servicesEnabled() -> Bool
  /// Sets the global switch.
  func setServicesEnabled(_ enabled: Bool)
  /// The last known location.
  func lastKnownLocation() -> Fix?
  /// Stores the last known location.
  func saveLastKnownLocation(_ fix: Fix)
}

/// Persistence in memory only.
public final class MemoryPersistence: HubPersistence {
  private struct State {
    var authorizations: [String: AuthorizationSnapshot] = [:]
    var servicesEnabled = true
    var lastKnown: Fix?
  }

  private let state = Mutex(State())

  /// Creates an empty store, optionally with a last known location.
  public init(lastKnownLocation: Fix? = nil) {
    state.withLock { $0.lastKnown = lastKnownLocation }
  }

  public func authorization(app: String) -> AuthorizationSnapshot? {
    state.withLock { $0.authorizations[app] }
  }

  public func setAuthorization(_ snapshot: AuthorizationSnapshot, app: String) {
    state.withLock { $0.authorizations[app] = snapshot }
  }

  public func servicesEnabled() -> Bool { state.withLock { $0.servicesEnabled } }

  public func setServicesEnabled(_ enabled: Bool) {
    state.withLock { $0.servicesEnabled = enabled }
  }

  public func lastKnownLocation() -> Fix? { state.withLock { $0.lastKnown } }

  public func saveLastKnownLocation(_ fix: Fix) { state.withLock { $0.lastKnown = fix } }
}
