import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Starts an app's launch command, detached: `/bin/sh -c COMMAND` in a new session, as the
/// daemon's user, standard input from `/dev/null`, with `CORELOCATION_LAUNCH_REASON=location` in
/// its environment and no descriptor of the daemon's beyond standard output and error; the child
/// is reaped by a thread of its own, which logs how it ended.
enum AppLauncher {
  /// glibc's `POSIX_SPAWN_SETSID` (hidden behind _GNU_SOURCE in Swift's Glibc module).
  static let spawnSetSID: Int32 = 0x80

  private typealias AddCloseFrom =
    @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32

  /// `posix_spawn_file_actions_addclosefrom_np` (glibc 2.34), looked up with `dlsym`: it is a
  /// GNU extension Swift's Glibc module does not show. It closes in the child every descriptor
  /// from 3 up, including those the daemon itself inherited without close-on-exec (its own are
  /// all close-on-exec). Nil on an older C library, where only close-on-exec protects.
  private static let addCloseFrom: AddCloseFrom? = {
    guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "posix_spawn_file_actions_addclosefrom_np")
    else { return nil }
    return unsafeBitCast(symbol, to: AddCloseFrom.self)
  }()

  static func launch(_ command: String, app: String) {
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var defaults = sigset_t()
    sigemptyset(&defaults)
    for signal in [SIGTERM, SIGINT, SIGPIPE, SIGCHLD, SIGHUP] { sigaddset(&defaults, signal) }
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    var empty = sigset_t()
    sigemptyset(&empty)
    posix_spawnattr_setsigmask(&attributes, &empty)
    posix_spawnattr_setflags(
      &attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | Self.spawnSetSID))
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    if let addCloseFrom = Self.addCloseFrom { _ = addCloseFrom(&actions, 3) }

    var environment = ProcessInfo.processInfo.environment
    environment["CORELOCATION_LAUNCH_REASON"] = "location"
    let arguments = ["/bin/sh", "-c", command].map { (text: String) in strdup(text) }
    let variables = environment.map { (key, value) in strdup("\(key)=\(value)") }
    defer {
      for pointer in arguments { free(pointer) }
      for pointer in variables { free(pointer) }
    }
    var pid: pid_t = 0
    let result = (arguments + [nil]).withUnsafeBufferPointer { argv in
      (variables + [nil]).withUnsafeBufferPointer { envp -> Int32 in
        guard let argv = argv.baseAddress, let envp = envp.baseAddress else { return EINVAL }
        return posix_spawn(
          &pid, "/bin/sh", &actions, &attributes, UnsafeMutablePointer(mutating: argv),
          UnsafeMutablePointer(mutating: envp))
      }
    }
    guard result == 0 else {
      DaemonLog.write(
        "app \(app): launch command failed to start: \(String(cString: strerror(result)))")
      return
    }
    DaemonLog.write("app \(app): launched (pid \(pid)) for a region event")
    let child = pid
    Thread.detachNewThread {
      var status: Int32 = 0
      while waitpid(child, &status, 0) < 0, errno == EINTR {}
      // WIFEXITED / WEXITSTATUS / WTERMSIG (<sys/wait.h>) are macros Swift does not import.
      let signal = status & 0x7f
      DaemonLog.write(
        signal == 0
          ? "app \(app): launch command (pid \(child)) exited with status \((status >> 8) & 0xff)"
          : "app \(app): launch command (pid \(child)) ended by signal \(signal)")
    }
  }
}
