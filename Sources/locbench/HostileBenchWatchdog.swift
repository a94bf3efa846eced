import Foundation
import Synchronization

/// Watches the daemon while the attacker runs, on a thread of its own: every 100 ms its resident
/// memory and the store's growth; past the limit, it kills the attacker's process group (its
/// processes too) and notes why, so that an attack the caps do not bound ends before the machine
/// suffers. The row goes on without the attacker.
final class HostileBenchWatchdog: Sendable {
  private struct State {
    var stopping = false
    var tripped: String?
  }

  private let state = Mutex(State())
  private let daemon: pid_t
  private let attacker: pid_t
  private let store: String
  private let storeBefore: Int
  private let limit: Int

  /// Watches `daemon` and `store` (of `storeBefore` bytes now) against `limit` bytes, and ends the
  /// process group of `attacker` (0: none) past it.
  init(daemon: pid_t, attacker: pid_t, store: String, storeBefore: Int, limit: Int) {
    self.daemon = daemon
    self.attacker = attacker
    self.store = store
    self.storeBefore = storeBefore
    self.limit = limit
  }

  /// Store and WAL bytes of the SQLite database at `path`.
  static func storeBytes(_ path: String) -> Int {
    var total = 0
    for file in [path, path + "-wal"] {
      var info = stat()
      if stat(file, &info) == 0 { total += Int(info.st_size) }
    }
    return total
  }

  /// Starts watching.
  func start() {
    guard attacker > 0 else { return }
    let start = DaemonBenchSystem.now()
    Thread { [self] in
      while !state.withLock({ $0.stopping || $0.tripped != nil }) {
        let resident = DaemonBenchSystem.usage(of: daemon)?.residentBytes ?? 0
        let growth = Self.storeBytes(store) - storeBefore
        if resident > limit || growth > limit {
          let after = Double(DaemonBenchSystem.now() - start) / 1e9
          let what =
            resident > limit
            ? "the daemon's resident memory reached \(DaemonBenchReport.megabytes(resident)) MB"
            : "the store grew by \(DaemonBenchReport.megabytes(growth)) MB"
          // Under the lock: once `stop` has returned, the attacker (reaped then) is never signalled.
          state.withLock {
            guard !$0.stopping else { return }
            kill(-attacker, SIGKILL)
            $0.tripped =
              "\(what) after \(DaemonBenchReport.format(after, 1)) s; the guard "
              + "(\(DaemonBenchReport.megabytes(limit)) MB) ended the attacker"
          }
        }
        usleep(100_000)
      }
    }.start()
  }

  /// Stops watching; returns why the attacker was ended, if it was.
  func stop() -> String? {
    state.withLock {
      $0.stopping = true
      return $0.tripped
    }
  }
}
