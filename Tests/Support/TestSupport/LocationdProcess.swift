import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// The built `locationd` as a child process, stopped by pid. Its standard error is read on a thread
/// of its own (the daemon never blocks on a full pipe) and kept line by line: readiness is the
/// line `listening on PATH`, waited for with a deadline, never a fixed wait.
package final class LocationdProcess: @unchecked Sendable {
  // @unchecked Sendable: `process` is replaced only by `restart()`, called by the test that owns
  // this object; the log is behind an NSCondition.

  /// The daemon's arguments.
  package let arguments: [String]
  private let program: String?
  private let environment: [String: String]?
  private let directory: String?
  private let waitsForListening: Bool
  private var process = Process()
  private let condition = NSCondition()
  private var lines: [String] = []
  private var ended = false
  /// Which start the log belongs to: the reader of an earlier run (a killed daemon whose end of
  /// file arrives after a restart) must not end the new run's log.
  private var logGeneration = 0

  /// Starts `locationd` with `arguments`.
  /// - Parameters:
  ///   - environment: the daemon's environment; nil: the test's own.
  ///   - directory: a private directory removed by `stop(_:)` once the daemon has ended.
  ///   - waitForListening: whether to return only once it logs `listening on` (30 s at most).
  ///   - program: the `locationd` to run (an installed one); nil: the built one.
  /// - Throws: when `locationd` is not built, or does not start listening in time.
  package init(
    _ arguments: [String], environment: [String: String]? = nil, directory: String? = nil,
    waitForListening: Bool = true, program: String? = nil
  ) throws {
    self.arguments = arguments
    self.program = program
    self.environment = environment
    self.directory = directory
    waitsForListening = waitForListening
    try start()
  }

  deinit {
    if process.isRunning {
      Glibc.kill(process.processIdentifier, SIGKILL)
      process.waitUntilExit()
    }
  }

  private func start() throws {
    guard let binary = program ?? BuiltPrograms.locationd else {
      throw TestFailure(BuiltPrograms.missingMessage("locationd"))
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: binary)
    process.arguments = arguments
    if let environment { process.environment = environment }
    let errors = Pipe()
    process.standardError = errors
    process.standardOutput = FileHandle.nullDevice
    process.standardInput = FileHandle.nullDevice
    let generation = condition.withLock { () -> Int in
      lines = []
      ended = false
      logGeneration += 1
      return logGeneration
    }
    try runWithEmptySignalMask(process)
    self.process = process
    let handle = errors.fileHandleForReading
    Thread { [self] in readLog(handle, generation: generation) }.start()
    if waitsForListening { _ = try waitForLog("listening on") }
  }

  /// Reads standard error to its end, a line at a time, waking whoever waits for a line.
  private func readLog(_ handle: FileHandle, generation: Int) {
    var pending: [UInt8] = []
    while true {
      let data = handle.availableData
      condition.withLock {
        // A restart began another log: this run's last bytes and end belong to no one.
        guard generation == logGeneration else { return }
        if data.isEmpty {
          if !pending.isEmpty { lines.append(String(decoding: pending, as: UTF8.self)) }
          ended = true
        } else {
          pending.append(contentsOf: data)
          while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
            lines.append(String(decoding: pending[..<newline], as: UTF8.self))
            pending.removeSubrange(...newline)
          }
        }
        condition.broadcast()
      }
      if data.isEmpty { return }
    }
  }

  /// The pid of the running (or last) daemon.
  package var pid: Int32 { process.processIdentifier }

  /// Whether the daemon still runs.
  package var isRunning: Bool { process.isRunning }

  /// Every line of its standard error read so far.
  package var log: [String] { condition.withLock { lines } }

  /// The first line of its standard error that contains `text`, waiting for it (with a deadline).
  /// - Throws: when the log ends, or the deadline passes, before such a line.
  @discardableResult
  package func waitForLog(_ text: String, timeout: Double = 30) throws -> String {
    let deadline = Date(timeIntervalSinceNow: timeout)
    return try condition.withLock {
      while true {
        if let line = lines.first(where: { $0.contains(text) }) { return line }
        if ended { throw TestFailure("locationd's log ended before \"\(text)\"; log: \(lines)") }
        if !condition.wait(until: deadline) {
          throw TestFailure("no \"\(text)\" in locationd's log in time; log: \(lines)")
        }
      }
    }
  }

  /// Waits for the daemon to exit on its own; returns its status.
  package func waitForExit() -> Int32 {
    process.waitUntilExit()
    return process.terminationStatus
  }

  /// Sends `signal` (if it still runs) and waits for the daemon to exit: 30 s at most, then
  /// SIGKILL. Returns its status (the signal number when a signal ended it).
  @discardableResult
  package func kill(_ signal: Int32) -> Int32 {
    stopChild(process, signal: signal, grace: 30)
  }

  /// `kill(_:)`, then removes the private directory, if one was given. Safe to call more than
  /// once.
  @discardableResult
  package func stop(_ signal: Int32 = SIGTERM) -> Int32 {
    let status = kill(signal)
    if let directory { try? FileManager.default.removeItem(atPath: directory) }
    return status
  }

  /// Starts the daemon again with the same arguments (after `kill(_:)`).
  package func restart() throws { try start() }
}

extension LocationdProcess {
  /// A private directory under the temporary directory (short: a socket path must fit 108
  /// bytes), with an empty configuration file `conf`.
  package static func makeDirectory() throws -> String {
    let directory = NSTemporaryDirectory() + "lde-" + String(UUID().uuidString.prefix(8))
    try FileManager.default.createDirectory(
      atPath: directory, withIntermediateDirectories: true,
      attributes: [.posixPermissions: 0o755])
    _ = FileManager.default.createFile(atPath: directory + "/conf", contents: Data())
    return directory
  }

  /// The socket of a private directory.
  package static func socket(_ directory: String) -> String { directory + "/run/locationd/socket" }

  /// The store of a private directory.
  package static func store(_ directory: String) -> String { directory + "/store.sqlite" }

  /// Writes a static position into a private directory (GeoClue's format: latitude, longitude,
  /// altitude, accuracy, a line each) and returns its `static://` source.
  package static func staticSource(in directory: String, _ position: String) throws -> String {
    let path = directory + "/geolocation"
    try position.write(toFile: path, atomically: true, encoding: .utf8)
    return "static://" + path
  }

  /// The daemon's arguments for a private directory: its socket, store and configuration file
  /// (`config`, else the directory's `conf`), the sources, the policy (none: the daemon's default)
  /// and `--system`.
  package static func arguments(
    _ directory: String, sources: [String], policy: String? = "grant", system: Bool = false,
    config: String? = nil
  ) -> [String] {
    var arguments = [
      "--foreground", "--socket", socket(directory), "--store", store(directory), "--config",
      config ?? directory + "/conf",
    ]
    if let policy { arguments += ["--policy", policy] }
    for source in sources { arguments += ["--source", source] }
    if system { arguments.append("--system") }
    return arguments
  }
}
