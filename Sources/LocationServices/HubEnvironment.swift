import Synchronization

/// Runs delegate calls for a simulated environment (instead of a thread's run loop).
public protocol DeliveryScheduler: Sendable {
  /// Queues `work`; the environment runs queued work in order when it is driven.
  func schedule(_ work: @escaping @Sendable () -> Void)
}

/// The hub (and, in simulations, the delivery scheduler) that a new `CLLocationManager` or
/// live-updates stream binds to.
///
/// Normal programs use `LocationHub.shared`. `CoreLocationTesting` binds a simulated hub for the
/// duration of a closure (a task-local value, so parallel tests do not see each other's
/// environments) or for the whole process.
public struct HubEnvironment: Sendable {
  /// The hub.
  public var hub: LocationHub
  /// Where delegate calls run; `nil` for the run-loop rule.
  public var scheduler: (any DeliveryScheduler)?

  /// Creates an environment.
  public init(hub: LocationHub, scheduler: (any DeliveryScheduler)?) {
    self.hub = hub
    self.scheduler = scheduler
  }

  /// The environment bound to the current task, if any.
  @TaskLocal public static var bound: HubEnvironment?

  private static let global = Mutex<HubEnvironment?>(nil)

  /// Binds an environment for the whole process (`nil` unbinds).
  public static func setGlobal(_ environment: HubEnvironment?) {
    global.withLock { $0 = environment }
  }

  /// The environment new managers bind to: the task's, else the process's, else the live hub.
  public static var current: HubEnvironment {
    bound ?? global.withLock { $0 } ?? HubEnvironment(hub: .shared, scheduler: nil)
  }
}
