/// Polls `condition` until it holds or `timeout` seconds pass (bounded polling of state that real
/// processes, sockets and threads change; never a fixed wait). The deadline is generous, since CI
/// shares 2 cores with the whole suite; a condition that holds ends the wait at once. `pump` runs
/// before each check (for example queued delegate calls, or feeding a fake receiver).
///
/// Time the wait itself could not run does not count against `timeout`: when a poll resumes much
/// later than its interval asked, Swift's shared pool of threads (two on a 2-core machine) was
/// held by other tests, and whatever this test waits for in the same process was held up with it.
/// Such a gap counts as `stallAllowance` seconds. So a test cannot fail because the rest of the
/// suite starved it; a condition that never holds still fails, after `timeout` seconds of polling
/// and at most three times `timeout` of wall-clock time.
/// - Returns: whether the condition held in time.
package func eventually(
  timeout: Double = 60, interval: Double = 0.005, pump: (() -> Void)? = nil,
  _ condition: () -> Bool
) async -> Bool {
  let start = monotonicSeconds()
  let hardDeadline = start + 3 * timeout
  let stallAllowance = max(4 * interval, 0.25)
  var counted = 0.0
  var last = start
  while true {
    pump?()
    if condition() { return true }
    let now = monotonicSeconds()
    counted += min(now - last, stallAllowance)
    last = now
    if counted > timeout || now > hardDeadline { return false }
    try? await Task.sleep(for: .seconds(interval))
  }
}
