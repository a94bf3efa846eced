import Foundation
import TestSupport
import Testing

@testable import LocationSources

/// Real GeoClue 2 on a private bus, started by the test (CONTRIBUTING.md, "Real components": "GeoClue2 on a private
/// bus"): a permissive system-type `dbus-daemon`, an NMEA server on a Unix socket playing a real
/// capture, `geoclue` in a private mount namespace with the test's configuration bind-mounted on
/// `/etc/geoclue/geoclue.conf`, and the demo agent. Everything is stopped by pid in `stop()`.
final class GeoClueHarness: PrivateBusHarness {
  /// The desktop id the configuration allows (`allowed=true`, `system=true`).
  static let allowedId = "corelocation-geoclue-test"
  /// The desktop id the configuration refuses (`allowed=false`).
  static let deniedId = "corelocation-geoclue-denied"
  /// The capture played into GeoClue: a GlobalSat BU-353-S4 in Hamilton, New Zealand.
  static let capture = "bu353s4.log"
  /// The capture's first position (its first GGA), degrees.
  static let capturePosition = (latitude: -37.784_788, longitude: 175.314_897)

  static let geoclue = "/usr/libexec/geoclue"
  static let agent = "/usr/libexec/geoclue-2.0/demos/agent"
  static let unshare = "/usr/bin/unshare"

  private var geoclue: GeoClueChildProcess?
  private var agent: GeoClueChildProcess?
  /// The NMEA server GeoClue reads (nil without GeoClue).
  private(set) var nmeaServer: GeoClueNMEAServer?

  private let withAgent: Bool

  private init(directory: String, withAgent: Bool) {
    self.withAgent = withAgent
    super.init(directory: directory)
  }

  /// Starts the bus and, when `withGeoClue`, the NMEA server, GeoClue and (when `withAgent`) the
  /// demo agent; waits (bounded) until GeoClue owns its name.
  /// - Throws: `Unavailable` when a component is missing or not permitted; other errors when a
  ///   component fails to start.
  static func start(withGeoClue: Bool = true, withAgent: Bool = true) throws -> GeoClueHarness {
    var needed = [dbusDaemon]
    if withGeoClue { needed += [geoclue, agent, unshare] }
    for path in needed where !FileManager.default.isExecutableFile(atPath: path) {
      throw Unavailable(
        description: "\(path) is missing (Debian: apt-get install dbus geoclue-2.0 geoclue-2-demo)")
    }
    if withGeoClue {
      let probe = try run(unshare, ["-m", "true"])
      guard probe == 0 else {
        throw Unavailable(
          description: "unshare -m is not permitted here (exit \(probe)); GeoClue needs a private "
            + "mount namespace for its configuration")
      }
    }
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("geoclue-test-\(UUID().uuidString.prefix(8))").path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let harness = GeoClueHarness(directory: directory, withAgent: withAgent)
    do {
      try harness.startBus(config: harness.fixture("bus.conf.in"))
      if withGeoClue {
        harness.nmeaServer = try GeoClueNMEAServer(
          path: directory + "/nmea.sock", lines: try captureLines())
        try harness.startGeoClue()
      }
    } catch {
      harness.stop()
      throw error
    }
    return harness
  }

  /// The GGA and RMC sentences of the capture (GeoClue reads nothing else).
  static func captureLines() throws -> [String] {
    let text = try String(contentsOfFile: Paths.fixture("gpsd-regress", capture), encoding: .utf8)
    return text.split(whereSeparator: \.isNewline).map(String.init).filter {
      $0.hasPrefix("$GPGGA") || $0.hasPrefix("$GPRMC")
    }
  }

  /// A fixture template with its placeholders replaced.
  func fixture(_ name: String) throws -> String {
    return try String(contentsOfFile: Paths.fixture("geoclue", name), encoding: .utf8)
      .replacingOccurrences(of: "@DIR@", with: directory)
      .replacingOccurrences(of: "@ALLOWED_ID@", with: Self.allowedId)
      .replacingOccurrences(of: "@DENIED_ID@", with: Self.deniedId)
  }

  private func startGeoClue() throws {
    let config = directory + "/geoclue.conf"
    try fixture("geoclue.conf.in").write(toFile: config, atomically: true, encoding: .utf8)
    let errors = directory + "/geoclue.err"
    geoclue = try launch(
      "geoclue", Self.unshare,
      [
        "-m", "sh", "-c",
        "mount --bind '\(config)' /etc/geoclue/geoclue.conf && exec \(Self.geoclue) -t 0",
      ], stderrFile: errors)
    guard let geoclue else { return }
    try waitForName(GeoClueClient.service, process: geoclue, timeout: 60) {
      let text = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
      if text.contains("mount") {
        return Unavailable(description: "cannot bind-mount GeoClue's configuration: \(text)")
      }
      return Failure(description: "geoclue exited (\(geoclue.exitCode ?? -1)): \(text)")
    }
    if withAgent, agent == nil {
      agent = try launch("agent", Self.agent, [], stderrFile: directory + "/agent.err")
    }
  }

  /// How long a test's source waits for a GeoClue call, in microseconds: GeoClue 2.6 holds
  /// `GetClient` until an agent has registered for the caller's user, and the agent is a process
  /// of its own that the harness starts without waiting for it to register (after a restart, it
  /// registers again when it sees GeoClue's name come back). On a loaded 2-core machine that can
  /// take longer than the 5 s a source waits by default.
  static let agentWait: UInt64 = 60_000_000

  /// Stops GeoClue (SIGTERM) and waits for it to exit, as when the service crashes or restarts.
  func stopGeoClue() {
    geoclue?.stop()
  }

  /// Starts GeoClue again after `stopGeoClue()` and waits until it owns its name.
  func restartGeoClue() throws {
    try startGeoClue()
  }

  /// Stops every process (SIGTERM, then SIGKILL after 2 s), the NMEA server, and removes the
  /// directory.
  func stop() {
    nmeaServer?.stop()
    nmeaServer = nil
    stopAll()
  }

  /// Runs a program to its end (at most 5 s) and returns its exit code.
  private static func run(_ path: String, _ arguments: [String]) throws -> Int32 {
    let process = try GeoClueChildProcess(
      name: path, path: path, arguments: arguments, environment: [:])
    guard let code = process.waitForExit(timeout: 30) else {
      process.stop()
      return -1
    }
    return code
  }

}
