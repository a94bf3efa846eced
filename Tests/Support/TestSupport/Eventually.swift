/// Polls `condition` until it holds or `timeout` seconds pass (bounded polling of state that real
/// processes, sockets and threads change; never a fixed wait). The deadline is generous, since CI
/// shares 2 cores with the whole suite; a condition that holds ends the wait at once. `pump` runs
/// before each check (for example queued delegate calls, or feeding a fake receiver).
/// - Returns: whether the condition held in time.
package func eventually(
  timeout: Double = 60, interval: Double = 0.005, pump: (() -> Void)? = nil,
  _ condition: () -> Bool
) async -> Bool {
  let deadline = monotonicSeconds() + timeout
  while true {
    pump?()
    if condition() { return true }
    if monotonicSeconds() > deadline { return false }
    try? await Task.sleep(for: .seconds(interval))
  }
}
