import Foundation
import Synchronization
import TestSupport

/// Runs the built `whereami` as a child process, with pipes for its output and a hard upper bound
/// on its run time (a guard against a hang, never a wait: every run ends on its own well before).
enum WhereAmIRunner {
  /// What a run produced.
  struct Result {
    var status: Int32
    var stdout: String
    var stderr: String
    /// True when the guard had to kill the program.
    var killed: Bool

    /// Standard output split into lines (without the last, empty one).
    var lines: [String] {
      var lines = stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
      if lines.last == "" { lines.removeLast() }
      return lines
    }
  }

  /// An error starting the program.
  struct NotBuilt: Error, CustomStringConvertible {
    var description: String { BuiltPrograms.missingMessage("whereami") }
  }

  /// Collects the bytes of one pipe on a thread of its own.
  private final class Collector: Sendable {
    private let data = Mutex(Data())
    private let done = DispatchSemaphore(value: 0)

    init(_ handle: FileHandle) {
      let thread = Thread { [self] in
        let bytes = handle.readDataToEndOfFile()
        data.withLock { $0 = bytes }
        done.signal()
      }
      thread.start()
    }

    /// The bytes, once the pipe is closed.
    func wait() -> Data {
      done.wait()
      return data.withLock { $0 }
    }
  }

  /// The environment of every run: no user configuration, an in-memory store, a temporary home.
  static func environment(home: String, _ extra: [String: String]) -> [String: String] {
    var environment: [String: String] = [
      "HOME": home,
      "XDG_CONFIG_HOME": home + "/.config",
      "XDG_STATE_HOME": home + "/.local/state",
      "CORELOCATION_STORE": ":memory:",
      "CORELOCATION_APP_ID": "org.example.whereami-tests",
      // A daemon the developer runs must not serve these runs: embedded mode only.
      "CORELOCATION_DAEMON": "off",
    ]
    let inherited = ProcessInfo.processInfo.environment
    for name in ["PATH", "LD_LIBRARY_PATH"] {
      if let value = inherited[name] { environment[name] = value }
    }
    environment.merge(extra) { _, new in new }
    return environment
  }

  /// Runs `whereami` with `arguments` and the extra environment, and waits for it to exit. The
  /// program is killed if it is still running after `limit` seconds.
  static func run(
    _ arguments: [String], environment extra: [String: String] = [:], limit: Double = 60
  ) throws -> Result {
    guard let binary = BuiltPrograms.whereami else { throw NotBuilt() }
    let home = NSTemporaryDirectory() + "whereami-tests-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: home) }

    let process = Process()
    process.executableURL = URL(fileURLWithPath: binary)
    process.arguments = arguments
    process.environment = environment(home: home, extra)
    process.currentDirectoryURL = URL(fileURLWithPath: home)
    let output = Pipe()
    let errors = Pipe()
    process.standardOutput = output
    process.standardError = errors
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let stdout = Collector(output.fileHandleForReading)
    let stderr = Collector(errors.fileHandleForReading)

    let pid = process.processIdentifier
    let killed = Atomic(false)
    let finished = Atomic(false)
    let guardTimer = DispatchWorkItem {
      guard !finished.load(ordering: .sequentiallyConsistent) else { return }
      killed.store(true, ordering: .sequentiallyConsistent)
      kill(pid, SIGKILL)
    }
    DispatchQueue.global().asyncAfter(deadline: .now() + limit, execute: guardTimer)
    let outData = stdout.wait()
    let errData = stderr.wait()
    process.waitUntilExit()
    finished.store(true, ordering: .sequentiallyConsistent)
    guardTimer.cancel()
    return Result(
      status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
      stderr: String(decoding: errData, as: UTF8.self),
      killed: killed.load(ordering: .sequentiallyConsistent))
  }
}
