import CoreFoundation
import Foundation
import Synchronization
import TestSupport

/// A thread of its own whose run loop turns (`runCurrentRunLoop`) until `stop()`, a timer firing
/// every `interval` so that it waits and wakes (its observers' activities) that often; the run
/// loop of a reading installed by a test. Core Foundation's run loop functions may be called from any thread.
final class TurningRunLoop: @unchecked Sendable {
  // @unchecked: `runLoop` is a Core Foundation run loop, safe to use from any thread.
  let runLoop: CFRunLoop
  private let finish = Atomic(false)

  private init(runLoop: CFRunLoop) {
    self.runLoop = runLoop
  }

  /// Starts the thread and waits until its run loop turns; nil when it did not in time.
  static func start(interval: TimeInterval) async -> TurningRunLoop? {
    let shared = Mutex<TurningRunLoop?>(nil)
    Thread {
      let turning = TurningRunLoop(runLoop: CFRunLoopGetCurrent())
      shared.withLock { $0 = turning }
      runCurrentRunLoop(every: interval) { turning.finish.load(ordering: .acquiring) }
    }.start()
    guard await eventually({ shared.withLock { $0 } != nil }) else { return nil }
    return shared.withLock { $0 }
  }

  /// Ends the thread at its run loop's next turn.
  func stop() {
    finish.store(true, ordering: .releasing)
  }
}
