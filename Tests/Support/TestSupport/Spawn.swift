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
