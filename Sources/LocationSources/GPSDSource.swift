import Geodesy
import LocationFormats
import LocationModel
import Synchronization

/// `gpsd://host:port` and `gpsd:///path/to/socket`: fixes from gpsd's JSON protocol
/// (gpsd_json(5)).
///
/// On each connection the source sends `?WATCH={"enable":true,"json":true};`, checks the
/// `VERSION` object gpsd sends first, and turns every `TPV` report into a `Fix`
/// (`GPSDTPV.fix(receivedAt:source:)`: `eph` times 0.617 for the 68 % radius, `epv`, `eps` and
/// `epd` times 0.5102, defaults when `eph` is missing).
///
/// Rules (ours):
/// - **Protocol version.** A `VERSION` whose `proto_major` is not 3 is refused with a permanent
///   `SourceError(.unavailable, ...)` and the source stops. A stream without `VERSION` is read
///   anyway.
/// - **Reports.** `TPV` with `mode` 0 or 1 gives nothing. gpsd may send several `TPV`s for one
///   epoch while it learns the receiver's cycle; each valid one is delivered, except one whose
///   time, latitude and longitude equal the last delivered fix's. Other classes (`SKY`, `ATT`,
///   `DEVICES`, `DEVICE`, `WATCH`, `ERROR`, ...) and garbage lines are counted in `statistics`
///   and never stop the stream; lines over 64 KiB are discarded.
/// - **Outages.** When gpsd is not there or goes away, the source reports
///   `SourceError(.disconnected, "gpsd at HOST:PORT: reason", isPermanent: false)` once per
///   outage and reconnects after 0.5 s, doubling to at most 30 s, on the runtime's clock
///   (`ReconnectingStream`).
/// - gpsd itself listens on TCP only (its `-F` socket is a control socket, not this protocol); a
///   Unix socket endpoint is for relays of the JSON protocol (`socat UNIX-LISTEN:... TCP:...`).
///
/// Descriptor: nominal accuracy 5 m, power `.high` (a receiver kept tracking).
package final class GPSDSource: LocationSource {
  /// The protocol version this source speaks (`proto_major`).
  package static let protocolMajor = 3
  /// The command sent on each connection.
  package static let watchCommand = #"?WATCH={"enable":true,"json":true};"# + "\n"

  /// What the source is: its URL, nominal accuracy 5 m, power `.high`.
  package let descriptor: SourceDescriptor
  private let endpoint: SourceURL.Endpoint
  private let running = Mutex<(stream: ReconnectingStream?, session: GPSDSession?)>((nil, nil))
  private let lastStatistics = Mutex(GPSDStatistics())

  /// Creates a source for a gpsd endpoint; nothing is opened before `start`.
  /// - Parameter endpoint: TCP host and port (gpsd's default is 127.0.0.1:2947) or a Unix socket.
  package init(endpoint: SourceURL.Endpoint) {
    self.endpoint = endpoint
    descriptor = SourceDescriptor(
      url: SourceURL.gpsd(endpoint).text, nominalAccuracy: 5, power: .high, producesHeading: true)
  }

  /// "gpsd at 127.0.0.1:2947" or "gpsd at /run/gpsd.sock": how messages name this source.
  package var name: String {
    switch endpoint {
    case .tcp(let host, let port):
      return "gpsd at \(host.contains(":") ? "[\(host)]" : host):\(port)"
    case .unix(let path):
      return "gpsd at \(path)"
    }
  }

  /// What the decoder has seen on the current (or last) run: reports per class, garbage lines,
  /// invalid members.
  package var statistics: GPSDStatistics {
    if let session = running.withLock({ $0.session }) { return session.statistics }
    return lastStatistics.withLock { $0 }
  }

  /// Starts connecting (a running source is stopped first); fixes, and a failure per outage, go
  /// to `context`.
  /// - Parameter context: where fixes and failures go, and whose clock times the retries.
  package func start(context: any SourceContext) {
    stop()
    let session = GPSDSession(name: name, source: descriptor.url)
    let streamEndpoint: StreamEndpoint
    switch endpoint {
    case .tcp(let host, let port): streamEndpoint = .tcp(host: host, port: port)
    case .unix(let path): streamEndpoint = .unix(path: path)
    }
    let stream = ReconnectingStream(
      name: name, endpoint: streamEndpoint, handler: session, context: context)
    running.withLock { $0 = (stream, session) }
    stream.start()
  }

  /// Closes the connection and cancels a pending retry; when it returns, nothing more reaches the
  /// context.
  package func stop() {
    let (stream, session) = running.withLock { running in
      defer { running = (nil, nil) }
      return running
    }
    stream?.stop()
    if let session { lastStatistics.withLock { $0 = session.statistics } }
  }
}

/// One run of `GPSDSource`: the decoder and the duplicate filter, used on the stream's queue.
final class GPSDSession: StreamProtocol, Sendable {
  private struct State {
    var decoder = GPSDDecoder()
    var lastDelivered: (time: Double, latitude: Double, longitude: Double)?
  }

  private let name: String
  private let source: String
  // A Mutex although only the stream's queue changes it: `statistics` is read from elsewhere.
  private let state = Mutex(State())

  init(name: String, source: String) {
    self.name = name
    self.source = source
  }

  var statistics: GPSDStatistics { state.withLock { $0.decoder.statistics } }

  func opened() -> [UInt8] {
    state.withLock { $0.decoder.reset() }
    return Array(GPSDSource.watchCommand.utf8)
  }

  func received(_ bytes: UnsafeRawBufferPointer, now: EngineInstant) -> StreamEvents {
    state.withLock { state in
      var events = StreamEvents()
      for message in state.decoder.decode(bytes: bytes) {
        switch message {
        case .version(let version):
          guard let major = version.protocolMajor, major != GPSDSource.protocolMajor else {
            continue
          }
          let minor = version.protocolMinor.map { ".\($0)" } ?? ""
          events.failure = SourceError(
            .unavailable,
            "\(name) speaks protocol \(major)\(minor) (release \(version.release ?? "unknown"));"
              + " this source needs protocol \(GPSDSource.protocolMajor).x",
            isPermanent: true)
          return events
        case .tpv(let report):
          guard let fix = report.fix(receivedAt: now.wall, source: source) else { continue }
          if let last = state.lastDelivered, last.time == fix.time,
            last.latitude == fix.latitude, last.longitude == fix.longitude
          {
            continue
          }
          state.lastDelivered = (fix.time, fix.latitude, fix.longitude)
          events.fixes.append(fix)
        case .attitude(let attitude):
          // ATT: `heading` is true, `mheading` magnetic (gpsd's own magnetic figure is not used
          // for true heading: the World Magnetic Model gives the declination). gpsd's magnetometer
          // components are in sensor units, so they are not passed on as microtesla.
          let sample = HeadingSample(
            time: attitude.time ?? now.wall,
            magneticHeading: attitude.magneticHeading.flatMap { $0.isFinite ? $0 : nil },
            trueHeading: attitude.heading.flatMap { $0.isFinite ? $0 : nil }, accuracy: -1,
            source: source)
          if sample.magneticHeading != nil || sample.trueHeading != nil {
            events.headings.append(sample)
          }
        case .sky, .error, .other:
          continue
        }
      }
      return events
    }
  }

  /// Decodes `bytes` (the last read's) again on a copy of the decoder (`GPSDDecoder.rehearsal`)
  /// and returns their fixes for the context's rehearsal (`SourceContext.rehearse`): the wake-up
  /// before an epoch (`EpochLead`) warms the decoding and the delivery. The decoder, its
  /// statistics and the duplicate filter are untouched.
  func rehearse(_ bytes: UnsafeRawBufferPointer, now: EngineInstant) -> [Fix] {
    var copy = state.withLock { $0.decoder.rehearsal }
    return copy.decode(bytes: bytes).compactMap { message in
      guard case .tpv(let report) = message else { return nil }
      return report.fix(receivedAt: now.wall, source: source)
    }
  }

  func closed(now: EngineInstant) -> StreamEvents {
    state.withLock { _ = $0.decoder.finish() }
    return StreamEvents()
  }
}
