import Foundation
import TestSupport
import Testing

@testable import LocationSources

/// NetworkManager mocked on a private bus, started by the test: a permissive system-type
/// `dbus-daemon` (the iio fixtures' `bus.conf.in`), then `python3 -m dbusmock --template
/// networkmanager`, which owns `org.freedesktop.NetworkManager` with the manager object
/// (`GetDevices`), and `org.freedesktop.DBus.Mock` methods on `/org/freedesktop`
/// (`AddWiFiDevice`, `AddAccessPoint`, `RemoveAccessPoint`, ...). Its log goes to `logPath`.
/// Everything is stopped by pid in `stop()`.
///
/// The template's Wi-Fi device has `GetAllAccessPoints` and a `RequestScan` that does nothing,
/// but no `LastScan`; its access points all have `LastSeen` 1; and its methods take integer
/// types (`u`, `y`, `i`) this package's D-Bus layer does not write. So `start` adds methods to
/// `/org/freedesktop` (through `org.freedesktop.DBus.Mock.AddMethod`, interface
/// `testInterface`) that take only strings: `AddWifi(name, interface)` (the template's device,
/// plus `LastScan`), `AddEthernet(name, interface)`, `AddAP(device, name, ssid, bssid,
/// frequency, strength)`, `RemoveAP(device, path)`, `RemoveDevice(path)` (the template cannot
/// remove a device) and `SetProperty(path, interface, name, type, value)` (`type` one of
/// `y i x u`; one `PropertiesChanged`).
final class NetworkManagerMockHarness: PrivateBusHarness {
  /// Debian's Python, which has dbusmock.
  static let python3 = "/usr/bin/python3"
  /// The template, to tell whether python3-dbusmock is installed.
  static let template = "/usr/lib/python3/dist-packages/dbusmock/templates/networkmanager.py"
  /// dbusmock's own interface on every mock object (`AddMethod`, ...).
  static let mockInterface = "org.freedesktop.DBus.Mock"
  /// The template's main object, where its `org.freedesktop.DBus.Mock` methods are.
  static let mainPath = "/org/freedesktop"
  /// The interface of the helper methods added to `mainPath`.
  static let testInterface = "org.freedesktop.NetworkManager.CoreLocationTest"

  /// The mock's log (its method calls).
  var logPath: String { directory + "/dbusmock.log" }
  private var mock: GeoClueChildProcess?
  /// The test's own connection to the private bus (used from the test's thread only).
  private var connection: DBusConnection?

  /// A harness in `directory` (created by `start`).
  private override init(directory: String) {
    super.init(directory: directory)
  }

  /// Starts the bus and, when `withMock`, the NetworkManager mock; waits (bounded) until it owns
  /// `org.freedesktop.NetworkManager`.
  /// - Throws: `Unavailable` when a component is missing; other errors when one fails to start.
  static func start(withMock: Bool = true) throws -> NetworkManagerMockHarness {
    for path in [dbusDaemon] + (withMock ? [python3] : [])
    where !FileManager.default.isExecutableFile(atPath: path) {
      throw Unavailable(description: "\(path) is missing (Debian: apt-get install dbus python3)")
    }
    if withMock, !FileManager.default.fileExists(atPath: template) {
      throw Unavailable(
        description: "\(template) is missing (Debian: apt-get install python3-dbusmock)")
    }
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("nm-test-\(UUID().uuidString.prefix(8))").path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let harness = NetworkManagerMockHarness(directory: directory)
    do {
      let config = try String(contentsOfFile: Paths.fixture("iio", "bus.conf.in"), encoding: .utf8)
        .replacingOccurrences(of: "@DIR@", with: directory)
      try harness.startBus(config: config)
      if withMock { try harness.startMock() }
    } catch {
      harness.stop()
      throw error
    }
    return harness
  }

  /// Starts dbusmock with the networkmanager template (no device), waits for its name and adds
  /// the helper methods.
  func startMock() throws {
    let errors = directory + "/dbusmock.err"
    let process = try launch(
      "dbusmock", Self.python3,
      ["-m", "dbusmock", "--template", "networkmanager", "-l", logPath], stderrFile: errors)
    mock = process
    try waitForName(NetworkManagerClient.service, process: process, timeout: 60) {
      let text = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
      return Failure(description: "dbusmock exited (\(process.exitCode ?? -1)): \(text)")
    }
    connection?.close()
    connection = try DBusConnection(address: busAddress)
    try addMethod("AddWifi", "ss", "s", Self.addWifi)
    try addMethod("AddOldWifi", "ss", "s", "ret = self.AddWiFiDevice(args[0], args[1], 100)")
    try addMethod("AddEthernet", "ss", "s", "ret = self.AddEthernetDevice(args[0], args[1], 100)")
    try addMethod("AddAP", "ssssss", "s", Self.addAccessPoint)
    try addMethod("RemoveAP", "ss", "", "self.RemoveAccessPoint(args[0], args[1])")
    try addMethod("SetProperty", "sssss", "", Self.setProperty)
    try addMethod("RemoveDevice", "s", "", Self.removeDevice)
  }

  /// `AddWifi(s name, s interface) -> s path`: the template's Wi-Fi device (activated), with a
  /// `LastScan` of 1000 ms.
  private static let addWifi = """
    ret = self.AddWiFiDevice(args[0], args[1], 100)
    objects[ret].AddProperty(
        'org.freedesktop.NetworkManager.Device.Wireless', 'LastScan', dbus.Int64(1000))
    """

  /// `AddAP(s device, s name, s ssid, s bssid, s frequency, s strength) -> s path`: an
  /// infrastructure access point without security.
  private static let addAccessPoint = """
    ret = self.AddAccessPoint(
        args[0], args[1], args[2], args[3], 2, int(args[4]), 54000, int(args[5]), 0)
    """

  /// `RemoveDevice(s path)`: the device leaves the manager's `Devices`, with `DeviceRemoved`,
  /// and its object goes.
  private static let removeDevice = """
    manager = objects['/org/freedesktop/NetworkManager']
    devices = manager.Get('org.freedesktop.NetworkManager', 'Devices')
    devices.remove(args[0])
    manager.Set('org.freedesktop.NetworkManager', 'Devices', devices)
    manager.EmitSignal('org.freedesktop.NetworkManager', 'DeviceRemoved', 'o', [
        dbus.ObjectPath(args[0])])
    self.object_manager_emit_removed(args[0])
    self.RemoveObject(args[0])
    """

  /// `SetProperty(s path, s interface, s name, s type, s value)`: sets the property and emits
  /// `org.freedesktop.DBus.Properties.PropertiesChanged` with it.
  private static let setProperty = """
    kinds = {'y': dbus.Byte, 'i': dbus.Int32, 'x': dbus.Int64, 'u': dbus.UInt32}
    value = kinds[args[3]](int(args[4]), variant_level=1)
    target = objects[args[0]]
    target.props[args[1]][args[2]] = value
    target.EmitSignal('org.freedesktop.DBus.Properties', 'PropertiesChanged', 'sa{sv}as', [
        args[1], dbus.Dictionary({args[2]: value}, signature='sv'),
        dbus.Array([], signature='s')])
    """

  /// `org.freedesktop.DBus.Mock.AddMethod` on `mainPath`, interface `testInterface`.
  private func addMethod(_ name: String, _ input: String, _ output: String, _ code: String) throws {
    guard let connection else { throw Failure(description: "the mock is not running") }
    _ = try connection.call(
      destination: NetworkManagerClient.service, path: Self.mainPath,
      interface: Self.mockInterface, member: "AddMethod"
    ) { message throws(DBusError) in
      for text in [Self.testInterface, name, input, output, code] {
        try SDBus.appendString(message, "s", text)
      }
    }
  }

  /// Calls a helper method with string arguments; returns the string answer, if any.
  @discardableResult
  func mockCall(_ member: String, _ strings: String...) throws -> String? {
    guard let connection else { throw Failure(description: "the mock is not running") }
    let reply = try connection.call(
      destination: NetworkManagerClient.service, path: Self.mainPath,
      interface: Self.testInterface, member: member
    ) { message throws(DBusError) in
      for text in strings { try SDBus.appendString(message, "s", text) }
    }
    guard try SDBus.peekType(reply) != nil else { return nil }
    return try SDBus.readString(reply, "s")
  }

  /// Adds a Wi-Fi device (`/org/freedesktop/NetworkManager/Devices/<name>`) with the interface
  /// name `interface`; returns its path.
  @discardableResult
  func addWifiDevice(_ name: String, interface: String) throws -> String {
    try mockCall("AddWifi", name, interface) ?? ""
  }

  /// Adds a Wi-Fi device without `LastScan` (NetworkManager before 1.12); returns its path.
  func addOldWifiDevice(_ name: String, interface: String) throws -> String {
    try mockCall("AddOldWifi", name, interface) ?? ""
  }

  /// Adds an Ethernet device; returns its path.
  @discardableResult
  func addEthernetDevice(_ name: String, interface: String) throws -> String {
    try mockCall("AddEthernet", name, interface) ?? ""
  }

  /// Adds an access point to the device at `device` (`AccessPointAdded`); returns its path.
  @discardableResult
  func addAccessPoint(
    device: String, name: String, ssid: String, bssid: String, frequency: Int, strength: Int
  ) throws -> String {
    try mockCall("AddAP", device, name, ssid, bssid, String(frequency), String(strength)) ?? ""
  }

  /// Removes an access point from the device at `device` (`AccessPointRemoved`).
  func removeAccessPoint(device: String, path: String) throws {
    try mockCall("RemoveAP", device, path)
  }

  /// Removes a device (`DeviceRemoved`).
  func removeDevice(_ path: String) throws {
    try mockCall("RemoveDevice", path)
  }

  /// Sets an access point's `Strength` (percent), with `PropertiesChanged`.
  func setStrength(_ accessPoint: String, _ percent: Int) throws {
    try mockCall(
      "SetProperty", accessPoint, NetworkManagerClient.accessPointInterface, "Strength", "y",
      String(percent))
  }

  /// Sets an access point's `LastSeen` (CLOCK_BOOTTIME seconds), with `PropertiesChanged`.
  func setLastSeen(_ accessPoint: String, _ seconds: Int) throws {
    try mockCall(
      "SetProperty", accessPoint, NetworkManagerClient.accessPointInterface, "LastSeen", "i",
      String(seconds))
  }

  /// Sets a Wi-Fi device's `LastScan` (CLOCK_BOOTTIME milliseconds), with `PropertiesChanged`:
  /// a scan completed.
  func setLastScan(_ device: String, _ milliseconds: Int) throws {
    try mockCall(
      "SetProperty", device, NetworkManagerClient.wirelessInterface, "LastScan", "x",
      String(milliseconds))
  }

  /// Stops the mock (SIGTERM) and waits for it: NetworkManager leaves the bus.
  func stopMock() {
    mock?.stop()
    mock = nil
  }

  /// The mock's log so far.
  func log() -> String {
    (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
  }

  /// How many times the mock was asked for a scan.
  var scanRequests: Int {
    log().split(separator: "\n").filter { $0.contains("RequestScan") }.count
  }

  /// Closes the test's connection, stops every process (SIGTERM, then SIGKILL after 2 s) and
  /// removes the directory.
  func stop() {
    connection?.close()
    connection = nil
    stopAll()
    mock = nil
  }
}
