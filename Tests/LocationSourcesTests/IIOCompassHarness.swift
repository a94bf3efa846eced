import Foundation
import Testing

@testable import LocationSources

/// The real iio-sensor-proxy on a private bus, started by the test (shared/RECIPES.md, "Compass
/// (iio-sensor-proxy)"): a permissive system-type `dbus-daemon`, then
/// `umockdev-run -d powerbtn.umockdev -- env FAKE_COMPASS=1 iio-sensor-proxy -v`, whose fake
/// compass (an input device named "Power Button") turns 10° every 2 s while claimed. The daemon's
/// debug log (`G_MESSAGES_DEBUG=all`, on its stdout) goes to `logPath`. Everything is stopped by
/// pid in `stop()`.
final class IIOCompassHarness {
  /// Why the harness cannot run here (a component is missing): a skip.
  struct Unavailable: Error, CustomStringConvertible {
    var description: String
  }

  /// A component that is there but misbehaved: a failure.
  struct Failure: Error, CustomStringConvertible {
    var description: String
  }

  static let dbusDaemon = "/usr/bin/dbus-daemon"
  static let umockdevRun = "/usr/bin/umockdev-run"
  static let sensorProxy = "/usr/sbin/iio-sensor-proxy"
  static let env = "/usr/bin/env"

  /// Whether the tests run under CI (where a missing component fails instead of skipping).
  static let isCI = ProcessInfo.processInfo.environment["CI"] == "true"

  /// The temporary directory.
  let directory: String
  /// The private bus's address.
  private(set) var busAddress = ""
  /// The daemon's debug log.
  var logPath: String { directory + "/iio-sensor-proxy.log" }
  private var processes: [GeoClueChildProcess] = []
  private var daemon: GeoClueChildProcess?

  private init(directory: String) {
    self.directory = directory
  }

  /// Skips the current test (or fails it under `CI=true`) when `error` says a component is missing.
  static func skipOrFail(_ error: any Error) throws {
    if let unavailable = error as? Unavailable {
      if isCI {
        Issue.record("iio-sensor-proxy test components unavailable under CI: \(unavailable)")
        return
      }
      try Test.cancel("skipped: \(unavailable.description)")
    }
    throw error
  }

  /// The fake sensor iio-sensor-proxy makes of the "Power Button" device (its environment switch).
  enum FakeSensor: String {
    /// `FAKE_COMPASS=1`: a compass (`HasCompass` true).
    case compass = "FAKE_COMPASS"
    /// `FAKE_LIGHT_SENSOR=1`: an ambient light sensor only (`HasCompass` false).
    case light = "FAKE_LIGHT_SENSOR"
  }

  /// Starts the bus and, when `withDaemon`, iio-sensor-proxy with the fake `sensor`; waits
  /// (bounded) until the daemon owns its name.
  /// - Throws: `Unavailable` when a component is missing; other errors when one fails to start.
  static func start(withDaemon: Bool = true, sensor: FakeSensor = .compass) throws
    -> IIOCompassHarness
  {
    var needed = [dbusDaemon]
    if withDaemon { needed += [umockdevRun, sensorProxy, env] }
    for path in needed where !FileManager.default.isExecutableFile(atPath: path) {
      throw Unavailable(
        description: "\(path) is missing (Debian: apt-get install dbus iio-sensor-proxy umockdev)")
    }
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("iio-compass-test-\(UUID().uuidString.prefix(8))").path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let harness = IIOCompassHarness(directory: directory)
    do {
      try harness.startBus()
      if withDaemon { try harness.startDaemon(sensor: sensor) }
    } catch {
      harness.stop()
      throw error
    }
    return harness
  }

  /// A fixture file of `Tests/Fixtures/iio`, with `@DIR@` replaced.
  private func fixture(_ name: String) throws -> String {
    let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent("Fixtures/iio/\(name)")
    return try String(contentsOf: url, encoding: .utf8)
      .replacingOccurrences(of: "@DIR@", with: directory)
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
    guard let line = Self.readLine(pipeFDs[0], timeout: 5), line.hasPrefix("unix:") else {
      let errors = (try? String(contentsOfFile: directory + "/dbus.err", encoding: .utf8)) ?? ""
      throw Failure(
        description: "dbus-daemon did not print its address "
          + "(exit \(process.exitCode.map(String.init) ?? "-")): \(errors)")
    }
    busAddress = line
  }

  /// Starts iio-sensor-proxy under umockdev with the fake `sensor` and waits for its name.
  func startDaemon(sensor: FakeSensor = .compass) throws {
    let device = directory + "/powerbtn.umockdev"
    try fixture("powerbtn.umockdev").write(toFile: device, atomically: true, encoding: .utf8)
    let log = open(logPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
    guard log >= 0 else { throw Failure(description: "cannot create \(logPath)") }
    defer { close(log) }
    let errors = directory + "/iio-sensor-proxy.err"
    let process = try launch(
      "iio-sensor-proxy", Self.umockdevRun,
      [
        "-d", device, "--", Self.env, "\(sensor.rawValue)=1", "G_MESSAGES_DEBUG=all",
        Self.sensorProxy, "-v",
      ], stdoutFD: log, stderrFile: errors)
    daemon = process
    try waitForName(IIOCompassClient.service, process: process, errors: errors, timeout: 10)
  }

  /// Stops iio-sensor-proxy (SIGTERM to umockdev-run, which passes it on) and waits for it.
  func stopDaemon() {
    daemon?.stop()
    daemon = nil
  }

  /// The daemon's debug log so far.
  func log() -> String {
    (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
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
        throw Failure(
          description: "iio-sensor-proxy exited (\(process.exitCode ?? -1)): \(text) \(log())")
      }
      let remaining = deadline.timeIntervalSinceNow
      guard remaining > 0 else {
        throw Failure(description: "\(name) did not appear on the bus within \(timeout) s")
      }
      _ = try SDBus.wait(bus, timeout: UInt64(min(remaining, 0.2) * 1_000_000))
      while try SDBus.process(bus) {}
    }
  }

  /// Stops every process (SIGTERM, then SIGKILL after 2 s) and removes the directory.
  func stop() {
    for process in processes.reversed() { process.stop() }
    processes.removeAll()
    daemon = nil
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
