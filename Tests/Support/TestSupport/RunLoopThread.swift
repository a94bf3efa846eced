import Foundation

/// Runs the calling thread's run loop until `done()` is true: a timer keeps the run loop running
/// (one with nothing in it returns at once) and wakes it every 50 ms to ask.
package func runCurrentRunLoop(until done: () -> Bool) {
  let keepAlive = Timer(timeInterval: 0.05, repeats: true) { _ in }
  RunLoop.current.add(keepAlive, forMode: .default)
  while !done() {
    _ = RunLoop.current.run(mode: .default, before: Date(timeIntervalSinceNow: 0.05))
  }
  keepAlive.invalidate()
}
