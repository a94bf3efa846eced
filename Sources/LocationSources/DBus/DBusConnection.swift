import Foundation

/// A client connection to a D-Bus bus (the system bus, or a bus at an address), with the calls this
/// package makes on it.
///
/// Not thread-safe: sd-bus objects belong to one thread at a time, so whoever owns a connection
/// uses it from one serial queue only (CONTRIBUTING.md, "How the code is written").
final class DBusConnection {
  /// How long a method call waits for its reply: 5 s, in microseconds.
  static let defaultTimeout: UInt64 = 5_000_000

  /// The `sd_bus *`, nil once closed.
  private(set) var bus: OpaquePointer?

  /// Connects to the bus at `address`, or to the system bus (`sd_bus_open_system`, which honours
  /// `DBUS_SYSTEM_BUS_ADDRESS`) when `address` is nil.
  init(address: String?) throws(DBusError) {
    guard let address else {
      bus = try SDBus.openSystem()
      return
    }
    let bus = try SDBus.new()
    do {
      try SDBus.setAddress(bus, address)
      try SDBus.setBusClient(bus, true)
      try SDBus.start(bus)
    } catch {
      SDBus.flushCloseUnref(bus)
      throw error
    }
    self.bus = bus
  }

  deinit {
    close()
  }

  /// Flushes and closes the connection; later calls fail with `ENOTCONN`.
  func close() {
    guard let bus else { return }
    self.bus = nil
    SDBus.flushCloseUnref(bus)
  }

  /// The open bus, or `ENOTCONN`.
  func openBus(_ function: String) throws(DBusError) -> OpaquePointer {
    guard let bus else { throw DBusError(function: function, errno: ENOTCONN) }
    return bus
  }

  /// Calls a method and returns its reply, positioned at the first value.
  /// - Parameter arguments: appends the call's arguments to the message.
  /// - Throws: `DBusError`, with the D-Bus error name when the peer replied with an error.
  func call(
    destination: String, path: String, interface: String, member: String,
    timeout: UInt64 = defaultTimeout,
    arguments: (DBusMessage) throws(DBusError) -> Void = { _ in }
  ) throws(DBusError) -> DBusMessage {
    let bus = try openBus("sd_bus_call")
    let message = try SDBus.newMethodCall(
      bus, destination: destination, path: path, interface: interface, member: member)
    try arguments(message)
    do {
      return try SDBus.call(bus, message, timeout: timeout)
    } catch {
      var named = error
      named.function = "\(interface).\(member) (sd_bus_call)"
      throw named
    }
  }

  /// `org.freedesktop.DBus.Properties.Set` with a basic value.
  func setProperty(
    destination: String, path: String, interface: String, name: String, value: DBusValue,
    timeout: UInt64 = defaultTimeout
  ) throws(DBusError) {
    guard let signature = value.signature else {
      throw DBusError(function: "sd_bus_message_open_container", errno: ENOTSUP)
    }
    _ = try call(
      destination: destination, path: path, interface: "org.freedesktop.DBus.Properties",
      member: "Set", timeout: timeout
    ) { message throws(DBusError) in
      try SDBus.appendString(message, "s", interface)
      try SDBus.appendString(message, "s", name)
      try SDBus.openContainer(message, "v", contents: signature)
      try value.append(to: message)
      try SDBus.closeContainer(message)
    }
  }

  /// `org.freedesktop.DBus.Properties.Get`.
  func property(
    destination: String, path: String, interface: String, name: String
  ) throws(DBusError) -> DBusValue {
    let reply = try call(
      destination: destination, path: path, interface: "org.freedesktop.DBus.Properties",
      member: "Get"
    ) { message throws(DBusError) in
      try SDBus.appendString(message, "s", interface)
      try SDBus.appendString(message, "s", name)
    }
    return try DBusValue.read(from: reply)
  }

  /// `org.freedesktop.DBus.Properties.GetAll`.
  func allProperties(
    destination: String, path: String, interface: String, timeout: UInt64 = defaultTimeout
  ) throws(DBusError) -> [String: DBusValue] {
    let reply = try call(
      destination: destination, path: path, interface: "org.freedesktop.DBus.Properties",
      member: "GetAll", timeout: timeout
    ) { message throws(DBusError) in
      try SDBus.appendString(message, "s", interface)
    }
    return try DBusValue.readDictionary(from: reply)
  }

  /// `org.freedesktop.DBus.NameHasOwner`: whether someone owns `name` on the bus now.
  func nameHasOwner(_ name: String) throws(DBusError) -> Bool {
    let reply = try call(
      destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
      interface: "org.freedesktop.DBus", member: "NameHasOwner"
    ) { message throws(DBusError) in
      try SDBus.appendString(message, "s", name)
    }
    return try SDBus.readBool(reply)
  }
}
