import Foundation
import Testing

@testable import LocationSources

/// Real GeoClue 2 on a private bus, started by the test (shared/RECIPES.md, "GeoClue2 on a private
/// bus"): a permissive system-type `dbus-daemon`, an NMEA server on a Unix socket playing a real
/// capture, `geoclue` in a private mount namespace with the test's configuration bind-mounted on
/// `/etc/geoclue/geoclue.conf`, and the demo agent. Everything is stopped by pid in `stop()`.
final class GeoClueHarness {
  /// Why the harness cannot run here (a component is missing or not permitted): a skip.
  struct Unavailable: Error, CustomStringConvertible {
    var description: String
  }

  /// A component that is there but misbehaved: a failure.
  struct Failure: Error, CustomStringConvertible {
    var description: String
  }

  /// The desktop id the configuration allows (`allowed=true`, `system=true`).
  static let allowedId = "corelocation-geoclue-test"
  /// The desktop id the configuration refuses (`allowed=false`).
  static let deniedId = "corelocation-geoclue-denied"
  /// The capture played into GeoClue: a GlobalSat BU-353-S4 in Hamilton, New Zealand.
  static let capture = "bu353s4.log"
  /// The capture's first position (its first GGA), degrees.
  static let capturePosition = (latitude: -37.784_788, longitude: 175.314_897)

  static let dbusDaemon = "/usr/bin/dbus-daemon"
  static let geoclue = "/usr/libexec/geoclue"
  static let agent = "/usr/libexec/geoclue-2.0/demos/agent"
  static let unshare = "/usr/bin/unshare"

  /// Whether the tests run under CI (where a missing component fails instead of skipping).
  static let isCI = ProcessInfo.processInfo.environment["CI"] == "true"

  /// The temporary directory.
  let directory: String
  /// The private bus's address.
  private(set) var busAddress = ""
  private var processes: [GeoClueChildProcess] = []
  private var geoclue: GeoClueChildProcess?
  private var agent: GeoClueChildProcess?
  /// The NMEA server GeoClue reads (nil without GeoClue).
  private(set) var nmeaServer: GeoClueNMEAServer?

  private let withAgent: Bool

  private init(directory: String, withAgent: Bool) {
    self.directory = directory
    self.withAgent = withAgent
  }

  /// Skips the current test (or fails it under `CI=true`) when `error` says a component is missing.
  static func skipOrFail(_ error: any Error) throws {
    if let unavailable = error as? Unavailable {
      if isCI {
        Issue.record("GeoClue test components unavailable under CI: \(unavailable.description)")
        return
      }
      try Test.cancel("skipped: \(unavailable.description)")
    }
    throw error
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
      try harness.startBus()
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
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .deletingLastPathComponent().deletingLastPathComponent()
    let url = root.deletingLastPathComponent()
      .appendingPathComponent("shared/testdata/gpsd-regress/\(capture)")
    let text = try String(contentsOf: url, encoding: .utf8)
    return text.split(whereSeparator: \.isNewline).map(String.init).filter {
      $0.hasPrefix("$GPGGA") || $0.hasPrefix("$GPRMC")
    }
  }

  /// A fixture template with its placeholders replaced.
  private func fixture(_ name: String) throws -> String {
    let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent("Fixtures/geoclue/\(name)")
    return try String(contentsOf: url, encoding: .utf8)
      .replacingOccurrences(of: "@DIR@", with: directory)
      .replacingOccurrences(of: "@ALLOWED_ID@", with: Self.allowedId)
      .replacingOccurrences(of: "@DENIED_ID@", with: Self.deniedId)
  }

  private func startBus() throws {
    let config = directory + "/bus.conf"
    try fixture("bus.conf.in").write(toFile: config, atomically: true, encoding: .utf8)
    var pipeFDs: [Int32] = [-1, -1]
    guard pipe(&pipeFDs) == 0 else { throw Failure(description: "pipe failed") }
    defer { close(pipeFDs[0]) }
    let process: GeoClueChildProcess
    do {
      process = try launch(
        "dbus-daemon", Self.dbusDaemon,
        ["--config-file=\(config)", "--nofork", "--nopidfile", "--print-address"],
        stdoutFD: pipeFDs[1], stderrFile: directory + "/dbus.err")
    } catch {
      close(pipeFDs[1])
      throw error
    }
    close(pipeFDs[1])
    // Ready when it prints its address (bounded wait on the pipe).
    guard let line = Self.readLine(pipeFDs[0], timeout: 5), line.hasPrefix("unix:") else {
      let errors = (try? String(contentsOfFile: directory + "/dbus.err", encoding: .utf8)) ?? ""
      throw Failure(
        description:
          "dbus-daemon did not print its address (exit \(process.exitCode.map(String.init) ?? "-")): \(errors)"
      )
    }
    busAddress = line
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
    try waitForName(GeoClueClient.service, process: geoclue, errors: errors, timeout: 10)
    if withAgent, agent == nil {
      agent = try launch("agent", Self.agent, [], stderrFile: directory + "/agent.err")
    }
  }

  /// Waits until `name` has an owner on the bus: `NameHasOwner`, then `sd_bus_wait` for the
  /// `NameOwnerChanged` signal (bounded by `timeout` seconds).
  private func waitForName(
    _ name: String, process: GeoClueChildProcess, errors: String, timeout: Double
  ) throws {
    let connection = try DBusConnection(address: busAddress)
    let bus = try connection.openBus("sd_bus_add_match")
    let slot = try SDBus.addMatch(
      bus,
      rule: "type='signal',sender='org.freedesktop.DBus',member='NameOwnerChanged',arg0='\(name)'",
      handler: { _, _, _ in 0 }, userdata: nil)
    defer { SDBus.slotUnref(slot) }
    let deadline = Date().addingTimeInterval(timeout)
    while !(try connection.nameHasOwner(name)) {
      guard process.isRunning else {
        let text = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
        if text.contains("mount") {
          throw Unavailable(description: "cannot bind-mount GeoClue's configuration: \(text)")
        }
        throw Failure(description: "geoclue exited (\(process.exitCode ?? -1)): \(text)")
      }
      let remaining = deadline.timeIntervalSinceNow
      guard remaining > 0 else {
        throw Failure(description: "\(name) did not appear on the bus within \(timeout) s")
      }
      _ = try SDBus.wait(bus, timeout: UInt64(min(remaining, 0.2) * 1_000_000))
      while try SDBus.process(bus) {}
    }
  }

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
    for process in processes.reversed() { process.stop() }
    processes.removeAll()
    nmeaServer?.stop()
    nmeaServer = nil
    try? FileManager.default.removeItem(atPath: directory)
  }

  private func launch(
    _ name: String, _ path: String, _ arguments: [String], stdoutFD: Int32? = nil,
    stderrFile: String? = nil
  ) throws -> GeoClueChildProcess {
    var environment = ProcessInfo.processInfo.environment
    if !busAddress.isEmpty { environment["DBUS_SYSTEM_BUS_ADDRESS"] = busAddress }
    let process = try GeoClueChildProcess(
      name: name, path: path, arguments: arguments, environment: environment,
      stdoutFD: stdoutFD, stderrPath: stderrFile)
    processes.append(process)
    return process
  }

  /// Runs a program to its end (at most 5 s) and returns its exit code.
  private static func run(_ path: String, _ arguments: [String]) throws -> Int32 {
    let process = try GeoClueChildProcess(
      name: path, path: path, arguments: arguments, environment: [:])
    guard let code = process.waitForExit(timeout: 5) else {
      process.stop()
      return -1
    }
    return code
  }

  /// Reads one line from `fd`, waiting at most `timeout` seconds in total.
  private static func readLine(_ fd: Int32, timeout: Double) -> String? {
    let deadline = Date().addingTimeInterval(timeout)
    var bytes: [UInt8] = []
    while true {
      let remaining = deadline.timeIntervalSinceNow
      guard remaining > 0 else { return nil }
      var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
      guard poll(&descriptor, 1, Int32(remaining * 1_000)) > 0 else { continue }
      var byte: UInt8 = 0
      let count = read(fd, &byte, 1)
      if count < 0, errno == EAGAIN || errno == EINTR { continue }
      guard count == 1 else { return nil }
      if byte == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
      bytes.append(byte)
    }
  }
}
