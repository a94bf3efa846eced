import Dispatch
import Foundation
import LocationModel

/// `wifi`: Wi-Fi scans (the access points a wireless device hears) from NetworkManager over
/// D-Bus on the system bus; the runtime turns them into positions.
///
/// The source talks to NetworkManager (`org.freedesktop.NetworkManager`) through sd-bus on its
/// own connection (`sd_bus_open_system`, which honours `DBUS_SYSTEM_BUS_ADDRESS`, or the address
/// given to `init(interface:busAddress:)`). On start it subscribes to NetworkManager's signals,
/// asks for its devices (`GetDevices`) and keeps the Wi-Fi ones (`DeviceType` 2) — every one, or
/// the one whose `Interface` is named by `init(interface:)`. For each it reads the access points
/// (`Device.Wireless.GetAllAccessPoints`, then each one's properties) and `LastScan`; afterwards
/// `AccessPointAdded`, `AccessPointRemoved` and `PropertiesChanged` keep the picture current
/// (`WifiAccessPointTable` has the rules: strength as dBm, stale access points left out).
///
/// A `WifiScan` with every current access point of the device(s) is emitted at start, when a device
/// comes or goes, and once per completed scan: when a device's `LastScan` changes, after every
/// announcement that arrived with it has been applied (one scan of NetworkManager is one
/// `WifiScan`, however many access points it added, removed or changed, so that it is learned
/// from once). A device without `LastScan` (NetworkManager before 1.12) has no such signal: its
/// access points being added or removed stands for it. At most one per
/// `minimumEmissionInterval`, later ones are put off on the runtime's clock
/// (`SourceContext.schedule`). A `_nomap` network is reported like any other: the engine filters.
/// While running the source asks for a scan (`RequestScan({})`) at start and every
/// `scanInterval` seconds; NetworkManager refuses scans it thinks too frequent, or not allowed to
/// this user, which is normal and not reported.
///
/// Failures (our rules):
/// - No bus, NetworkManager not on it or not answering, NetworkManager leaving the bus, or the
///   bus connection breaking: a non-permanent `SourceError` (`.unavailable`, or `.disconnected`
///   once running) and a new attempt after 1 s, doubling up to 60 s (on the runtime's clock); a
///   successful start resets the delay.
/// - No Wi-Fi device (or none with the name), or the last one removed: a non-permanent
///   `SourceError` (`.unavailable`); the source keeps listening and starts again when a device is
///   added (`DeviceAdded`).
///
/// The connection belongs to one serial dispatch queue; a read dispatch source on its descriptor
/// drives `sd_bus_process`. Every call into the context is made on that queue, and `stop()` waits
/// for it, so nothing reaches the context after `stop()` returns.
package final class WifiSource: BusSource {
  /// The URL scheme, and the URL of the source that takes every Wi-Fi device: `"wifi"`.
  package static let scheme = "wifi"
  /// The first delay before reconnecting, in seconds; it doubles after each failure.
  package static let initialRetryDelay = 1.0
  /// The longest delay before reconnecting, in seconds.
  package static let maximumRetryDelay = 60.0
  /// How often the source asks NetworkManager for a scan while running, in seconds.
  package static let scanInterval = 30.0
  /// The shortest time between two emitted scans, in seconds.
  package static let minimumEmissionInterval = 1.0
  /// How long `isOnSystemBus()` and `RequestScan` wait for an answer, in microseconds.
  static let shortTimeout: UInt64 = 1_000_000

  /// What the source is: `wifi` or `wifi://<interface>`, 50 m, low power, scans and locations.
  package let descriptor: SourceDescriptor
  /// The wireless interface's name (`wlan0`), or nil for every Wi-Fi device.
  package let interface: String?

  /// The bus to use instead of the system bus, if any.
  private let busAddress: String?
  /// How long each method call waits, in microseconds.
  private let callTimeout: UInt64
  /// The runs: generations, the queue, the session and retries.
  let lifecycle = BusSourceLifecycle<Session>(
    label: "corelocation.wifi", initialDelay: WifiSource.initialRetryDelay,
    maximumDelay: WifiSource.maximumRetryDelay)
  /// The queue that owns the bus connection.
  private var queue: DispatchQueue { lifecycle.queue }

  /// A connection to NetworkManager, the dispatch source that drives it, the Wi-Fi devices in use
  /// and their access points, and the pending timers. Used on the source's queue only;
  /// `Session` is `Sendable` so that the state can hold it.
  final class Session: @unchecked Sendable {
    // Safe: every use of the stored properties happens on WifiSource.queue (serial).
    /// The connection to NetworkManager.
    let client: NetworkManagerClient
    /// The read dispatch source on the connection's descriptor.
    var reader: (any DispatchSourceRead)?
    /// The Wi-Fi devices in use and their access points.
    var table = WifiAccessPointTable()
    /// Each device's last `LastScan` (CLOCK_BOOTTIME milliseconds), by path.
    var lastScans: [String: Int] = [:]
    /// When the last scan was emitted, on the runtime's monotonic clock.
    var lastEmission: Double?
    /// A scan completed (or, without `LastScan`, the access points changed) in the announcements
    /// being handled: one emission when they have all been applied.
    var scanCompleted = false
    /// The emission put off until `minimumEmissionInterval` has passed, if any.
    var pendingEmission: (any Cancellable)?
    /// The next `RequestScan`.
    var scanTimer: (any Cancellable)?

    /// Creates a session on a connected client.
    init(client: NetworkManagerClient) {
      self.client = client
    }
  }

  /// Creates a source.
  /// - Parameters:
  ///   - interface: the wireless interface's name (`wlan0`); nil for every Wi-Fi device.
  ///   - busAddress: a D-Bus address (`unix:path=/run/x/bus`) to use instead of the system bus
  ///     (tests, private buses); nil for the system bus.
  package convenience init(interface: String? = nil, busAddress: String? = nil) {
    self.init(
      interface: interface, busAddress: busAddress, callTimeout: DBusConnection.defaultTimeout)
  }

  /// Creates a source whose method calls wait `callTimeout` microseconds (tests).
  init(interface: String?, busAddress: String?, callTimeout: UInt64) {
    self.interface = interface
    self.busAddress = busAddress
    self.callTimeout = callTimeout
    self.descriptor = SourceDescriptor(
      url: interface.map { "\(Self.scheme)://\($0)" } ?? Self.scheme, nominalAccuracy: 50,
      power: .low, producesLocation: true, producesScans: true)
  }

  /// Whether NetworkManager is on the system bus (`NameHasOwner`, 1 s timeout), for discovery.
  /// False when there is no system bus or nobody owns `org.freedesktop.NetworkManager`.
  package static func isOnSystemBus() -> Bool {
    isOnBus(busAddress: nil)
  }

  /// `isOnSystemBus()` on the bus at `busAddress` (nil: the system bus).
  static func isOnBus(busAddress: String?, timeout: UInt64 = shortTimeout) -> Bool {
    guard let client = try? NetworkManagerClient(address: busAddress, timeout: timeout) else {
      return false
    }
    defer { client.close() }
    return (try? client.serviceHasOwner(timeout: timeout)) ?? false
  }

  /// Starts a run: connects on the source's queue and emits into `context`.
  package func start(context: any SourceContext) { startRun(context) }

  /// Ends the run; nothing reaches the context once it returns.
  package func stop() { stopRun() }

  /// Connects, subscribes, reads NetworkManager's devices, attaches the reader, emits the first
  /// scan and asks for a new one. Runs on the queue.
  func connect(generation: Int) {
    guard let context = context(for: generation) else { return }
    let client: NetworkManagerClient
    do {
      client = try NetworkManagerClient(address: busAddress, timeout: callTimeout)
    } catch {
      retry(generation, context, Self.busUnreachable("wifi", bus: busAddress, error))
      return
    }
    let devicePaths: [String]
    do {
      try client.subscribe()
      devicePaths = try client.devices()
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
      retry(generation, context, SourceError(.disconnected, "wifi: \(error)", isPermanent: false))
      return
    }
    guard lifecycle.adopt(session, generation: generation) else {
      client.close()
      return
    }
    session.reader?.activate()
    guard setUp(session, devicePaths, generation, context) else { return }
    requestScans(session)
    scheduleScanRequest(session, generation, context)
    // Signals that arrived while NetworkManager was answering are already read: handle them.
    pump(session, generation: generation)
  }

  /// The message for a failed call to NetworkManager.
  private static func message(_ error: DBusError) -> String {
    if error.isNoOwner {
      return "wifi: NetworkManager is not on the system bus; start NetworkManager (systemctl "
        + "start NetworkManager; Debian: network-manager)"
    }
    if error.isTimeout { return "wifi: NetworkManager did not answer in time (\(error))" }
    return "wifi: \(error)"
  }

  /// The error for a call that failed while running: the session is lost.
  private static func lost(_ error: DBusError) -> SourceError {
    SourceError(
      error.name == nil ? .disconnected : .unavailable, message(error), isPermanent: false)
  }

  /// Whether a failed call means only that the object it asked about is gone (a device or an
  /// access point removed meanwhile), not that NetworkManager or the bus is.
  private static func objectGone(_ error: DBusError) -> Bool {
    error.name != nil && !error.isNoOwner && !error.isTimeout
  }

  /// Reads the devices at `devicePaths`, keeps the Wi-Fi ones and emits the first scan; reports
  /// a missing Wi-Fi device. Runs on the queue.
  /// - Returns: false when the session was lost (a failed call).
  private func setUp(
    _ session: Session, _ devicePaths: [String], _ generation: Int, _ context: any SourceContext
  ) -> Bool {
    var others: [String] = []
    for path in devicePaths {
      do {
        if let other = try addDevice(path, session) { others.append(other) }
      } catch {
        lose(session, generation, context, Self.lost(error))
        return false
      }
    }
    guard session.table.devicePaths.isEmpty else {
      emit(session, context)
      return true
    }
    let names = others.filter { !$0.isEmpty }.sorted().joined(separator: ", ")
    context.fail(
      SourceError(
        .unavailable,
        "wifi: NetworkManager has no Wi-Fi device\(interface.map { " named \($0)" } ?? "")"
          + (names.isEmpty ? "" : " (it has \(names))") + "; waiting for one",
        isPermanent: false))
    return true
  }

  /// Reads the device at `path` and, when it is a Wi-Fi device with the wanted name, adds it with
  /// its access points and `LastScan`. Runs on the queue.
  /// - Returns: nil when the device was added (or is gone or already known); otherwise its
  ///   interface name, for the message that says no Wi-Fi device was found.
  /// - Throws: `DBusError` when NetworkManager or the bus is lost.
  private func addDevice(_ path: String, _ session: Session) throws(DBusError) -> String? {
    guard !session.table.hasDevice(path) else { return nil }
    let device: [String: DBusValue]
    do {
      device = try session.client.properties(
        path: path, interface: NetworkManagerClient.deviceInterface)
    } catch  where Self.objectGone(error) {
      return nil
    }
    let name: String
    if case .string(let text) = device["Interface"] { name = text } else { name = "" }
    guard device["DeviceType"]?.integerValue == NetworkManagerClient.wifiDeviceType,
      interface == nil || interface == name
    else { return name }
    let accessPoints: [String]
    let wireless: [String: DBusValue]
    do {
      wireless = try session.client.properties(
        path: path, interface: NetworkManagerClient.wirelessInterface)
      accessPoints = try session.client.accessPoints(devicePath: path)
    } catch  where Self.objectGone(error) {
      return nil
    }
    session.table.addDevice(path)
    session.lastScans[path] = wireless["LastScan"]?.integerValue
    for accessPoint in accessPoints {
      try addAccessPoint(accessPoint, device: path, session)
    }
    return nil
  }

  /// Reads an access point's properties and adds it to the device at `devicePath`; an access
  /// point that is already gone is skipped. Runs on the queue.
  /// - Throws: `DBusError` when NetworkManager or the bus is lost.
  private func addAccessPoint(_ path: String, device devicePath: String, _ session: Session)
    throws(DBusError)
  {
    do {
      let properties = try session.client.properties(
        path: path, interface: NetworkManagerClient.accessPointInterface)
      session.table.add(device: devicePath, path: path, properties: properties)
    } catch  where Self.objectGone(error) {
      // Removed meanwhile: its AccessPointRemoved follows.
    }
  }

  /// Processes the connection and handles what NetworkManager announced. Runs on the queue.
  private func pump(_ session: Session, generation: Int) {
    guard let context = context(for: generation) else { return }
    drain(
      name: "wifi", service: "NetworkManager",
      pump: {
        let result = try session.client.pump()
        return (result.events, result.serviceVanished)
      },
      lose: { lose(session, generation, context, $0) },
      handle: { (event: NetworkManagerClient.Event) -> Bool in
        do throws(DBusError) {
          try handle(event, session, generation, context)
          return true
        } catch {
          lose(session, generation, context, Self.lost(error))
          return false
        }
      })
    // One emission for the scan the announcements completed, with all of them applied.
    guard session.scanCompleted, lifecycle.session === session,
      self.context(for: generation) != nil
    else { return }
    session.scanCompleted = false
    requestEmission(session, generation, context)
  }

  /// Handles one announcement. Runs on the queue.
  /// - Throws: `DBusError` when NetworkManager or the bus is lost.
  private func handle(
    _ event: NetworkManagerClient.Event, _ session: Session, _ generation: Int,
    _ context: any SourceContext
  ) throws(DBusError) {
    switch event {
    case .deviceAdded(let path):
      _ = try addDevice(path, session)
      if session.table.hasDevice(path) { requestEmission(session, generation, context) }
    case .deviceRemoved(let path):
      guard session.table.hasDevice(path) else { return }
      session.table.removeDevice(path)
      session.lastScans[path] = nil
      if session.table.devicePaths.isEmpty {
        context.fail(
          SourceError(
            .unavailable, "wifi: the Wi-Fi device was removed; waiting for one",
            isPermanent: false))
      } else {
        requestEmission(session, generation, context)
      }
    case .accessPointAdded(let device, let path):
      guard session.table.hasDevice(device) else { return }
      try addAccessPoint(path, device: device, session)
      if session.lastScans[device] == nil { session.scanCompleted = true }
    case .accessPointRemoved(let device, let path):
      if session.table.remove(device: device, path: path), session.lastScans[device] == nil {
        session.scanCompleted = true
      }
    case .propertiesChanged(let path, let changedInterface, let changed):
      if changedInterface == NetworkManagerClient.accessPointInterface {
        session.table.change(path: path, changed: changed)
      } else if changedInterface == NetworkManagerClient.wirelessInterface,
        session.table.hasDevice(path), let lastScan = changed["LastScan"]?.integerValue,
        session.lastScans[path] != lastScan
      {
        session.lastScans[path] = lastScan
        session.scanCompleted = true
      }
    }
  }

  /// Emits a scan now, or, when one was emitted less than `minimumEmissionInterval` ago, once
  /// that interval has passed (on the runtime's clock); nothing when one is already put off.
  /// Runs on the queue.
  private func requestEmission(
    _ session: Session, _ generation: Int, _ context: any SourceContext
  ) {
    guard session.pendingEmission == nil else { return }
    let elapsed = session.lastEmission.map { context.now.monotonic - $0 }
    guard let elapsed, elapsed < Self.minimumEmissionInterval else {
      emit(session, context)
      return
    }
    let queue = self.queue
    session.pendingEmission = context.schedule(after: Self.minimumEmissionInterval - elapsed) {
      queue.async { [self] in
        guard let context = self.context(for: generation), lifecycle.session === session else {
          return
        }
        session.pendingEmission = nil
        emit(session, context)
      }
    }
  }

  /// Emits the scan of every current access point of the devices in use. Runs on the queue.
  private func emit(_ session: Session, _ context: any SourceContext) {
    guard !session.table.devicePaths.isEmpty else { return }
    session.lastEmission = context.now.monotonic
    context.emitScan(
      WifiScan(
        time: context.now.wall, readings: session.table.readings, source: descriptor.url))
  }

  /// Asks each device in use for a scan. Refusals (too soon, not allowed, not authorised) and
  /// timeouts are normal and ignored; a broken connection shows up in the next `pump`. Runs on
  /// the queue.
  private func requestScans(_ session: Session) {
    for path in session.table.devicePaths {
      try? session.client.requestScan(
        devicePath: path, timeout: min(callTimeout, Self.shortTimeout))
    }
  }

  /// Plans the next `RequestScan` round in `scanInterval` seconds, on the runtime's clock. Runs
  /// on the queue.
  private func scheduleScanRequest(
    _ session: Session, _ generation: Int, _ context: any SourceContext
  ) {
    let queue = self.queue
    session.scanTimer = context.schedule(after: Self.scanInterval) {
      queue.async { [self] in
        guard let context = self.context(for: generation), lifecycle.session === session else {
          return
        }
        requestScans(session)
        scheduleScanRequest(session, generation, context)
      }
    }
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

  /// Cancels the session's timers and closes the connection. Runs on the queue.
  func close(_ session: Session) {
    session.pendingEmission?.cancel()
    session.pendingEmission = nil
    session.scanTimer?.cancel()
    session.scanTimer = nil
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
