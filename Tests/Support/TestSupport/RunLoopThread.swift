import Foundation

/// Runs the calling thread's run loop until `done()` is true: a timer keeps the run loop running
/// (one with nothing in it returns at once) and wakes it every `interval` (50 ms unless told) to
/// ask.
package func runCurrentRunLoop(every interval: TimeInterval = 0.05, until done: () -> Bool) {
  let keepAlive = Timer(timeInterval: interval, repeats: true) { _ in }
  RunLoop.current.add(keepAlive, forMode: .default)
  while !done() {
    _ = RunLoop.current.run(mode: .default, before: Date(timeIntervalSinceNow: interval))
  }
  keepAlive.invalidate()
}
