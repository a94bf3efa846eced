import CSystemd
import Foundation

/// BlueZ (`bluetoothd`, bus name `org.bluez`) on its own bus connection: its objects
/// (`org.freedesktop.DBus.ObjectManager.GetManagedObjects` on `/`), the adapter's
/// `SetDiscoveryFilter`, `StartDiscovery` and `StopDiscovery`, and the signals that carry what
/// the adapter hears (`InterfacesAdded`, `InterfacesRemoved`, `PropertiesChanged` under
/// `/org/bluez`), following BlueZ's `doc/org.bluez.Adapter.rst` and `doc/org.bluez.Device.rst`.
///
/// Confined to one serial queue, like its connection (sd-bus is not thread-safe); the signal
/// handlers only record what arrived, and `pump()` hands it out after `sd_bus_process` returns,
/// so no bus call runs inside a handler. Signals are accepted only from the connection that
/// answered `GetManagedObjects` (BlueZ's unique name), so no other peer can feed the source.
final class BlueZClient {
  /// BlueZ's well-known bus name.
  static let service = "org.bluez"
  /// The object manager's path.
  static let rootPath = "/"
  /// Where BlueZ's adapters and devices live.
  static let objectsPath = "/org/bluez"
  /// Interface names.
  static let adapterInterface = "org.bluez.Adapter1"
  static let deviceInterface = "org.bluez.Device1"
  static let objectManagerInterface = "org.freedesktop.DBus.ObjectManager"
  static let propertiesInterface = "org.freedesktop.DBus.Properties"

  /// One object's interfaces, each with its properties.
  typealias Interfaces = [String: [String: DBusValue]]

  /// Something BlueZ announced, in the order it arrived.
  enum Event: Sendable, Equatable {
    /// `InterfacesAdded(o path, a{sa{sv}} interfaces)`.
    case interfacesAdded(path: String, interfaces: Interfaces)
    /// `InterfacesRemoved(o path, as interfaces)`.
    case interfacesRemoved(path: String, interfaces: [String])
    /// `PropertiesChanged(s interface, a{sv} changed, as invalidated)` on `path`.
    case propertiesChanged(
      path: String, interface: String, changed: [String: DBusValue], invalidated: [String])
  }

  /// What one `pump()` produced.
  struct PumpResult {
    /// What BlueZ announced, oldest first.
    var events: [Event] = []
    /// True when `org.bluez` lost its owner (bluetoothd exited or restarted).
    var serviceVanished = false
  }

  /// The bus connection (owned).
  let connection: DBusConnection
  /// How long each method call waits for BlueZ's answer, in microseconds.
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

  /// Subscribes to BlueZ's disappearance, to objects appearing and disappearing, and to property
  /// changes under `/org/bluez`. Call it before `managedObjects()`, so that nothing is missed.
  func subscribe() throws(DBusError) {
    let rules = [
      "type='signal',path='\(Self.rootPath)',interface='\(Self.objectManagerInterface)',"
        + "member='InterfacesAdded'",
      "type='signal',path='\(Self.rootPath)',interface='\(Self.objectManagerInterface)',"
        + "member='InterfacesRemoved'",
      "type='signal',path_namespace='\(Self.objectsPath)',"
        + "interface='\(Self.propertiesInterface)',member='PropertiesChanged'",
    ]
    try watcher.subscribe(connection, rules: rules)
  }

  /// `GetManagedObjects` on `/`: every object BlueZ has, with its interfaces and properties.
  /// Remembers who answered, the only sender whose signals are accepted afterwards.
  /// - Throws: `DBusError` (BlueZ not on the bus: `isNoOwner`; no answer: `isTimeout`).
  func managedObjects() throws(DBusError) -> [String: Interfaces] {
    let reply = try connection.call(
      destination: Self.service, path: Self.rootPath, interface: Self.objectManagerInterface,
      member: "GetManagedObjects", timeout: timeout)
    watcher.answered(reply)
    guard try SDBus.enterContainer(reply, "a", contents: "{oa{sa{sv}}}") else {
      throw DBusError(function: "GetManagedObjects (no object dictionary)", errno: EBADMSG)
    }
    var objects: [String: Interfaces] = [:]
    while try SDBus.enterContainer(reply, "e", contents: "oa{sa{sv}}") {
      let path = try SDBus.readString(reply, "o")
      objects[path] = try Self.readInterfaces(reply)
      try SDBus.exitContainer(reply)
    }
    try SDBus.exitContainer(reply)
    return objects
  }

  /// `Adapter1.SetDiscoveryFilter(a{sv} filter)` on the adapter at `adapterPath`.
  func setDiscoveryFilter(adapterPath: String, _ filter: [String: DBusValue]) throws(DBusError) {
    _ = try connection.call(
      destination: Self.service, path: adapterPath, interface: Self.adapterInterface,
      member: "SetDiscoveryFilter", timeout: timeout
    ) { message throws(DBusError) in
      try DBusValue.appendDictionary(filter, to: message)
    }
  }

  /// `Adapter1.StartDiscovery()` on the adapter at `adapterPath`.
  func startDiscovery(adapterPath: String) throws(DBusError) {
    _ = try connection.call(
      destination: Self.service, path: adapterPath, interface: Self.adapterInterface,
      member: "StartDiscovery", timeout: timeout)
  }

  /// `Adapter1.StopDiscovery()` on the adapter at `adapterPath`, waiting at most `timeout`
  /// microseconds.
  func stopDiscovery(adapterPath: String, timeout: UInt64) throws(DBusError) {
    _ = try connection.call(
      destination: Self.service, path: adapterPath, interface: Self.adapterInterface,
      member: "StopDiscovery", timeout: timeout)
  }

  /// Processes every message waiting on the connection and returns what BlueZ announced.
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

  /// The adapter to use among `objects`: the one named `name` (`hci0`, the last component of its
  /// path), or, when `name` is nil, the first powered adapter by path (the first by path when
  /// none is powered).
  /// - Returns: its path and `Adapter1` properties, or nil when there is none.
  static func adapter(named name: String?, in objects: [String: Interfaces]) -> (
    path: String, properties: [String: DBusValue]
  )? {
    let candidates = objects.keys.sorted().compactMap { path in
      isAdapter(path, named: name)
        ? objects[path]?[adapterInterface].map { (path: path, properties: $0) } : nil
    }
    return candidates.first { $0.properties["Powered"] == .bool(true) } ?? candidates.first
  }

  /// Whether `path` can be the adapter named `name` (any adapter path when `name` is nil).
  static func isAdapter(_ path: String, named name: String?) -> Bool {
    guard path.hasPrefix(objectsPath + "/") else { return false }
    guard let name else { return true }
    return path.split(separator: "/").last.map(String.init) == name
  }

  /// Reads an `InterfacesAdded`, `InterfacesRemoved` or `PropertiesChanged` signal.
  private static func event(from message: DBusMessage) throws(DBusError) -> Event? {
    switch SDBus.member(message) {
    case "InterfacesAdded":
      let path = try SDBus.readString(message, "o")
      return .interfacesAdded(path: path, interfaces: try readInterfaces(message))
    case "InterfacesRemoved":
      let path = try SDBus.readString(message, "o")
      return .interfacesRemoved(path: path, interfaces: try readStrings(message))
    case "PropertiesChanged":
      guard let path = SDBus.path(message) else { return nil }
      let interface = try SDBus.readString(message, "s")
      let changed = try DBusValue.readDictionary(from: message)
      let invalidated = try SDBus.peekType(message) == nil ? [] : try readStrings(message)
      return .propertiesChanged(
        path: path, interface: interface, changed: changed, invalidated: invalidated)
    default:
      return nil
    }
  }

  /// Reads an `a{sa{sv}}`: interface names and their properties.
  private static func readInterfaces(_ message: DBusMessage) throws(DBusError) -> Interfaces {
    guard try SDBus.enterContainer(message, "a", contents: "{sa{sv}}") else {
      throw DBusError(function: "sd_bus_message_enter_container", errno: ENXIO)
    }
    var interfaces: Interfaces = [:]
    while try SDBus.enterContainer(message, "e", contents: "sa{sv}") {
      let name = try SDBus.readString(message, "s")
      interfaces[name] = try DBusValue.readDictionary(from: message)
      try SDBus.exitContainer(message)
    }
    try SDBus.exitContainer(message)
    return interfaces
  }

  /// Reads an `as`.
  private static func readStrings(_ message: DBusMessage) throws(DBusError) -> [String] {
    guard try SDBus.enterContainer(message, "a", contents: "s") else {
      throw DBusError(function: "sd_bus_message_enter_container", errno: ENXIO)
    }
    var strings: [String] = []
    while try SDBus.peekType(message) != nil {
      strings.append(try SDBus.readString(message, "s"))
    }
    try SDBus.exitContainer(message)
    return strings
  }
}
