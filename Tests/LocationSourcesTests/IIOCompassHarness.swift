import Foundation
import TestSupport
import Testing

@testable import LocationSources

/// The real iio-sensor-proxy on a private bus, started by the test (CONTRIBUTING.md, "Real components": "Compass
/// (iio-sensor-proxy)"): a permissive system-type `dbus-daemon`, then
/// `umockdev-run -d powerbtn.umockdev -- env FAKE_COMPASS=1 iio-sensor-proxy -v`, whose fake
/// compass (an input device named "Power Button") turns 10° every 2 s while claimed. The daemon's
/// debug log (`G_MESSAGES_DEBUG=all`, on its stdout) goes to `logPath`. Everything is stopped by
/// pid in `stop()`.
final class IIOCompassHarness: PrivateBusHarness {
  static let umockdevRun = "/usr/bin/umockdev-run"
  static let sensorProxy = "/usr/sbin/iio-sensor-proxy"
  static let env = "/usr/bin/env"

  /// The daemon's debug log.
  var logPath: String { directory + "/iio-sensor-proxy.log" }
  private var daemon: GeoClueChildProcess?

  private override init(directory: String) {
    super.init(directory: directory)
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
      try harness.startBus(config: harness.fixture("bus.conf.in"))
      if withDaemon { try harness.startDaemon(sensor: sensor) }
    } catch {
      harness.stop()
      throw error
    }
    return harness
  }

  /// A fixture file of `Tests/Fixtures/iio`, with `@DIR@` replaced.
  func fixture(_ name: String) throws -> String {
    return try String(contentsOfFile: Paths.fixture("iio", name), encoding: .utf8)
      .replacingOccurrences(of: "@DIR@", with: directory)
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
    try waitForName(IIOCompassClient.service, process: process, timeout: 60) {
      let text = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
      return Failure(
        description: "iio-sensor-proxy exited (\(process.exitCode ?? -1)): \(text) \(self.log())")
    }
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

  /// Stops every process (SIGTERM, then SIGKILL after 2 s) and removes the directory.
  func stop() {
    stopAll()
    daemon = nil
  }

}
