import Dispatch
import LocationSources
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// Runs work in order, one item at a time: a FIFO of pending work drained by whichever thread
/// finds it idle (a trampoline: work sent from inside work runs after it, not inside it).
///
/// With a queue (a live hub), ``run(_:)`` drains on the queue, never on the caller's stack, and
/// ``runHere(_:)`` runs its work on the calling thread when nothing is being drained (else the
/// work waits its turn, like any other): a source's thread hands a fix to the engine with no hop
/// to another thread, which would cost a wake-up on the way from the receiver to the app
/// (`locbench latency`). Without a queue (a manual clock), both drain on the calling thread.
package final class HubExecutor: Sendable {
  private let queue: DispatchQueue?
  private let pending = Mutex<(draining: Bool, work: [@Sendable () -> Void])>((false, []))
  /// The thread running ``runHere(_:)``'s work inline (`pthread_self()`), 0 when none.
  private let inlineThread = Atomic<UInt>(0)

  /// An executor draining on `queue`, or on the calling thread when it is nil.
  package init(queue: DispatchQueue?) { self.queue = queue }

  /// Runs `work` after everything sent before it; never on the caller's stack with a queue.
  package func run(_ work: @escaping @Sendable () -> Void) {
    guard claim(work) else { return }
    if let queue {
      queue.async { [self] in drain() }
    } else {
      drain()
    }
  }

  /// Runs `work` after everything sent before it, on the calling thread when nothing else is
  /// running (the caller holds no lock the work takes): an app's reading run loop, or a source's
  /// thread (in `locationd`, the source pool's fan-out to every app's hub). With a queue, the
  /// calling thread runs `work` alone (``isAppThread`` while it does) and hands whatever was sent
  /// behind it to the queue: it runs no hub work but the fix it read, and the step's slow effects
  /// (the store, the sources) go to the queue too, so that the next hub of the fan-out, or the
  /// app's next event, does not wait for them.
  package func runHere(_ work: @escaping @Sendable () -> Void) {
    guard claim(work) else { return }
    guard let queue else {
      drain()
      return
    }
    // Nobody was draining: `work` is the only work pending.
    let first = pending.withLock { $0.work.removeFirst() }
    let previous = inlineThread.exchange(UInt(pthread_self()), ordering: .relaxed)
    first()
    inlineThread.store(previous, ordering: .relaxed)
    let more = pending.withLock { pending -> Bool in
      if pending.work.isEmpty { pending.draining = false }
      return !pending.work.isEmpty
    }
    if more { queue.async { [self] in drain() } }
  }

  /// Whether the calling thread runs a live hub's work as a caller's thread: ``runHere(_:)``'s
  /// work inline (a source's thread, an app's reading run loop), or an app's reading run loop
  /// (`RunLoopReadingDeliveries.isCollecting`). Only a step's deliveries and timers run there.
  package var isAppThread: Bool {
    queue != nil
      && (RunLoopReadingDeliveries.isCollecting
        || inlineThread.load(ordering: .relaxed) == UInt(pthread_self()))
  }

  /// Queues the work; true when the caller must drain (nobody is).
  private func claim(_ work: @escaping @Sendable () -> Void) -> Bool {
    pending.withLock { pending -> Bool in
      pending.work.append(work)
      if pending.draining { return false }
      pending.draining = true
      return true
    }
  }

  private func drain() {
    while let next = pending.withLock({ pending -> (@Sendable () -> Void)? in
      if pending.work.isEmpty {
        pending.draining = false
        return nil
      }
      return pending.work.removeFirst()
    }) {
      next()
    }
  }
}

/// The deliveries a reading run loop runs itself after it has read (`RunLoopReadingDeliveries`,
/// from `LocationSources`), as the API layer sees them through this one.
package typealias ReadingDeliveries = RunLoopReadingDeliveries
