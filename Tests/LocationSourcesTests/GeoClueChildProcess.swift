import Foundation
import Synchronization

/// A child process started with `posix_spawn` and stopped by pid.
///
/// Not Foundation's `Process`: the threads that run tests block most signals, and a child spawned
/// from them inherits that mask, so SIGTERM would never reach it. Here the child starts with an
/// empty signal mask and default dispositions for the signals used to stop it.
final class GeoClueChildProcess: @unchecked Sendable {
  // Safe: `name` and `pid` are immutable; `status` is a Mutex; `exited` is thread-safe.
  let name: String
  let pid: pid_t
  /// The wait status once the process has exited (reaped by its own thread).
  private let status = Mutex<Int32?>(nil)
  private let exited = DispatchSemaphore(value: 0)

  struct SpawnError: Error, CustomStringConvertible {
    var description: String
  }

  /// Starts `path` with `arguments` and `environment`; stdin is /dev/null, stdout goes to the
  /// write end `stdoutFD` (or /dev/null), stderr to the file `stderrPath` (or /dev/null).
  init(
    name: String, path: String, arguments: [String], environment: [String: String],
    stdoutFD: Int32? = nil, stderrPath: String? = nil
  ) throws {
    self.name = name
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    if let stdoutFD {
      posix_spawn_file_actions_adddup2(&actions, stdoutFD, 1)
    } else {
      posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    }
    posix_spawn_file_actions_addopen(
      &actions, 2, stderrPath ?? "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o644)

    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var empty = sigset_t()
    sigemptyset(&empty)
    posix_spawnattr_setsigmask(&attributes, &empty)
    var defaults = sigset_t()
    sigemptyset(&defaults)
    for signal in [SIGTERM, SIGINT, SIGPIPE, SIGHUP] { sigaddset(&defaults, signal) }
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

    let argv = ([path] + arguments).map { strdup($0) } + [nil]
    let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer {
      for pointer in argv { free(pointer) }
      for pointer in envp { free(pointer) }
    }
    var child: pid_t = 0
    let result = posix_spawn(&child, path, &actions, &attributes, argv, envp)
    guard result == 0 else {
      throw SpawnError(description: "cannot start \(path): \(String(cString: strerror(result)))")
    }
    pid = child
    Thread { [self] in
      var status: Int32 = 0
      while waitpid(pid, &status, 0) < 0, errno == EINTR {}
      self.status.withLock { $0 = status }
      exited.signal()
    }.start()
  }

  /// Whether the process is still running.
  var isRunning: Bool { status.withLock { $0 == nil } }

  /// The exit code (or 128 + the signal), once the process has exited.
  var exitCode: Int32? {
    status.withLock { status in
      status.map { ($0 & 0x7f) == 0 ? ($0 >> 8) & 0xff : 128 + ($0 & 0x7f) }
    }
  }

  /// Waits for the process to exit on its own, at most `timeout` seconds; returns its exit code.
  func waitForExit(timeout: Double) -> Int32? {
    guard exited.wait(timeout: .now() + timeout) == .success else { return nil }
    exited.signal()
    return exitCode
  }

  /// Sends SIGTERM, waits up to `grace` seconds, then SIGKILL, and waits for the exit.
  func stop(grace: Double = 2) {
    guard isRunning else { return }
    kill(pid, SIGTERM)
    if exited.wait(timeout: .now() + grace) == .timedOut {
      kill(pid, SIGKILL)
      exited.wait()
    }
    exited.signal()  // later stop() calls return at once
  }
}
