import Foundation

/// Starts a child with an empty signal mask.
///
/// A child inherits the signal mask of the thread that spawns it, and the test runner's threads
/// (dispatch and concurrency workers) block signals: without an empty mask SIGTERM would stay
/// pending in the child forever, and stopping it by pid would hang.
package func runWithEmptySignalMask(_ process: Process) throws {
  var empty = sigset_t()
  var saved = sigset_t()
  sigemptyset(&empty)
  pthread_sigmask(SIG_SETMASK, &empty, &saved)
  defer { pthread_sigmask(SIG_SETMASK, &saved, nil) }
  try process.run()
}

/// Stops a child by pid: sends `signal` if it still runs, then SIGKILL if it has not ended
/// `grace` seconds later (a guard timer, not a wait), and reaps it.
/// - Returns: its status (the signal number when a signal ended it).
@discardableResult
package func stopChild(_ process: Process, signal: Int32 = SIGTERM, grace: Double = 3) -> Int32 {
  if process.isRunning {
    let pid = process.processIdentifier
    kill(pid, signal)
    let guardTimer = DispatchWorkItem { kill(pid, SIGKILL) }
    DispatchQueue.global().asyncAfter(deadline: .now() + grace, execute: guardTimer)
    process.waitUntilExit()
    guardTimer.cancel()
  }
  process.waitUntilExit()
  return process.terminationStatus
}
