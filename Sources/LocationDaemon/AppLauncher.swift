import Foundation
import LocationServices

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
  static func launch(_ command: String, app: String) {
    var environment = ProcessInfo.processInfo.environment
    environment["CORELOCATION_LAUNCH_REASON"] = "location"
    let pid: pid_t
    switch ChildSpawn.spawn(
      ["/bin/sh", "-c", command], environment: environment, input: .null, newSession: true)
    {
    case .success(let child): pid = child
    case .failure(let error):
      DaemonLog.write("app \(app): launch command failed to start: \(error.message)")
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
