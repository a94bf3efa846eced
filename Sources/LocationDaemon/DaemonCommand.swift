import Dispatch
import Foundation
import LocationServices
import LocationSources
import LocationStore
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// `locationd`'s command line.
///
/// ```
/// locationd [--foreground] [--system] [--socket PATH] [--store PATH] [--config PATH]
///           [--source URL]... [--policy grant|deny]
/// ```
///
/// The daemon always runs in the foreground (systemd and `systemd --user` supervise it);
/// `--foreground` is accepted for scripts that pass it. Paths and the configuration file:
/// ``DaemonConfiguration``. Diagnostics go to standard error. `SIGTERM` and `SIGINT` stop it
/// cleanly: connections are closed and the socket file is removed.
///
/// Exit status:
/// - 0: stopped by `SIGTERM` or `SIGINT` (or `--help`);
/// - 1: the store could not be opened or the socket could not be set up;
/// - 2: a bad command line or configuration file;
/// - 3: another daemon is already listening on the socket.
package enum DaemonCommand {
  /// Runs the daemon with the given arguments (without the program name).
  ///
  /// - Parameter arguments: The command-line arguments.
  /// - Returns: The process's exit status.
  package static func main(arguments: [String]) -> Int32 {
    let environment = ProcessInfo.processInfo.environment
    let configuration: DaemonConfiguration
    do {
      configuration = try DaemonConfiguration.fromCommandLine(
        arguments, environment: environment)
    } catch {
      if error.isHelp {
        print(error.message)
        return 0
      }
      DaemonLog.write(error.message)
      return 2
    }
    // SIGTERM and SIGINT are blocked before the daemon makes any thread, so that every thread made later inherits the
    // block, and one thread takes them with `sigwait` (below): a signal that arrives at any moment,
    // even while the daemon starts, stays pending until it is taken; none is lost. (Dispatch
    // signal sources install their handler later, on the manager's queue: a SIGTERM that came
    // first met `SIG_IGN` and was lost, and a daemon stopped right after it started never did.)
    let stopSignals = Self.blockStopSignals()
    guard let store = openStore(configuration.storePath) else { return 1 }
    // Closed however the daemon ends its run (the signals below stop it cleanly): the log is
    // checkpointed into the database file.
    defer { store.close() }
    // SIGPIPE is never wanted (writes use MSG_NOSIGNAL; this covers anything else). A stop signal
    // that comes while the server starts stops it as soon as it has started.
    raiseDescriptorLimit()
    signal(SIGPIPE, SIG_IGN)
    let server = DaemonServer(configuration: configuration, store: store, environment: environment)
    let flags = SignalFlags()
    let waiter = Thread {
      var wanted = stopSignals
      var number: Int32 = 0
      while sigwait(&wanted, &number) != 0 {}
      DaemonLog.write("signal \(number): stopping")
      flags.stopRequested.store(true, ordering: .sequentiallyConsistent)
      if flags.started.load(ordering: .sequentiallyConsistent) { server.stop() }
    }
    waiter.name = "locationd.signals"
    waiter.start()
    do {
      try server.start()
    } catch {
      DaemonLog.write("\(error)")
      return error.errno == EADDRINUSE ? 3 : 1
    }
    flags.started.store(true, ordering: .sequentiallyConsistent)
    if flags.stopRequested.load(ordering: .sequentiallyConsistent) { server.stop() }
    server.waitUntilStopped()
    return 0
  }

  /// Blocks SIGTERM and SIGINT in the calling thread (and so in every thread it makes).
  /// - Returns: The two signals.
  static func blockStopSignals() -> sigset_t {
    var signals = sigset_t()
    sigemptyset(&signals)
    sigaddset(&signals, SIGTERM)
    sigaddset(&signals, SIGINT)
    pthread_sigmask(SIG_BLOCK, &signals, nil)
    return signals
  }
}

/// Opens the daemon's store as `LocationStore.open(path:vfs:)` does (a damaged file moved aside
/// and a new store created, SQLite's integrity check after an unclean shutdown), says what
/// happened, and sends the store's later episodes to the log, once each (README, "When the store
/// fails").
/// - Returns: The store, or nil (logged) when it cannot be opened.
func openStore(_ path: String) -> LocationStore? {
  let started = LiveClock.monotonicSeconds()
  let opening: StoreOpening
  do {
    opening = try LocationStore.open(path: path)
  } catch {
    DaemonLog.write("store \(path): \(error)")
    return nil
  }
  for notice in opening.notices { DaemonLog.write("\(notice)") }
  if opening.checkedIntegrity, opening.uncleanShutdown {
    let seconds = LiveClock.monotonicSeconds() - started
    DaemonLog.write(
      "store \(path): the last shutdown was not clean; integrity checked in "
        + "\((seconds * 1000).rounded() / 1000) s")
  }
  opening.store.setListener { DaemonLog.write("\($0)") }
  return opening.store
}

/// What the signal handlers and the main thread share.
private final class SignalFlags: Sendable {
  let started = Atomic(false)
  let stopRequested = Atomic(false)
}

/// Raises the soft limit on open descriptors to the hard limit: every connection holds one (and
/// a pidfd), and a daemon that runs out turns away everyone (`docs/security.md`, "Caps").
func raiseDescriptorLimit() {
  var limit = rlimit()
  guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max
  else { return }
  limit.rlim_cur = limit.rlim_max
  if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) != 0 {
    DaemonLog.write("the descriptor limit could not be raised: \(String(cString: strerror(errno)))")
  }
}
