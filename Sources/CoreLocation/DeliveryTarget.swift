import Foundation
import LocationServices
import Synchronization

/// Where a manager's delegate calls run: the run loop of a thread (Apple's rule), the main dispatch
/// queue when that thread is the main thread, or a scheduler installed by a simulated environment.
///
/// A delivery made on the target's own thread while the daemon client's reading run loop reads
/// there (`RunLoopReadingDeliveries`) runs as soon as that reading is done, in the same turn of the
/// run loop, when none of this target's earlier deliveries still waits: the order of one
/// manager's deliveries is kept.
struct DeliveryTarget: @unchecked Sendable {
  // @unchecked: RunLoop is not Sendable, but `perform(_:)` is the documented way to hand work to
  // another thread's run loop; nothing else of the run loop is touched off its thread.
  private enum Kind {
    /// The main dispatch queue; the main thread's `pthread_self()`, to know it again without
    /// `Thread.isMainThread` (two system calls on Linux, `getpid` and `gettid`, per delivery).
    case mainQueue(pthread_t)
    case runLoop(RunLoop)
    case scheduler(any DeliveryScheduler)
  }

  private let kind: Kind
  /// Deliveries scheduled and not run yet.
  private let waiting = WaitingCount()

  /// The target for the calling thread (or the environment's scheduler).
  static func current(_ environment: HubEnvironment) -> DeliveryTarget {
    if let scheduler = environment.scheduler { return DeliveryTarget(kind: .scheduler(scheduler)) }
    if Thread.isMainThread { return DeliveryTarget(kind: .mainQueue(pthread_self())) }
    return DeliveryTarget(kind: .runLoop(RunLoop.current))
  }

  /// Runs `work` on the target.
  func run(_ work: @escaping @Sendable () -> Void) {
    switch kind {
    case .mainQueue(let mainThread):
      // The main thread lives as long as the process (short of `pthread_exit` on it): its
      // identifier is never another thread's.
      hand(work, onThisThread: pthread_equal(pthread_self(), mainThread) != 0) {
        DispatchQueue.main.async(execute: $0)
      }
    case .runLoop(let runLoop):
      hand(work, onThisThread: RunLoop.current === runLoop) { runLoop.perform($0) }
    case .scheduler(let scheduler):
      scheduler.schedule(work)
    }
  }

  /// Runs `work` in the reading run loop's turn when called on the target's thread while that
  /// thread reads and nothing of this target waits (the count only grows on other threads then);
  /// else schedules it, counted while it waits.
  private func hand(
    _ work: @escaping @Sendable () -> Void, onThisThread: Bool,
    schedule: (@escaping @Sendable () -> Void) -> Void
  ) {
    if onThisThread, ReadingDeliveries.isCollecting,
      waiting.count.load(ordering: .relaxed) == 0, ReadingDeliveries.take(work)
    {
      return
    }
    let waiting = waiting
    waiting.count.add(1, ordering: .relaxed)
    schedule {
      work()
      waiting.count.subtract(1, ordering: .relaxed)
    }
  }
}

/// A count shared by the copies of one `DeliveryTarget`.
private final class WaitingCount: Sendable {
  let count = Atomic<Int>(0)
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
