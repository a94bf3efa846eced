import Dispatch
import Foundation
import Geodesy
import LocationModel

/// `geoclue`: positions from GeoClue2, the desktop location service, over D-Bus on the system bus.
///
/// The source talks to GeoClue through sd-bus on its own connection (`sd_bus_open_system`, which
/// honours `DBUS_SYSTEM_BUS_ADDRESS`): `Manager.GetClient`, then the client's `DesktopId`,
/// `RequestedAccuracyLevel` and `DistanceThreshold` (0), a subscription to `LocationUpdated`, and
/// `Start`. For every update it reads the new Location object's properties
/// (`org.freedesktop.DBus.Properties.GetAll`) and emits a `Fix`:
///
/// - `Accuracy` becomes `horizontalAccuracy` unchanged (GeoClue's accuracy is a radius in metres,
///   in coarse steps; -1, unknown, marks the coordinate invalid as Apple's negative accuracy does),
/// - `Altitude` becomes `altitude` (above mean sea level); GeoClue's unknown, `-DBL_MAX`, is nil,
/// - `Speed` and `Heading` become `speed` and `course`; GeoClue's unknown, -1, stays -1,
/// - `Timestamp` (seconds, microseconds) becomes `time`; without one, the runtime's clock,
/// - `quality` is `.network` and `source` is `"geoclue"`.
///
/// Failures (our rules):
/// - GeoClue refuses the client (`Start` answers `org.freedesktop.DBus.Error.AccessDenied`: the
///   desktop id is `allowed=false` in `/etc/geoclue/geoclue.conf`, or no agent authorised it): one
///   permanent `SourceError` with code `.unavailable` and a message starting with
///   `GeoClueSource.accessDeniedPrefix` ("geoclue: access denied"). Nothing is retried.
/// - No system bus, GeoClue not on it, GeoClue not answering (GeoClue 2.6 holds `GetClient` until a
///   location agent runs for the caller's user), or GeoClue leaving the bus while the source runs:
///   a non-permanent `SourceError` (`.unavailable`, or `.disconnected` when a running client was
///   lost) and a new attempt after 1 s, doubling up to 60 s; a successful `Start` resets the delay.
///
/// The bus connection belongs to one serial dispatch queue; a read dispatch source on its file
/// descriptor drives `sd_bus_process`. Every call into the context is made on that queue, and
/// `stop()` waits for it, so nothing reaches the context after `stop()` returns. Method calls are
/// synchronous on that queue with a 5 s timeout (`Stop`: 1 s), which bounds how long `stop()` can
/// wait for an unresponsive GeoClue.
package final class GeoClueSource: BusSource {
  /// GeoClue's accuracy levels (`GClueAccuracyLevel`), the `RequestedAccuracyLevel` values.
  package enum AccuracyLevel: UInt32, Sendable, CaseIterable {
    /// Country level.
    case country = 1
    /// City level.
    case city = 4
    /// Neighbourhood level.
    case neighborhood = 5
    /// Street level.
    case street = 6
    /// Exact: typically a GNSS receiver.
    case exact = 8

    /// The level to request for a desired accuracy in metres (Apple's `desiredAccuracy`).
    ///
    /// Our rule, from GeoClue's own accuracy figures (geocode-glib: street 1 km, city 15 km,
    /// country 300 km): a negative value (Apple's "best" constants) or up to 100 m asks for
    /// `.exact`; up to 1 km `.street`; up to 5 km (`kCLLocationAccuracyThreeKilometers`, reduced
    /// accuracy) `.neighborhood`; up to 15 km `.city`; more, or NaN, `.country`.
    /// - Parameter metres: the desired horizontal accuracy.
    /// - Returns: the level to request.
    package static func forDesiredAccuracy(_ metres: Double) -> AccuracyLevel {
      if metres.isNaN { return .country }
      if metres <= 100 { return .exact }
      if metres <= 1_000 { return .street }
      if metres <= 5_000 { return .neighborhood }
      if metres <= 15_000 { return .city }
      return .country
    }

    /// The nominal accuracy, in metres, of fixes at this level (for source arbitration).
    package var nominalAccuracy: Double {
      switch self {
      case .exact: 10
      case .street: 1_000
      case .neighborhood: 5_000
      case .city: 15_000
      case .country: 300_000
      }
    }
  }

  /// The start of the message of the error reported when GeoClue refuses the client; the
  /// runtime can recognise a denial by it (together with `isPermanent`).
  package static let accessDeniedPrefix = "geoclue: access denied"
  /// The first delay before reconnecting, in seconds; it doubles after each failure.
  package static let initialRetryDelay = 1.0
  /// The longest delay before reconnecting, in seconds.
  package static let maximumRetryDelay = 60.0

  package let descriptor: SourceDescriptor
  /// The desktop id the client announces to GeoClue (GeoClue's per-application permission key).
  package let desktopId: String
  /// The accuracy level the client requests.
  package let accuracyLevel: AccuracyLevel

  private let busAddress: String?
  private let callTimeout: UInt64
  let lifecycle = BusSourceLifecycle<Session>(
    label: "corelocation.geoclue", initialDelay: GeoClueSource.initialRetryDelay,
    maximumDelay: GeoClueSource.maximumRetryDelay)
  /// The queue that owns the bus connection.
  private var queue: DispatchQueue { lifecycle.queue }

  /// A started client and the dispatch source that drives its connection. Both are used on the
  /// source's queue only; `Session` is `Sendable` so that the state can hold it.
  final class Session: @unchecked Sendable {
    // Safe: every use of `client` and `reader` happens on GeoClueSource.queue (serial).
    let client: GeoClueClient
    var reader: (any DispatchSourceRead)?
    /// The client object's path (a copy, readable from any thread).
    let clientPath: String?

    init(client: GeoClueClient) {
      self.client = client
      self.clientPath = client.clientPath
    }
  }

  /// The path of the running client object on GeoClue's side, if one is running (for tests).
  var clientPath: String? { lifecycle.session?.clientPath }

  /// Creates the source with the default desktop id (`defaultDesktopId()`), the exact accuracy
  /// level, on the system bus.
  package convenience init() {
    self.init(accuracyLevel: .exact)
  }

  /// Creates a source.
  /// - Parameters:
  ///   - accuracyLevel: the level to request (`AccuracyLevel.forDesiredAccuracy(_:)` maps Apple's
  ///     desired accuracy to one).
  ///   - desktopId: the id GeoClue checks permissions against; `defaultDesktopId()` when nil.
  ///   - busAddress: a D-Bus address (`unix:path=/run/x/bus`) to use instead of the system bus
  ///     (tests, private buses).
  package convenience init(
    accuracyLevel: AccuracyLevel, desktopId: String? = nil, busAddress: String? = nil
  ) {
    self.init(
      accuracyLevel: accuracyLevel, desktopId: desktopId, busAddress: busAddress,
      callTimeout: DBusConnection.defaultTimeout)
  }

  /// Creates a source whose method calls wait `callTimeout` microseconds (tests).
  init(accuracyLevel: AccuracyLevel, desktopId: String?, busAddress: String?, callTimeout: UInt64) {
    self.callTimeout = callTimeout
    self.accuracyLevel = accuracyLevel
    self.desktopId = desktopId ?? Self.defaultDesktopId()
    self.busAddress = busAddress
    self.descriptor = SourceDescriptor(
      url: SourceURL.geoclue.text, nominalAccuracy: accuracyLevel.nominalAccuracy, power: .low)
  }

  /// The application's identifier for GeoClue: the last path component of `CORELOCATION_APP_ID`
  /// (without a `.desktop` suffix), else the executable's name, else `"corelocation"`.
  /// - Parameters:
  ///   - environment: the environment to read (the process's by default).
  ///   - executablePath: the program's path (`argv[0]` by default).
  /// - Returns: a non-empty desktop id.
  /// Whether GeoClue's name (`org.freedesktop.GeoClue2`) has an owner on the system bus now
  /// (discovery). False when there is no system bus.
  package static func isOnSystemBus() -> Bool {
    guard let connection = try? DBusConnection(address: nil) else { return false }
    return (try? connection.nameHasOwner("org.freedesktop.GeoClue2")) ?? false
  }

  package static func defaultDesktopId(
    environment: [String: String] = ProcessInfo.processInfo.environment,
    executablePath: String? = CommandLine.arguments.first
  ) -> String {
    func lastComponent(_ text: String) -> String? {
      var name = String(text.split(separator: "/").last ?? "")
      if name.hasSuffix(".desktop") { name.removeLast(".desktop".count) }
      return name.isEmpty ? nil : name
    }
    if let id = environment["CORELOCATION_APP_ID"].flatMap(lastComponent) { return id }
    if let name = executablePath.flatMap(lastComponent) { return name }
    return "corelocation"
  }

  package func start(context: any SourceContext) { startRun(context) }

  package func stop() { stopRun() }

  /// Connects, starts a client and attaches the reader. Runs on the queue.
  func connect(generation: Int) {
    guard let context = context(for: generation) else { return }
    let client: GeoClueClient
    do {
      client = try GeoClueClient(address: busAddress, timeout: callTimeout)
    } catch {
      retry(generation, context, Self.busUnreachable("geoclue", bus: busAddress, error))
      return
    }
    do {
      try client.start(
        desktopId: desktopId, accuracyLevel: accuracyLevel.rawValue, distanceThreshold: 0)
    } catch {
      client.close()
      if error.isAccessDenied {
        guard self.context(for: generation) != nil else { return }
        context.fail(
          SourceError(
            .denied,
            "\(Self.accessDeniedPrefix): GeoClue refused the desktop id '\(desktopId)' (\(error)); "
              + "allow it in /etc/geoclue/geoclue.conf ([\(desktopId)] allowed=true) or run a "
              + "GeoClue agent that authorises it",
            isPermanent: true))
      } else if error.isNoOwner {
        retry(
          generation, context,
          SourceError(
            .unavailable,
            "geoclue: GeoClue is not running on the bus (\(GeoClueClient.service) has no owner); "
              + "install and start GeoClue (Debian: geoclue-2.0)",
            isPermanent: false))
      } else if error.isTimeout {
        // GeoClue 2.6 holds GetClient until a location agent registers for the caller's user.
        retry(
          generation, context,
          SourceError(
            .unavailable,
            "geoclue: GeoClue did not answer in time (\(error)); GeoClue answers GetClient only "
              + "once a location agent runs for this user (the desktop's, or "
              + "/usr/libexec/geoclue-2.0/demos/agent)",
            isPermanent: false))
      } else {
        retry(
          generation, context,
          SourceError(.unavailable, "geoclue: \(error)", isPermanent: false))
      }
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
      retry(
        generation, context, SourceError(.disconnected, "geoclue: \(error)", isPermanent: false))
      return
    }
    let current = lifecycle.adopt(session, generation: generation)
    guard current else {
      client.close()
      return
    }
    session.reader?.activate()
    // Signals that arrived while `Start` was being answered are already read: handle them now.
    pump(session, generation: generation)
  }

  /// Processes the connection and emits the fixes it produced. Runs on the queue.
  private func pump(_ session: Session, generation: Int) {
    guard let context = context(for: generation) else { return }
    let result: GeoClueClient.PumpResult
    do {
      result = try session.client.pump()
    } catch {
      lose(session, generation, context, "geoclue: the bus connection broke (\(error))")
      return
    }
    for properties in result.locations {
      guard let fix = Self.fix(from: properties, now: context.now.wall) else { continue }
      context.emit(fix)
    }
    if result.serviceVanished {
      lose(session, generation, context, "geoclue: GeoClue left the bus; reconnecting")
    }
  }

  /// Drops a running session and reconnects later. Runs on the queue.
  private func lose(
    _ session: Session, _ generation: Int, _ context: any SourceContext, _ message: String
  ) {
    let current = lifecycle.drop(session, generation: generation)
    close(session)
    guard current else { return }
    retry(generation, context, SourceError(.disconnected, message, isPermanent: false))
  }

  /// Stops the client and closes its connection. Runs on the queue.
  func close(_ session: Session) {
    session.client.stop()
    guard let reader = session.reader else {
      session.client.close()
      return
    }
    session.reader = nil
    // The descriptor belongs to the connection: close it only once the reader is cancelled.
    reader.setCancelHandler { session.client.close() }
    reader.cancel()
  }

  /// Maps the properties of a GeoClue Location object to a fix; nil without a coordinate.
  /// - Parameters:
  ///   - properties: the answer of `GetAll` on `org.freedesktop.GeoClue2.Location`.
  ///   - now: the wall-clock time to use when the object has no `Timestamp`.
  /// - Returns: the fix, or nil when latitude or longitude is missing.
  static func fix(from properties: [String: DBusValue], now: Double) -> Fix? {
    guard let latitude = properties["Latitude"]?.doubleValue,
      let longitude = properties["Longitude"]?.doubleValue
    else { return nil }
    var time = now
    if case .structure(let fields) = properties["Timestamp"], fields.count == 2,
      let seconds = fields[0].doubleValue, let microseconds = fields[1].doubleValue
    {
      time = seconds + microseconds / 1_000_000
    }
    let accuracy = properties["Accuracy"]?.doubleValue ?? -1
    var altitude = properties["Altitude"]?.doubleValue
    if let value = altitude, !value.isFinite || value <= -Double.greatestFiniteMagnitude {
      altitude = nil
    }
    let speed = properties["Speed"]?.doubleValue ?? -1
    let heading = properties["Heading"]?.doubleValue ?? -1
    return Fix(
      latitude: latitude, longitude: longitude, altitude: altitude,
      horizontalAccuracy: accuracy.isFinite && accuracy >= 0 ? accuracy : -1,
      speed: speed.isFinite && speed >= 0 ? speed : -1,
      course: heading.isFinite && heading >= 0 ? heading : -1,
      time: time, quality: .network, source: "geoclue")
  }
}
