import CSystemd
import Foundation

/// NetworkManager (bus name `org.freedesktop.NetworkManager`) on its own bus connection: its
/// devices (`GetDevices`), a wireless device's access points (`GetAllAccessPoints`) and
/// `RequestScan`, properties (`GetAll`), and the signals that say what changed:
/// `DeviceAdded`/`DeviceRemoved` on the manager object, `AccessPointAdded`/`AccessPointRemoved`
/// on wireless devices, and `org.freedesktop.DBus.Properties.PropertiesChanged` under
/// `/org/freedesktop/NetworkManager` (NetworkManager's `introspection/*.xml`).
///
/// Confined to one serial queue, like its connection (sd-bus is not thread-safe); the signal
/// handlers only record what arrived, and `pump()` hands it out after `sd_bus_process` returns,
/// so no bus call runs inside a handler. Signals are accepted only from the connection that
/// answered `GetDevices` (NetworkManager's unique name), so no other peer can feed the source.
final class NetworkManagerClient {
  /// NetworkManager's well-known bus name.
  static let service = "org.freedesktop.NetworkManager"
  /// The manager object's path, under which every NetworkManager object lives.
  static let managerPath = "/org/freedesktop/NetworkManager"
  /// The manager's interface (`GetDevices`, `DeviceAdded`).
  static let managerInterface = "org.freedesktop.NetworkManager"
  /// Every device's interface (`DeviceType`, `Interface`).
  static let deviceInterface = "org.freedesktop.NetworkManager.Device"
  /// A Wi-Fi device's interface (`GetAllAccessPoints`, `RequestScan`, `LastScan`).
  static let wirelessInterface = "org.freedesktop.NetworkManager.Device.Wireless"
  /// An access point's interface (`HwAddress`, `Strength`, ...).
  static let accessPointInterface = "org.freedesktop.NetworkManager.AccessPoint"
  /// The standard properties interface.
  static let propertiesInterface = "org.freedesktop.DBus.Properties"
  /// `NM_DEVICE_TYPE_WIFI`.
  static let wifiDeviceType = 2

  /// Something NetworkManager announced, in the order it arrived.
  enum Event: Sendable, Equatable {
    /// `DeviceAdded(o device)` on the manager.
    case deviceAdded(path: String)
    /// `DeviceRemoved(o device)` on the manager.
    case deviceRemoved(path: String)
    /// `AccessPointAdded(o access_point)` on the wireless device `device`.
    case accessPointAdded(device: String, path: String)
    /// `AccessPointRemoved(o access_point)` on the wireless device `device`.
    case accessPointRemoved(device: String, path: String)
    /// `PropertiesChanged(s interface, a{sv} changed, as invalidated)` on `path`.
    case propertiesChanged(path: String, interface: String, changed: [String: DBusValue])
  }

  /// What one `pump()` produced.
  struct PumpResult {
    /// What NetworkManager announced, oldest first.
    var events: [Event] = []
    /// True when `org.freedesktop.NetworkManager` lost its owner (NetworkManager exited or
    /// restarted).
    var serviceVanished = false
  }

  /// The bus connection (owned).
  let connection: DBusConnection
  /// How long each method call waits for NetworkManager's answer, in microseconds.
  let timeout: UInt64

  /// The signals watched, from the service only.
  private let watcher: SignalWatcher<Event>

  /// Connects to the bus at `address`, or the system bus when nil.
  /// - Parameter timeout: how long each method call waits, in microseconds.
  init(address: String?, timeout: UInt64 = DBusConnection.defaultTimeout) throws(DBusError) {
    connection = try DBusConnection(address: address)
    self.timeout = timeout
    watcher = SignalWatcher(service: Self.service) { try Self.event(from: $0) }
  }

  /// The connection's file descriptor, for a read dispatch source.
  func fileDescriptor() throws(DBusError) -> Int32 {
    try SDBus.getFd(try connection.openBus("sd_bus_get_fd"))
  }

  /// Subscribes to NetworkManager's disappearance, to devices and access points appearing and
  /// disappearing, and to property changes of its objects. Call it before `devices()`, so that
  /// nothing is missed.
  func subscribe() throws(DBusError) {
    let objects = "path_namespace='\(Self.managerPath)'"
    let rules = [
      "type='signal',path='\(Self.managerPath)',interface='\(Self.managerInterface)',"
        + "member='DeviceAdded'",
      "type='signal',path='\(Self.managerPath)',interface='\(Self.managerInterface)',"
        + "member='DeviceRemoved'",
      "type='signal',\(objects),interface='\(Self.wirelessInterface)',member='AccessPointAdded'",
      "type='signal',\(objects),interface='\(Self.wirelessInterface)',member='AccessPointRemoved'",
      "type='signal',\(objects),interface='\(Self.propertiesInterface)',member='PropertiesChanged'",
    ]
    try watcher.subscribe(connection, rules: rules)
  }

  /// `GetDevices`: the paths of the devices NetworkManager manages. Remembers who answered, the
  /// only sender whose signals are accepted afterwards.
  /// - Throws: `DBusError` (NetworkManager not on the bus: `isNoOwner`; no answer: `isTimeout`).
  func devices() throws(DBusError) -> [String] {
    let reply = try connection.call(
      destination: Self.service, path: Self.managerPath, interface: Self.managerInterface,
      member: "GetDevices", timeout: timeout)
    watcher.answered(reply)
    return try Self.readPaths(reply)
  }

  /// `GetAllAccessPoints` on the wireless device at `devicePath`: every access point it knows,
  /// hidden ones included.
  func accessPoints(devicePath: String) throws(DBusError) -> [String] {
    let reply = try connection.call(
      destination: Self.service, path: devicePath, interface: Self.wirelessInterface,
      member: "GetAllAccessPoints", timeout: timeout)
    return try Self.readPaths(reply)
  }

  /// `GetAll` of `interface` on the object at `path`.
  func properties(path: String, interface: String) throws(DBusError) -> [String: DBusValue] {
    try connection.allProperties(
      destination: Self.service, path: path, interface: interface, timeout: timeout)
  }

  /// `RequestScan({})` on the wireless device at `devicePath`, waiting at most `timeout`
  /// microseconds.
  func requestScan(devicePath: String, timeout: UInt64) throws(DBusError) {
    _ = try connection.call(
      destination: Self.service, path: devicePath, interface: Self.wirelessInterface,
      member: "RequestScan", timeout: timeout
    ) { message throws(DBusError) in
      try DBusValue.appendDictionary([:], to: message)
    }
  }

  /// Whether someone owns `org.freedesktop.NetworkManager`, asked with `NameHasOwner`, waiting
  /// at most `timeout` microseconds.
  func serviceHasOwner(timeout: UInt64) throws(DBusError) -> Bool {
    let reply = try connection.call(
      destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
      interface: "org.freedesktop.DBus", member: "NameHasOwner", timeout: timeout
    ) { message throws(DBusError) in
      try SDBus.appendString(message, "s", Self.service)
    }
    return try SDBus.readBool(reply)
  }

  /// Processes every message waiting on the connection and returns what NetworkManager
  /// announced.
  /// - Throws: `DBusError` when the connection broke.
  func pump() throws(DBusError) -> PumpResult {
    let (events, vanished) = try watcher.take(from: connection)
    return PumpResult(events: events, serviceVanished: vanished)
  }

  /// Removes the subscriptions; the connection stays open until `close()`.
  func release() {
    watcher.release()
  }

  /// Removes the subscriptions and closes the connection.
  func close() {
    watcher.release()
    connection.close()
  }

  /// Reads one of the subscribed signals.
  private static func event(from message: DBusMessage) throws(DBusError) -> Event? {
    guard let path = SDBus.path(message) else { return nil }
    switch SDBus.member(message) {
    case "DeviceAdded":
      return .deviceAdded(path: try SDBus.readString(message, "o"))
    case "DeviceRemoved":
      return .deviceRemoved(path: try SDBus.readString(message, "o"))
    case "AccessPointAdded":
      return .accessPointAdded(device: path, path: try SDBus.readString(message, "o"))
    case "AccessPointRemoved":
      return .accessPointRemoved(device: path, path: try SDBus.readString(message, "o"))
    case "PropertiesChanged":
      let interface = try SDBus.readString(message, "s")
      let changed = try DBusValue.readDictionary(from: message)
      return .propertiesChanged(path: path, interface: interface, changed: changed)
    default:
      return nil
    }
  }

  /// Reads an `ao`.
  private static func readPaths(_ message: DBusMessage) throws(DBusError) -> [String] {
    guard try SDBus.enterContainer(message, "a", contents: "o") else {
      throw DBusError(function: "sd_bus_message_enter_container", errno: ENXIO)
    }
    var paths: [String] = []
    while try SDBus.peekType(message) != nil {
      paths.append(try SDBus.readString(message, "o"))
    }
    try SDBus.exitContainer(message)
    return paths
  }
}
