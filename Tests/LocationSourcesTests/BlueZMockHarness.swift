import Foundation
import TestSupport
import Testing

@testable import LocationSources

/// BlueZ mocked on a private bus, started by the test: a permissive system-type `dbus-daemon`
/// (the iio fixtures' `bus.conf.in`), then `python3 -m dbusmock --template bluez5`, which owns
/// `org.bluez` with BlueZ's object manager on `/` and `org.bluez.Mock` methods (`AddAdapter`,
/// `RemoveAdapter`, ...). Its log goes to `logPath`. Everything is stopped by pid in `stop()`.
///
/// The template's `AddDevice` makes a device with a fixed RSSI and empty manufacturer data, and
/// dbusmock's `UpdateProperties` refuses a property the object lacks, so `start` adds three
/// methods to `/` (through `org.freedesktop.DBus.Mock.AddMethod`) that take only strings:
/// `AddBeacon(adapter, address, manufacturerData, rssi)`, `UpdateBeacon(path, manufacturerData,
/// rssi)` and `RemoveBeacon(path)`; manufacturer data is written `004c=0215…,0075=aabb` (company
/// in hexadecimal, then the bytes), an RSSI in decimal (empty: none, or unchanged).
final class BlueZMockHarness: PrivateBusHarness {
  /// Debian's Python, which has dbusmock.
  static let python3 = "/usr/bin/python3"
  /// The template, to tell whether python3-dbusmock is installed.
  static let template = "/usr/lib/python3/dist-packages/dbusmock/templates/bluez5.py"
  /// dbusmock's own interface on every mock object (`AddMethod`, `UpdateProperties`, ...).
  static let mockInterface = "org.freedesktop.DBus.Mock"
  /// The bluez5 template's interface on `/` (`AddAdapter`, ...), where the helpers go too.
  static let bluezMockInterface = "org.bluez.Mock"

  /// The mock's log (its method calls).
  var logPath: String { directory + "/dbusmock.log" }
  private var mock: GeoClueChildProcess?
  /// The test's own connection to the private bus (used from the test's thread only).
  private var connection: DBusConnection?

  /// A harness in `directory` (created by `start`).
  private override init(directory: String) {
    super.init(directory: directory)
  }

  /// Starts the bus and, when `withMock`, the BlueZ mock; waits (bounded) until it owns
  /// `org.bluez`.
  /// - Throws: `Unavailable` when a component is missing; other errors when one fails to start.
  static func start(withMock: Bool = true) throws -> BlueZMockHarness {
    for path in [dbusDaemon] + (withMock ? [python3] : [])
    where !FileManager.default.isExecutableFile(atPath: path) {
      throw Unavailable(description: "\(path) is missing (Debian: apt-get install dbus python3)")
    }
    if withMock, !FileManager.default.fileExists(atPath: template) {
      throw Unavailable(
        description: "\(template) is missing (Debian: apt-get install python3-dbusmock)")
    }
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("bluez-test-\(UUID().uuidString.prefix(8))").path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let harness = BlueZMockHarness(directory: directory)
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

  /// Starts dbusmock with the bluez5 template (with no adapter), waits for `org.bluez` and adds
  /// the helper methods.
  func startMock() throws {
    let errors = directory + "/dbusmock.err"
    let process = try launch(
      "dbusmock", Self.python3, ["-m", "dbusmock", "--template", "bluez5", "-l", logPath],
      stderrFile: errors)
    mock = process
    try waitForName(BlueZClient.service, process: process, timeout: 60) {
      let text = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
      return Failure(description: "dbusmock exited (\(process.exitCode ?? -1)): \(text)")
    }
    connection?.close()
    connection = try DBusConnection(address: busAddress)
    try addMethod("AddBeacon", "ssss", "s", Self.addBeacon)
    try addMethod("UpdateBeacon", "sss", "", Self.updateBeacon)
    try addMethod("RemoveBeacon", "s", "", Self.removeBeacon)
  }

  /// Python shared by the helper methods: `md(text)` turns `004c=0215…,0075=aabb` into an
  /// `a{qv}` of `ay` wrapped for an `a{sv}`.
  private static let manufacturerData = """
    def md(text):
        data = dbus.Dictionary({}, signature='qv', variant_level=1)
        for item in filter(None, text.split(',')):
            company, hexadecimal = item.split('=')
            data[dbus.UInt16(int(company, 16))] = dbus.Array(
                [dbus.Byte(b) for b in bytes.fromhex(hexadecimal)], signature='y', variant_level=1)
        return data

    """

  /// `AddBeacon(s adapter, s address, s manufacturerData, s rssi) -> s path`.
  private static let addBeacon =
    manufacturerData + """
      adapter = '/org/bluez/' + args[0]
      path = adapter + '/dev_' + args[1].replace(':', '_')
      props = {
          'Address': dbus.String(args[1], variant_level=1),
          'Adapter': dbus.ObjectPath(adapter, variant_level=1),
          'ManufacturerData': md(args[2]),
      }
      if args[3]:
          props['RSSI'] = dbus.Int16(int(args[3]), variant_level=1)
      self.AddObject(path, 'org.bluez.Device1', props, [])
      self.object_manager_emit_added(path)
      ret = path
      """

  /// `UpdateBeacon(s path, s manufacturerData, s rssi)`: `-` leaves the data, an empty RSSI
  /// leaves the RSSI; one `PropertiesChanged` with what changed.
  private static let updateBeacon =
    manufacturerData + """
      device = objects[args[0]]
      changed = {}
      if args[1] != '-':
          changed['ManufacturerData'] = md(args[1])
      if args[2]:
          changed['RSSI'] = dbus.Int16(int(args[2]), variant_level=1)
      device.props['org.bluez.Device1'].update(changed)
      device.EmitSignal('org.freedesktop.DBus.Properties', 'PropertiesChanged', 'sa{sv}as', [
          'org.bluez.Device1', dbus.Dictionary(changed, signature='sv'),
          dbus.Array([], signature='s')])
      """

  /// `RemoveBeacon(s path)`: the object goes, with `InterfacesRemoved`.
  private static let removeBeacon = """
    self.RemoveObject(args[0])
    self.EmitSignal('org.freedesktop.DBus.ObjectManager', 'InterfacesRemoved', 'oas', [
        dbus.ObjectPath(args[0]), dbus.Array(['org.bluez.Device1'], signature='s')])
    """

  /// `org.freedesktop.DBus.Mock.AddMethod` on `/`, interface `org.bluez.Mock`.
  private func addMethod(_ name: String, _ input: String, _ output: String, _ code: String) throws {
    _ = try call(path: "/", interface: Self.mockInterface, member: "AddMethod") {
      message throws(DBusError) in
      for text in [Self.bluezMockInterface, name, input, output, code] {
        try SDBus.appendString(message, "s", text)
      }
    }
  }

  /// Calls a method of the mock with string arguments.
  @discardableResult
  private func call(
    path: String, interface: String, member: String,
    arguments: (DBusMessage) throws(DBusError) -> Void
  ) throws -> DBusMessage {
    guard let connection else { throw Failure(description: "the mock is not running") }
    return try connection.call(
      destination: BlueZClient.service, path: path, interface: interface, member: member,
      arguments: arguments)
  }

  /// Calls a method of `org.bluez.Mock` on `/` with string arguments; returns the string answer,
  /// if any.
  @discardableResult
  func mockCall(_ member: String, _ strings: String...) throws -> String? {
    let reply = try call(path: "/", interface: Self.bluezMockInterface, member: member) {
      message throws(DBusError) in
      for text in strings { try SDBus.appendString(message, "s", text) }
    }
    guard try SDBus.peekType(reply) != nil else { return nil }
    return try SDBus.readString(reply, "s")
  }

  /// The template's `AddAdapter(name, alias)`; returns the adapter's path.
  @discardableResult
  func addAdapter(_ name: String) throws -> String {
    try mockCall("AddAdapter", name, "corelocation-test") ?? ""
  }

  /// The template's `RemoveAdapter(name)` (its devices stay, as when bluetoothd loses an adapter
  /// without removing them first).
  func removeAdapter(_ name: String) throws {
    try mockCall("RemoveAdapter", name)
  }

  /// Sets an adapter's `Powered` (dbusmock's `UpdateProperties`, which sends `PropertiesChanged`).
  func setPowered(_ name: String, _ powered: Bool) throws {
    try call(path: "/org/bluez/\(name)", interface: Self.mockInterface, member: "UpdateProperties")
    {
      message throws(DBusError) in
      try SDBus.appendString(message, "s", BlueZClient.adapterInterface)
      try DBusValue.appendDictionary(["Powered": .bool(powered)], to: message)
    }
  }

  /// Adds a device with manufacturer data (`004c=…`) and an RSSI (nil: none, a cached device);
  /// returns its path.
  @discardableResult
  func addBeacon(adapter: String, address: String, data: String, rssi: Int?) throws -> String {
    try mockCall("AddBeacon", adapter, address, data, rssi.map(String.init) ?? "") ?? ""
  }

  /// Changes a device's manufacturer data (nil: unchanged) and RSSI (nil: unchanged) in one
  /// `PropertiesChanged`.
  func updateBeacon(_ path: String, data: String? = nil, rssi: Int? = nil) throws {
    try mockCall("UpdateBeacon", path, data ?? "-", rssi.map(String.init) ?? "")
  }

  /// Removes a device (`InterfacesRemoved`).
  func removeBeacon(_ path: String) throws {
    try mockCall("RemoveBeacon", path)
  }

  /// An `Adapter1` property of the adapter `name`.
  func adapterProperty(_ name: String, _ property: String) throws -> DBusValue {
    guard let connection else { throw Failure(description: "the mock is not running") }
    return try connection.property(
      destination: BlueZClient.service, path: "/org/bluez/\(name)",
      interface: BlueZClient.adapterInterface, name: property)
  }

  /// Stops the mock (SIGTERM) and waits for it: `org.bluez` leaves the bus, as when bluetoothd
  /// exits.
  func stopMock() {
    mock?.stop()
    mock = nil
  }

  /// The mock's log so far.
  func log() -> String {
    (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
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
