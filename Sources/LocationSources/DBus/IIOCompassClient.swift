import CSystemd
import Foundation

/// iio-sensor-proxy's compass on its own bus connection: `HasCompass`, `ClaimCompass`,
/// `ReleaseCompass`, and the `PropertiesChanged` subscription that carries `CompassHeading`.
///
/// iio-sensor-proxy counts claims per connection and drops a connection's claims when it leaves
/// the bus, so the claim lives at most as long as this object's connection. Confined to one serial
/// queue, like its connection (sd-bus is not thread-safe); the signal handlers only record what
/// arrived, and `pump()` does the work after `sd_bus_process` returns, so no bus call runs inside a
/// handler.
final class IIOCompassClient {
  /// iio-sensor-proxy's well-known bus name.
  static let service = "net.hadess.SensorProxy"
  /// The compass object.
  static let compassPath = "/net/hadess/SensorProxy/Compass"
  /// The compass interface.
  static let compassInterface = "net.hadess.SensorProxy.Compass"

  /// The bus connection (owned).
  let connection: DBusConnection
  /// How long each method call waits for the daemon's answer, in microseconds.
  let timeout: UInt64
  /// Whether `ClaimCompass` succeeded and `ReleaseCompass` has not been called.
  private(set) var isClaimed = false

  private var slots: [OpaquePointer] = []
  /// Headings announced by `PropertiesChanged`, oldest first, not handed out yet.
  private var pendingHeadings: [Double] = []
  /// Set when `PropertiesChanged` invalidated `CompassHeading` without a value (read it).
  private var headingInvalidated = false
  /// Set when the service name lost its owner (the daemon exited).
  private var serviceVanished = false
  /// The daemon's unique bus name (the sender of the `ClaimCompass` reply).
  private var serviceOwner: String?

  /// Connects to the bus at `address`, or the system bus when nil.
  /// - Parameter timeout: how long each method call waits, in microseconds.
  init(address: String?, timeout: UInt64 = DBusConnection.defaultTimeout) throws(DBusError) {
    connection = try DBusConnection(address: address)
    self.timeout = timeout
  }

  deinit {
    releaseSlots()
  }

  /// The connection's file descriptor, for a read dispatch source.
  func fileDescriptor() throws(DBusError) -> Int32 {
    try SDBus.getFd(try connection.openBus("sd_bus_get_fd"))
  }

  /// Whether iio-sensor-proxy owns its name on this bus now.
  func isServiceRunning() throws(DBusError) -> Bool {
    try connection.nameHasOwner(Self.service)
  }

  /// The `HasCompass` property.
  /// - Throws: `DBusError` (no owner, timeout, a value that is not a boolean: `EBADMSG`).
  func hasCompass() throws(DBusError) -> Bool {
    let value = try connection.property(
      destination: Self.service, path: Self.compassPath, interface: Self.compassInterface,
      name: "HasCompass")
    guard case .bool(let has) = value else {
      throw DBusError(function: "HasCompass (not a boolean)", errno: EBADMSG)
    }
    return has
  }

  /// The `CompassHeading` property, degrees from magnetic north.
  func heading() throws(DBusError) -> Double {
    let value = try connection.property(
      destination: Self.service, path: Self.compassPath, interface: Self.compassInterface,
      name: "CompassHeading")
    guard let heading = value.doubleValue else {
      throw DBusError(function: "CompassHeading (not a number)", errno: EBADMSG)
    }
    return heading
  }

  /// Subscribes to the daemon's disappearance and to `PropertiesChanged` on the compass object,
  /// then calls `ClaimCompass` (in that order, so that no change is missed).
  /// - Throws: `DBusError` of the first call that failed.
  func claim() throws(DBusError) {
    let bus = try connection.openBus("sd_bus_add_match")
    let userdata = Unmanaged.passUnretained(self).toOpaque()
    slots.append(
      try SDBus.addMatch(
        bus,
        rule: "type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',"
          + "interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='\(Self.service)'",
        handler: { message, userdata, _ in
          guard let message, let userdata else { return 0 }
          Unmanaged<IIOCompassClient>.fromOpaque(userdata).takeUnretainedValue()
            .nameOwnerChanged(DBusMessage(borrowing: message))
          return 0
        }, userdata: userdata))
    slots.append(
      try SDBus.addMatch(
        bus,
        rule: "type='signal',path='\(Self.compassPath)',"
          + "interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',"
          + "arg0='\(Self.compassInterface)'",
        handler: { message, userdata, _ in
          guard let message, let userdata else { return 0 }
          Unmanaged<IIOCompassClient>.fromOpaque(userdata).takeUnretainedValue()
            .propertiesChanged(DBusMessage(borrowing: message))
          return 0
        }, userdata: userdata))
    let reply = try connection.call(
      destination: Self.service, path: Self.compassPath, interface: Self.compassInterface,
      member: "ClaimCompass", timeout: timeout)
    serviceOwner = SDBus.sender(reply)
    isClaimed = true
  }

  /// What one `pump()` produced.
  struct PumpResult {
    /// The headings that arrived, oldest first.
    var headings: [Double] = []
    /// True when iio-sensor-proxy left the bus: the claim is gone.
    var serviceVanished = false
  }

  /// Processes every message waiting on the connection and returns the headings they carried.
  /// - Throws: `DBusError` when the connection broke.
  func pump() throws(DBusError) -> PumpResult {
    let bus = try connection.openBus("sd_bus_process")
    var result = PumpResult()
    while try SDBus.process(bus) {}
    if serviceVanished {
      result.serviceVanished = true
      pendingHeadings.removeAll()
      return result
    }
    result.headings = pendingHeadings
    pendingHeadings.removeAll()
    if headingInvalidated {
      headingInvalidated = false
      result.headings.append(try heading())
    }
    try SDBus.flush(bus)
    return result
  }

  /// Calls `ReleaseCompass` (when claimed; errors are ignored, since the daemon drops the claim
  /// with the connection anyway) and removes the matches. The connection stays open until
  /// `close()`.
  func release() {
    if isClaimed, connection.bus != nil {
      isClaimed = false
      _ = try? connection.call(
        destination: Self.service, path: Self.compassPath, interface: Self.compassInterface,
        member: "ReleaseCompass", timeout: min(timeout, 1_000_000))
    }
    releaseSlots()
  }

  /// Releases the claim and closes the connection.
  func close() {
    release()
    connection.close()
  }

  private func releaseSlots() {
    for slot in slots { SDBus.slotUnref(slot) }
    slots.removeAll()
  }

  /// `PropertiesChanged(s interface, a{sv} changed, as invalidated)` from the daemon: records a
  /// new `CompassHeading`.
  private func propertiesChanged(_ message: DBusMessage) {
    guard let owner = serviceOwner, SDBus.sender(message) == owner,
      let interface = try? SDBus.readString(message, "s"), interface == Self.compassInterface,
      let changed = try? DBusValue.readDictionary(from: message)
    else { return }
    if let heading = changed["CompassHeading"]?.doubleValue {
      pendingHeadings.append(heading)
      return
    }
    guard (try? SDBus.enterContainer(message, "a", contents: "s")) == true else { return }
    while let name = try? SDBus.readString(message, "s") {
      if name == "CompassHeading" { headingInvalidated = true }
    }
  }

  /// `NameOwnerChanged(s name, s old, s new)` for the daemon's name: an empty new owner means it
  /// left the bus.
  private func nameOwnerChanged(_ message: DBusMessage) {
    guard let name = try? SDBus.readString(message, "s"), name == Self.service,
      (try? SDBus.readString(message, "s")) != nil,
      let newOwner = try? SDBus.readString(message, "s")
    else { return }
    if newOwner.isEmpty { serviceVanished = true }
  }
}
