import Foundation
import TestSupport

/// Runs the built `whereami` as a child process, with pipes for its output and a hard upper bound
/// on its run time (a guard against a hang, never a wait: every run ends on its own well before).
enum WhereAmIRunner {
  /// What a run produced.
  typealias Result = ProgramResult

  /// An error starting the program.
  struct NotBuilt: Error, CustomStringConvertible {
    var description: String { BuiltPrograms.missingMessage("whereami") }
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

  /// Runs `whereami` with `arguments` and the extra environment, and waits for it to exit, the
  /// calling task suspended while a thread of its own waits (`offThePool`: a run holds neither of
  /// the shared pool's threads). The program is killed if it is still running after `limit`
  /// seconds.
  static func run(
    _ arguments: [String], environment extra: [String: String] = [:], limit: Double = 60
  ) async throws -> Result {
    try await offThePool { try runBlocking(arguments, environment: extra, limit: limit) }
  }

  private static func runBlocking(
    _ arguments: [String], environment extra: [String: String], limit: Double
  ) throws -> Result {
    guard let binary = BuiltPrograms.whereami else { throw NotBuilt() }
    let home = NSTemporaryDirectory() + "whereami-tests-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: home) }

    return try runProgram(
      binary, arguments, environment: environment(home: home, extra), currentDirectory: home,
      limit: limit)
  }
}
