import Dispatch
import Foundation
import LocationFormats
import LocationModel
import Synchronization

/// `bluez`: iBeacon advertisements heard by a Bluetooth LE adapter, from BlueZ (`bluetoothd`) over
/// D-Bus on the system bus.
///
/// The source talks to BlueZ (`org.bluez`) through sd-bus on its own connection
/// (`sd_bus_open_system`, which honours `DBUS_SYSTEM_BUS_ADDRESS`, or the address given to
/// `init(adapter:busAddress:)`). On start it subscribes to `InterfacesAdded`, `InterfacesRemoved`
/// and `PropertiesChanged` under `/org/bluez`, reads every object with
/// `org.freedesktop.DBus.ObjectManager.GetManagedObjects` on `/`, picks the adapter
/// (`org.bluez.Adapter1`; the one named by `init(adapter:)`, or the first), requires `Powered`,
/// and calls `SetDiscoveryFilter({"Transport": "le", "DuplicateData": true})` and
/// `StartDiscovery` on it. BlueZ then reports each advertisement as a change of the
/// `org.bluez.Device1` object's `RSSI` and `ManufacturerData` (`a{qv}`, each value an `ay`); the
/// Apple (0x004C) entry decoded by `IBeaconFrame` becomes a `BeaconAdvertisement` with the
/// device's `RSSI`, its `Address` and the runtime's wall clock (`BlueZBeaconTable` has the
/// rules: a change of `RSSI` alone repeats the last frame; a device without `RSSI` is silent;
/// malformed frames are counted in `malformedFrames` and skipped).
///
/// Failures (our rules):
/// - No bus, BlueZ not on it or not answering, BlueZ leaving the bus, or the bus connection
///   breaking: a non-permanent `SourceError` (`.unavailable`, or `.disconnected` once running) and
///   a new attempt after 1 s, doubling up to 60 s (on the runtime's clock, through
///   `SourceContext.schedule`); a successful start resets the delay.
/// - No adapter, the adapter powered off, or the adapter removed: a non-permanent `SourceError`
///   (`.unavailable`); the source keeps listening and starts discovery again when an adapter
///   appears (`InterfacesAdded`) or is powered on (`PropertiesChanged`).
///
/// `stop()` calls `StopDiscovery` (best effort, 1 s) and closes the connection. The connection
/// belongs to one serial dispatch queue; a read dispatch source on its descriptor drives
/// `sd_bus_process`. Every call into the context is made on that queue, and `stop()` waits for
/// it, so nothing reaches the context after `stop()` returns.
package final class BlueZSource: BusSource {
  /// The URL scheme, and the URL of the source that takes the first adapter: `"bluez"`.
  package static let scheme = "bluez"
  /// The first delay before reconnecting, in seconds; it doubles after each failure.
  package static let initialRetryDelay = 1.0
  /// The longest delay before reconnecting, in seconds.
  package static let maximumRetryDelay = 60.0
  /// The discovery filter: LE only, and every advertisement reported (not only the first).
  static let discoveryFilter: [String: DBusValue] = [
    "Transport": .string("le"), "DuplicateData": .bool(true),
  ]

  /// BlueZ's answer to `StartDiscovery` when this connection is already discovering.
  static let inProgress = "org.bluez.Error.InProgress"

  package let descriptor: SourceDescriptor
  /// The adapter's name (`hci0`), or nil for the first adapter found.
  package let adapter: String?

  private let busAddress: String?
  private let callTimeout: UInt64
  private let malformed = Atomic<Int>(0)
  let lifecycle = BusSourceLifecycle<Session>(
    label: "corelocation.bluez", initialDelay: BlueZSource.initialRetryDelay,
    maximumDelay: BlueZSource.maximumRetryDelay)
  /// The queue that owns the bus connection.
  private var queue: DispatchQueue { lifecycle.queue }

  /// A connection to BlueZ, the dispatch source that drives it, the adapter discovering now and
  /// what its devices said. Used on the source's queue only; `Session` is `Sendable` so that the
  /// state can hold it.
  final class Session: @unchecked Sendable {
    // Safe: every use of the stored properties happens on BlueZSource.queue (serial).
    /// The connection to BlueZ.
    let client: BlueZClient
    /// The read dispatch source on the connection's descriptor.
    var reader: (any DispatchSourceRead)?
    /// The adapter discovering for us, nil while there is none (or it is powered off).
    var adapterPath: String?
    /// What the adapter's devices said.
    var table = BlueZBeaconTable()
    /// How many of `table.malformedFrames` are in the source's count already.
    var countedMalformed = 0

    /// Creates a session on a connected client.
    init(client: BlueZClient) {
      self.client = client
    }
  }

  /// How many malformed iBeacon frames were heard and skipped since the source was created.
  package var malformedFrames: Int { malformed.load(ordering: .relaxed) }

  /// Creates a source.
  /// - Parameters:
  ///   - adapter: the adapter's name (`hci0`); nil for the first adapter BlueZ has.
  ///   - busAddress: a D-Bus address (`unix:path=/run/x/bus`) to use instead of the system bus
  ///     (tests, private buses); nil for the system bus.
  package convenience init(adapter: String? = nil, busAddress: String? = nil) {
    self.init(adapter: adapter, busAddress: busAddress, callTimeout: DBusConnection.defaultTimeout)
  }

  /// Creates a source whose method calls wait `callTimeout` microseconds (tests).
  init(adapter: String?, busAddress: String?, callTimeout: UInt64) {
    self.adapter = adapter
    self.busAddress = busAddress
    self.callTimeout = callTimeout
    self.descriptor = SourceDescriptor(
      url: adapter.map { "\(Self.scheme)://\($0)" } ?? Self.scheme, nominalAccuracy: .infinity,
      power: .low, producesLocation: false, producesBeacons: true)
  }

  /// Whether BlueZ on the system bus has the adapter (`hci0`; nil: any adapter) powered, asked synchronously with a 1 s timeout (`CLLocationManager.isRangingAvailable()`).
  /// False when there is no system bus, no BlueZ on it, or no such powered adapter.
  package static func adapterAvailable(adapter: String?) -> Bool {
    adapterAvailable(adapter: adapter, busAddress: nil)
  }

  /// `adapterAvailable(adapter:)` on the bus at `busAddress` (nil: the system bus), each call
  /// waiting at most `timeout` microseconds.
  static func adapterAvailable(
    adapter: String?, busAddress: String?, timeout: UInt64 = 1_000_000
  ) -> Bool {
    guard let client = try? BlueZClient(address: busAddress, timeout: timeout) else {
      return false
    }
    defer { client.close() }
    guard let objects = try? client.managedObjects(),
      let found = BlueZClient.adapter(named: adapter, in: objects)
    else { return false }
    return found.properties["Powered"] == .bool(true)
  }

  package func start(context: any SourceContext) { startRun(context) }

  package func stop() { stopRun() }

  /// Connects, subscribes, reads BlueZ's objects, attaches the reader and starts discovery. Runs
  /// on the queue.
  func connect(generation: Int) {
    guard let context = context(for: generation) else { return }
    let client: BlueZClient
    do {
      client = try BlueZClient(address: busAddress, timeout: callTimeout)
    } catch {
      retry(generation, context, Self.busUnreachable("bluez", bus: busAddress, error))
      return
    }
    let objects: [String: BlueZClient.Interfaces]
    do {
      try client.subscribe()
      objects = try client.managedObjects()
    } catch {
      client.close()
      retry(generation, context, SourceError(.unavailable, Self.message(error), isPermanent: false))
      return
    }
    let session = Session(client: client)
    do {
      let reader = DispatchSource.makeReadSource(
        fileDescriptor: try client.fileDescriptor(), queue: queue)
      reader.setEventHandler { [self] in pump(session, generation: generation) }
      session.reader = reader
    } catch {
      client.close()
      retry(generation, context, SourceError(.disconnected, "bluez: \(error)", isPermanent: false))
      return
    }
    guard lifecycle.adopt(session, generation: generation) else {
      client.close()
      return
    }
    session.reader?.activate()
    guard setUp(session, objects, generation, context) else { return }
    // Signals that arrived while BlueZ was answering are already read: handle them.
    pump(session, generation: generation)
  }

  /// The message for a failed call to BlueZ.
  private static func message(_ error: DBusError) -> String {
    if error.isNoOwner {
      return "bluez: BlueZ is not running on the bus (\(BlueZClient.service) has no owner); "
        + "start bluetoothd (systemctl start bluetooth; Debian: bluez)"
    }
    if error.isTimeout { return "bluez: bluetoothd did not answer in time (\(error))" }
    return "bluez: \(error)"
  }

  /// Picks the adapter among `objects`, starts discovery on it when it is powered and reads its
  /// devices; reports an adapter that is missing or powered off. Runs on the queue.
  /// - Returns: false when the session was lost (a failed call).
  private func setUp(
    _ session: Session, _ objects: [String: BlueZClient.Interfaces], _ generation: Int,
    _ context: any SourceContext
  ) -> Bool {
    session.adapterPath = nil
    guard let found = BlueZClient.adapter(named: adapter, in: objects) else {
      let others = objects.filter { $0.value[BlueZClient.adapterInterface] != nil }.keys
        .compactMap { $0.split(separator: "/").last }.sorted().joined(separator: ", ")
      context.fail(
        SourceError(
          .unavailable,
          "bluez: no Bluetooth adapter\(adapter.map { " named \($0)" } ?? "")"
            + (others.isEmpty ? "" : " (BlueZ has \(others))") + "; waiting for one",
          isPermanent: false))
      return true
    }
    let path = found.path
    guard found.properties["Powered"] == .bool(true) else {
      context.fail(Self.poweredOff(path))
      return true
    }
    do {
      try session.client.setDiscoveryFilter(adapterPath: path, Self.discoveryFilter)
      do {
        try session.client.startDiscovery(adapterPath: path)
      } catch  where error.name == Self.inProgress {
        // Already discovering for this connection: nothing to start.
      }
    } catch {
      lose(
        session, generation, context,
        SourceError(
          error.name == nil ? .disconnected : .unavailable, Self.message(error),
          isPermanent: false))
      return false
    }
    session.adapterPath = path
    session.table.removeAll(under: path)
    for devicePath in objects.keys.sorted() where devicePath.hasPrefix(path + "/") {
      guard let device = objects[devicePath]?[BlueZClient.deviceInterface] else { continue }
      heard(session.table.add(path: devicePath, properties: device), session, context)
    }
    return true
  }

  /// The error for an adapter that is powered off.
  private static func poweredOff(_ path: String) -> SourceError {
    let name = path.split(separator: "/").last.map(String.init) ?? path
    return SourceError(
      .unavailable,
      "bluez: Bluetooth adapter \(name) is powered off; power it on (bluetoothctl power on)",
      isPermanent: false)
  }

  /// Processes the connection and handles what BlueZ announced. Runs on the queue.
  private func pump(_ session: Session, generation: Int) {
    guard let context = context(for: generation) else { return }
    drain(
      name: "bluez", service: "bluetoothd",
      pump: {
        let result = try session.client.pump()
        return (result.events, result.serviceVanished)
      },
      lose: { lose(session, generation, context, $0) },
      handle: { handle($0, session, generation, context) })
  }

  /// Handles one announcement. Runs on the queue.
  /// - Returns: false when the session was lost.
  private func handle(
    _ event: BlueZClient.Event, _ session: Session, _ generation: Int,
    _ context: any SourceContext
  ) -> Bool {
    switch event {
    case .interfacesAdded(let path, let interfaces):
      if session.adapterPath == nil, interfaces[BlueZClient.adapterInterface] != nil,
        BlueZClient.isAdapter(path, named: adapter)
      {
        return setUpAgain(session, generation, context)
      }
      if let adapterPath = session.adapterPath, path.hasPrefix(adapterPath + "/"),
        let device = interfaces[BlueZClient.deviceInterface]
      {
        heard(session.table.add(path: path, properties: device), session, context)
      }
    case .interfacesRemoved(let path, let interfaces):
      if path == session.adapterPath, interfaces.contains(BlueZClient.adapterInterface) {
        session.adapterPath = nil
        session.table.removeAll(under: path)
        let name = path.split(separator: "/").last.map(String.init) ?? path
        context.fail(
          SourceError(
            .unavailable, "bluez: Bluetooth adapter \(name) was removed; waiting for it to return",
            isPermanent: false))
      } else if interfaces.contains(BlueZClient.deviceInterface) {
        session.table.remove(path: path)
      }
    case .propertiesChanged(let path, let interface, let changed, let invalidated):
      if interface == BlueZClient.deviceInterface, let adapterPath = session.adapterPath,
        path.hasPrefix(adapterPath + "/")
      {
        let change = session.table.change(path: path, changed: changed, invalidated: invalidated)
        heard(change, session, context)
      } else if interface == BlueZClient.adapterInterface, let powered = changed["Powered"] {
        if path == session.adapterPath, powered == .bool(false) {
          session.adapterPath = nil
          session.table.removeAll(under: path)
          context.fail(Self.poweredOff(path))
        } else if session.adapterPath == nil, powered == .bool(true),
          BlueZClient.isAdapter(path, named: adapter)
        {
          return setUpAgain(session, generation, context)
        }
      }
    }
    return true
  }

  /// Reads BlueZ's objects again and sets discovery up (an adapter appeared or was powered on).
  /// Runs on the queue.
  /// - Returns: false when the session was lost.
  private func setUpAgain(_ session: Session, _ generation: Int, _ context: any SourceContext)
    -> Bool
  {
    let objects: [String: BlueZClient.Interfaces]
    do {
      objects = try session.client.managedObjects()
    } catch {
      lose(
        session, generation, context,
        SourceError(
          error.name == nil ? .disconnected : .unavailable, Self.message(error),
          isPermanent: false))
      return false
    }
    return setUp(session, objects, generation, context)
  }

  /// Emits what a device report carried, and counts malformed frames. Runs on the queue.
  private func heard(
    _ heard: BlueZBeaconTable.Heard?, _ session: Session, _ context: any SourceContext
  ) {
    let newlyMalformed = session.table.malformedFrames - session.countedMalformed
    if newlyMalformed > 0 {
      session.countedMalformed += newlyMalformed
      malformed.add(newlyMalformed, ordering: .relaxed)
    }
    guard let heard else { return }
    context.emitAdvertisement(
      heard.frame.advertisement(rssi: heard.rssi, address: heard.address, time: context.now.wall))
  }

  /// Drops a running session and reconnects later. Runs on the queue.
  private func lose(
    _ session: Session, _ generation: Int, _ context: any SourceContext, _ error: SourceError
  ) {
    let current = lifecycle.drop(session, generation: generation)
    close(session)
    guard current else { return }
    retry(generation, context, error)
  }

  /// Stops discovery (best effort) and closes the connection. Runs on the queue.
  func close(_ session: Session) {
    if let path = session.adapterPath, session.client.connection.bus != nil {
      session.adapterPath = nil
      try? session.client.stopDiscovery(adapterPath: path, timeout: min(callTimeout, 1_000_000))
    }
    session.client.release()
    guard let reader = session.reader else {
      session.client.close()
      return
    }
    session.reader = nil
    // The descriptor belongs to the connection: close it only once the reader is cancelled.
    reader.setCancelHandler { session.client.close() }
    reader.cancel()
  }
}
