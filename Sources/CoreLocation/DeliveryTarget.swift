import Foundation
import LocationServices

/// Where a manager's delegate calls run: the run loop of a thread (Apple's rule), the main dispatch
/// queue when that thread is the main thread, or a scheduler installed by a simulated environment.
struct DeliveryTarget: @unchecked Sendable {
  // @unchecked: RunLoop is not Sendable, but `perform(_:)` is the documented way to hand work to
  // another thread's run loop; nothing else of the run loop is touched off its thread.
  private enum Kind {
    case mainQueue
    case runLoop(RunLoop)
    case scheduler(any DeliveryScheduler)
  }

  private let kind: Kind

  /// The target for the calling thread (or the environment's scheduler).
  static func current(_ environment: HubEnvironment) -> DeliveryTarget {
    if let scheduler = environment.scheduler { return DeliveryTarget(kind: .scheduler(scheduler)) }
    if Thread.isMainThread { return DeliveryTarget(kind: .mainQueue) }
    return DeliveryTarget(kind: .runLoop(RunLoop.current))
  }

  /// Runs `work` on the target.
  func run(_ work: @escaping @Sendable () -> Void) {
    switch kind {
    case .mainQueue:
      DispatchQueue.main.async(execute: work)
    case .runLoop(let runLoop):
      runLoop.perform(work)
    case .scheduler(let scheduler):
      scheduler.schedule(work)
    }
  }
}

/// Locations handed from the hub's executor to the delivery thread. `CLLocation` is immutable.
struct UncheckedLocations: @unchecked Sendable {
  let locations: [CLLocation]
}

/// An optional error handed to the delivery thread.
struct UncheckedOptionalError: @unchecked Sendable {
  let error: CLError?
}

/// An error handed to the delivery thread; `CLError`'s user info holds only strings and booleans.
struct UncheckedError: @unchecked Sendable {
  let error: CLError
}
