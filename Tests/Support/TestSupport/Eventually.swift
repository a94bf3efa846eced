/// Polls `condition` until it holds or `timeout` seconds pass (bounded polling of state that real
/// processes, sockets and threads change; never a fixed wait). `pump` runs before each check (for
/// example queued delegate calls, or feeding a fake receiver).
/// - Returns: whether the condition held in time.
package func eventually(
  timeout: Double = 10, interval: Double = 0.005, pump: (() -> Void)? = nil,
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
