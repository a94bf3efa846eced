import Foundation
import Geocoding
import Synchronization

/// Runs delegate calls for a simulated environment (instead of a thread's run loop).
package protocol DeliveryScheduler: Sendable {
  /// Queues `work`; the environment runs queued work in order when it is driven.
  func schedule(_ work: @escaping @Sendable () -> Void)
}

/// The hub (and, in simulations, the delivery scheduler) that a new `CLLocationManager` or
/// live-updates stream binds to.
///
/// Normal programs use the live service (`HubEnvironment.live`): `locationd` through a
/// `DaemonClient` when its socket exists, else the embedded `LocationHub.shared` (the rules are in
/// `LiveServiceSelection`). `CoreLocationTesting` binds a simulated hub for the duration of a
/// closure (a task-local value, so parallel tests do not see each other's environments) or for the
/// whole process; a bound environment always wins over the live service.
package struct HubEnvironment: Sendable {
  /// The service (an in-process hub or a daemon client).
  package var hub: any LocationService
  /// Where delegate calls run; `nil` for the run-loop rule.
  package var scheduler: (any DeliveryScheduler)?
  /// What `CLGeocoder` asks in this environment; `nil` for the live geocoder
  /// (`GeocoderSelection.live`).
  package var geocoder: (any PlaceGeocoder)? = nil

  /// Creates an environment.
  package init(hub: any LocationService, scheduler: (any DeliveryScheduler)?) {
    self.hub = hub
    self.scheduler = scheduler
  }

  /// The environment bound to the current task, if any.
  @TaskLocal package static var bound: HubEnvironment?

  private static let global = Mutex<HubEnvironment?>(nil)

  /// Binds an environment for the whole process (`nil` unbinds).
  package static func setGlobal(_ environment: HubEnvironment?) {
    global.withLock { $0 = environment }
  }

  /// The environment a simulation bound to this task or to the process, if any; unlike `current`,
  /// it never starts the live service.
  package static var simulated: HubEnvironment? {
    bound ?? global.withLock { $0 }
  }

  /// The environment new managers bind to: the task's, else the process's, else the live service.
  package static var current: HubEnvironment {
    bound ?? global.withLock { $0 } ?? HubEnvironment(hub: live, scheduler: nil)
  }

  /// The process's live service, chosen on first use from the environment
  /// (`LiveServiceSelection.choose`): the daemon, or the embedded hub.
  package static let live: any LocationService = LiveServiceSelection.choose(
    environment: ProcessInfo.processInfo.environment)
}
