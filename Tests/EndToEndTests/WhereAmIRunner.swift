import Foundation
import Synchronization

/// Runs the built `whereami` as a child process, with pipes for its output and a hard upper bound
/// on its run time (a guard against a hang, never a wait: every run ends on its own well before).
enum WhereAmIRunner {
  /// The package root (three levels above this file).
  static let root = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

  /// A file under `Tests/Fixtures/<folder>/`.
  static func fixture(_ folder: String, _ name: String) -> String {
    root.appendingPathComponent("Tests/Fixtures").appendingPathComponent(folder)
      .appendingPathComponent(name).path
  }

  /// The bundled example track.
  static let ijsselmeer = root.appendingPathComponent("Examples/tracks/ijsselmeer-2018.nmea").path

  /// Where the binary was looked for, in order: beside the test bundle (the build directory the
  /// tests run from), then `.build/debug` under the package root.
  static let candidates: [String] = {
    var directories: [URL] = []
    if let first = CommandLine.arguments.first, first.hasPrefix("/") {
      directories.append(URL(fileURLWithPath: first).deletingLastPathComponent())
    }
    directories.append(URL(fileURLWithPath: Bundle.main.bundlePath))
    directories.append(URL(fileURLWithPath: Bundle.main.bundlePath).deletingLastPathComponent())
    directories.append(root.appendingPathComponent(".build/debug"))
    return directories.map { $0.appendingPathComponent("whereami").path }
  }()

  /// The built `whereami`, if there is one.
  static let binary: String? = candidates.first { FileManager.default.isExecutableFile(atPath: $0) }

  /// Whether the tests run under CI (where a missing binary is a failure, not a skip).
  static let isCI = ProcessInfo.processInfo.environment["CI"] == "true"

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
    var description: String {
      "whereami is not built (looked in \(candidates.joined(separator: ", "))); "
        + "run `swift build --product whereami` first"
    }
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
    guard let binary else { throw NotBuilt() }
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
