import CSystemd
import Foundation

/// One GeoClue2 client on its own bus connection: `Manager.GetClient`, the client's properties,
/// the `LocationUpdated` subscription, `Start` and `Stop`.
///
/// A GeoClue client object dies with the connection that created it, so the connection lives as
/// long as this object. Confined to one serial queue, like its connection (sd-bus is not
/// thread-safe); the signal handlers only record what arrived, and `pump()` does the work after
/// `sd_bus_process` returns, so no bus call runs inside a handler.
final class GeoClueClient {
  /// GeoClue's well-known bus name.
  static let service = "org.freedesktop.GeoClue2"
  /// The manager object.
  static let managerPath = "/org/freedesktop/GeoClue2/Manager"
  /// Interface names.
  static let managerInterface = "org.freedesktop.GeoClue2.Manager"
  static let clientInterface = "org.freedesktop.GeoClue2.Client"
  static let locationInterface = "org.freedesktop.GeoClue2.Location"

  /// The bus connection (owned).
  let connection: DBusConnection
  /// How long each method call waits for GeoClue's answer, in microseconds.
  let timeout: UInt64
  /// The client object GeoClue made for us, once `GetClient` answered.
  private(set) var clientPath: String?
  /// Whether `Start` succeeded and `Stop` has not been called.
  private(set) var isStarted = false

  private var slots: [OpaquePointer] = []
  /// Location object paths announced by `LocationUpdated` and not read yet.
  private var pendingLocations: [String] = []
  /// Set when `org.freedesktop.GeoClue2` lost its owner (GeoClue exited).
  private var serviceVanished = false
  /// GeoClue's unique bus name (the sender of the `GetClient` reply).
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

  /// Creates the client, sets its properties, subscribes to `LocationUpdated` and to GeoClue's
  /// disappearance, then calls `Start` (in that order, so that no update is missed).
  /// - Throws: `DBusError` of the first call that failed (`Start`'s `AccessDenied` when GeoClue
  ///   refuses the desktop id).
  func start(desktopId: String, accuracyLevel: UInt32, distanceThreshold: UInt32) throws(DBusError)
  {
    let bus = try connection.openBus("sd_bus_match_signal")
    let userdata = Unmanaged.passUnretained(self).toOpaque()
    // GeoClue exiting (or restarting) drops every client: watch its name.
    slots.append(
      try SDBus.addMatch(
        bus,
        rule: "type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',"
          + "interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='\(Self.service)'",
        handler: { message, userdata, _ in
          guard let message, let userdata else { return 0 }
          Unmanaged<GeoClueClient>.fromOpaque(userdata).takeUnretainedValue()
            .nameOwnerChanged(DBusMessage(borrowing: message))
          return 0
        }, userdata: userdata))

    let reply = try connection.call(
      destination: Self.service, path: Self.managerPath, interface: Self.managerInterface,
      member: "GetClient", timeout: timeout)
    let path = try SDBus.readString(reply, "o")
    clientPath = path
    serviceOwner = SDBus.sender(reply)
    try setClientProperty("DesktopId", .string(desktopId))
    try setClientProperty("RequestedAccuracyLevel", .uint32(accuracyLevel))
    try setClientProperty("DistanceThreshold", .uint32(distanceThreshold))
    // The match names our own client object's path; the handler accepts the signal only from the
    // connection that answered GetClient (GeoClue's unique name), so no other peer can feed us.
    slots.append(
      try SDBus.matchSignal(
        bus, sender: nil, path: path, interface: Self.clientInterface, member: "LocationUpdated",
        handler: { message, userdata, _ in
          guard let message, let userdata else { return 0 }
          Unmanaged<GeoClueClient>.fromOpaque(userdata).takeUnretainedValue()
            .locationUpdated(DBusMessage(borrowing: message))
          return 0
        }, userdata: userdata))
    _ = try connection.call(
      destination: Self.service, path: path, interface: Self.clientInterface, member: "Start",
      timeout: timeout)
    isStarted = true
  }

  private func setClientProperty(_ name: String, _ value: DBusValue) throws(DBusError) {
    guard let clientPath else { throw DBusError(function: "sd_bus_call", errno: ENOENT) }
    try connection.setProperty(
      destination: Self.service, path: clientPath, interface: Self.clientInterface, name: name,
      value: value, timeout: timeout)
  }

  /// What one round of processing produced.
  struct PumpResult {
    /// The properties of each new Location object, oldest first.
    var locations: [[String: DBusValue]] = []
    /// True when GeoClue left the bus: the client is gone.
    var serviceVanished = false
  }

  /// Processes every message waiting on the connection, then reads the Location objects that
  /// `LocationUpdated` announced. A location object that GeoClue already removed is skipped.
  /// - Throws: `DBusError` when the connection broke.
  func pump() throws(DBusError) -> PumpResult {
    let bus = try connection.openBus("sd_bus_process")
    var result = PumpResult()
    while true {
      while try SDBus.process(bus) {}
      if serviceVanished {
        result.serviceVanished = true
        pendingLocations.removeAll()
        return result
      }
      guard !pendingLocations.isEmpty else { break }
      let paths = pendingLocations
      pendingLocations.removeAll()
      for path in paths {
        do {
          result.locations.append(
            try connection.allProperties(
              destination: Self.service, path: path, interface: Self.locationInterface,
              timeout: timeout))
        } catch  where error.isUnknownObject {
          continue
        }
      }
    }
    try SDBus.flush(bus)
    return result
  }

  /// Calls `Client.Stop` (when started; errors are ignored, since GeoClue drops the client with
  /// the connection anyway) and removes the matches. The connection stays open until `close()`.
  func stop() {
    if isStarted, let clientPath, connection.bus != nil {
      isStarted = false
      _ = try? connection.call(
        destination: Self.service, path: clientPath, interface: Self.clientInterface,
        member: "Stop", timeout: min(timeout, 1_000_000))
    }
    releaseSlots()
  }

  /// Stops the client and closes the connection.
  func close() {
    stop()
    connection.close()
  }

  private func releaseSlots() {
    for slot in slots { SDBus.slotUnref(slot) }
    slots.removeAll()
  }

  /// `LocationUpdated(o old, o new)`: remembers the new object's path.
  private func locationUpdated(_ message: DBusMessage) {
    guard serviceOwner != nil, SDBus.sender(message) == serviceOwner,
      (try? SDBus.readString(message, "o")) != nil,
      let new = try? SDBus.readString(message, "o")
    else { return }
    pendingLocations.append(new)
  }

  /// `NameOwnerChanged(s name, s old, s new)` for GeoClue's name: an empty new owner means GeoClue
  /// left the bus.
  private func nameOwnerChanged(_ message: DBusMessage) {
    guard let name = try? SDBus.readString(message, "s"), name == Self.service,
      (try? SDBus.readString(message, "s")) != nil,
      let newOwner = try? SDBus.readString(message, "s")
    else { return }
    if newOwner.isEmpty { serviceVanished = true }
  }
}
