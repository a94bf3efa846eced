import LocationProtocol
import LocationServices
import LocationSources
import LocationStore

// The store as the daemon tends it (README, "When the store fails"): its condition for
// `locationctl status`, and the periodic checkpoint that keeps the database file alone complete
// (a backup of `store.sqlite` without its `-wal` misses nothing).
extension DaemonServer {
  /// Seconds between two checkpoints of the write-ahead log into the database file.
  static let checkpointInterval: Double = 300

  /// The store's condition and the writes the hubs hold.
  func storeStatus() -> DaemonStoreStatus {
    let hosts = shared.withLock { $0.hosts.values.map { $0 } }
    let held = hosts.reduce(0) { $0 + $1.hub.heldWrites }
    switch store.condition {
    case .healthy:
      return DaemonStoreStatus(path: store.path, state: .ok, held: held)
    case .failing(let error, let since):
      return DaemonStoreStatus(
        path: store.path, state: .failing, cause: error.message, since: since, held: held)
    case .inMemory(let error, let since):
      return DaemonStoreStatus(
        path: store.path, state: .memory, cause: error.message, since: since, held: held)
    }
  }

  /// Checkpoints the log when the interval has passed (on the I/O thread); a failure is logged
  /// once per episode and tried again at the next interval.
  func checkpointIfDue(now: Double) {
    guard now >= loop.nextCheckpoint else { return }
    let first = loop.nextCheckpoint == 0
    loop.nextCheckpoint = now + Self.checkpointInterval
    // The first interval starts with the daemon: nothing to copy yet.
    if first { return }
    do {
      try store.checkpoint()
      if loop.checkpointFailing { DaemonLog.write("store \(store.path): checkpoints work again") }
      loop.checkpointFailing = false
    } catch {
      if !loop.checkpointFailing {
        DaemonLog.write(
          "store \(store.path): the log cannot be checkpointed (\(error.message)); tried again "
            + "every \(Int(Self.checkpointInterval)) s")
      }
      loop.checkpointFailing = true
    }
  }
}
