import Dispatch
import Foundation
import Geodesy
import LocationModel

/// `iio-compass`: magnetic headings from iio-sensor-proxy's compass over D-Bus on the system bus.
///
/// The source talks to iio-sensor-proxy (`net.hadess.SensorProxy`) through sd-bus on its own
/// connection (`sd_bus_open_system`, which honours `DBUS_SYSTEM_BUS_ADDRESS`, or the address given
/// to `init(busAddress:)`). On start it reads `HasCompass` on `/net/hadess/SensorProxy/Compass`
/// (interface `net.hadess.SensorProxy.Compass`), subscribes to
/// `org.freedesktop.DBus.Properties.PropertiesChanged` on that object, calls `ClaimCompass` and
/// reads `CompassHeading`. Each heading (degrees clockwise from magnetic north) becomes a
/// `HeadingSample` with `magneticHeading` set, `time` the runtime's wall clock, `accuracy` -1
/// (iio-sensor-proxy reports none) and `source` `"iio-compass"`.
///
/// The claim (which powers the sensor) is held only while the source runs: `stop()` calls
/// `ReleaseCompass` and closes the connection (iio-sensor-proxy also drops the claims of a
/// connection that closes).
///
/// Our rules:
/// - A heading equal to the one emitted just before it is not emitted again (iio-sensor-proxy
///   announces only changes; the equal value is the initial read meeting the claim's own change).
/// - `HasCompass` false: one permanent `SourceError` (`.unavailable`, "no compass"); no retry.
/// - No bus, iio-sensor-proxy not on it, not answering, or leaving the bus while the source runs:
///   a non-permanent `SourceError` (`.unavailable`, or `.disconnected` when a running claim was
///   lost) and a new attempt after 1 s, doubling up to 60 s (on the runtime's clock, through
///   `SourceContext.schedule`); a successful claim resets the delay.
///
/// The connection belongs to one serial dispatch queue; a read dispatch source on its descriptor
/// drives `sd_bus_process`. Every call into the context is made on that queue, and `stop()` waits
/// for it, so nothing reaches the context after `stop()` returns. Method calls wait at most 5 s
/// (`ReleaseCompass`: 1 s).
package final class IIOCompassSource: BusSource {
  /// The source's URL, `"iio-compass"`.
  package static let url = "iio-compass"
  /// The first delay before reconnecting, in seconds; it doubles after each failure.
  package static let initialRetryDelay = 1.0
  /// The longest delay before reconnecting, in seconds.
  package static let maximumRetryDelay = 60.0

  package let descriptor: SourceDescriptor

  private let busAddress: String?
  private let callTimeout: UInt64
  let lifecycle = BusSourceLifecycle<Session>(
    label: "corelocation.iio-compass", initialDelay: IIOCompassSource.initialRetryDelay,
    maximumDelay: IIOCompassSource.maximumRetryDelay)
  /// The queue that owns the bus connection.
  private var queue: DispatchQueue { lifecycle.queue }

  /// A claimed compass and the dispatch source that drives its connection. Both are used on the
  /// source's queue only; `Session` is `Sendable` so that the state can hold it.
  final class Session: @unchecked Sendable {
    // Safe: every use of `client`, `reader` and `lastHeading` happens on IIOCompassSource.queue.
    let client: IIOCompassClient
    var reader: (any DispatchSourceRead)?
    var lastHeading: Double?

    init(client: IIOCompassClient) {
      self.client = client
    }
  }

  /// Whether the source holds a claim now (for tests).
  var isClaimed: Bool { lifecycle.session != nil }

  /// Creates a source.
  /// - Parameter busAddress: a D-Bus address (`unix:path=/run/x/bus`) to use instead of the system
  ///   bus (tests, private buses); nil for the system bus.
  package convenience init(busAddress: String? = nil) {
    self.init(busAddress: busAddress, callTimeout: DBusConnection.defaultTimeout)
  }

  /// Creates a source whose method calls wait `callTimeout` microseconds (tests).
  init(busAddress: String?, callTimeout: UInt64) {
    self.busAddress = busAddress
    self.callTimeout = callTimeout
    self.descriptor = SourceDescriptor(
      url: Self.url, nominalAccuracy: .infinity, power: .low, producesLocation: false,
      producesHeading: true)
  }

  /// Whether iio-sensor-proxy is on the system bus with a compass now (discovery):
  /// `NameHasOwner("net.hadess.SensorProxy")` and `HasCompass` true. False when there is no system
  /// bus.
  /// - Returns: true when a compass can be claimed.
  package static func isOnSystemBus() -> Bool {
    isOnBus(address: nil)
  }

  /// `isOnSystemBus()` on the bus at `address` (nil: the system bus), each call waiting at most
  /// `timeout` microseconds.
  static func isOnBus(address: String?, timeout: UInt64 = 1_000_000) -> Bool {
    guard let client = try? IIOCompassClient(address: address, timeout: timeout) else {
      return false
    }
    defer { client.close() }
    guard (try? client.isServiceRunning()) == true else { return false }
    return (try? client.hasCompass()) == true
  }

  package func start(context: any SourceContext) { startRun(context) }

  package func stop() { stopRun() }

  /// Connects, checks for a compass, claims it and attaches the reader. Runs on the queue.
  func connect(generation: Int) {
    guard let context = context(for: generation) else { return }
    let client: IIOCompassClient
    do {
      client = try IIOCompassClient(address: busAddress, timeout: callTimeout)
    } catch {
      retry(generation, context, Self.busUnreachable("iio-compass", bus: busAddress, error))
      return
    }
    let initial: Double
    do {
      guard try client.hasCompass() else {
        client.close()
        guard self.context(for: generation) != nil else { return }
        context.fail(
          SourceError(
            .unavailable, "iio-compass: iio-sensor-proxy reports no compass (HasCompass is false)",
            isPermanent: true))
        return
      }
      try client.claim()
      initial = try client.heading()
    } catch {
      client.close()
      let message =
        if error.isNoOwner {
          "iio-compass: iio-sensor-proxy is not running on the bus (\(IIOCompassClient.service) "
            + "has no owner); install and start it (Debian: iio-sensor-proxy)"
        } else if error.isTimeout {
          "iio-compass: iio-sensor-proxy did not answer in time (\(error))"
        } else {
          "iio-compass: \(error)"
        }
      retry(generation, context, SourceError(.unavailable, message, isPermanent: false))
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
        generation, context,
        SourceError(.disconnected, "iio-compass: \(error)", isPermanent: false))
      return
    }
    let current = lifecycle.adopt(session, generation: generation)
    guard current else {
      client.close()
      return
    }
    session.reader?.activate()
    emit(initial, session, context)
    // Changes that arrived while `ClaimCompass` was being answered are already read: handle them.
    pump(session, generation: generation)
  }

  /// Processes the connection and emits the headings it produced. Runs on the queue.
  private func pump(_ session: Session, generation: Int) {
    guard let context = context(for: generation) else { return }
    let result: IIOCompassClient.PumpResult
    do {
      result = try session.client.pump()
    } catch {
      lose(session, generation, context, "iio-compass: the bus connection broke (\(error))")
      return
    }
    for heading in result.headings { emit(heading, session, context) }
    if result.serviceVanished {
      lose(session, generation, context, "iio-compass: iio-sensor-proxy left the bus; reconnecting")
    }
  }

  /// Emits one heading unless it repeats the previous one. Runs on the queue.
  private func emit(_ heading: Double, _ session: Session, _ context: any SourceContext) {
    guard heading.isFinite, heading != session.lastHeading else { return }
    session.lastHeading = heading
    context.emitHeading(
      HeadingSample(
        time: context.now.wall, magneticHeading: heading, accuracy: -1, source: descriptor.url))
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

  /// Releases the claim and closes the connection. Runs on the queue.
  func close(_ session: Session) {
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
