import Geodesy
import LocationFormats
import LocationModel
import Synchronization

/// `nmea:///dev/ttyUSB0?baud=9600` and `nmea+tcp://host:port`: fixes from a live NMEA 0183
/// stream, a serial device (or pseudo-terminal) or a TCP server (a marine multiplexer, a
/// `socat` relay).
///
/// A serial device is opened with `O_NOCTTY` in raw mode at the given baud rate (termios:
/// `cfmakeraw`, `cfsetispeed`/`cfsetospeed`, `CLOCAL | CREAD`, `VMIN` 1, `VTIME` 0; see
/// `SerialPort`). The bytes go through `NMEADecoder`'s streaming API; its `.fix` outputs are
/// emitted (an epoch is complete, and its fix emitted, when the next epoch's first sentence
/// arrives, or when the stream ends).
///
/// Rules (ours):
/// - **Dates.** A fix the decoder could not date (a receiver that sends no RMC or ZDA) is dated
///   with the runtime's clock: the day that puts its time of day within 12 hours of now.
/// - **Outages.** When the device disappears (unplugged, `EIO`), cannot be opened, or the TCP
///   peer closes, the source reports `SourceError(.disconnected, "NAME: reason",
///   isPermanent: false)` once per outage and reopens it after 0.5 s, doubling to at most 30 s,
///   on the runtime's clock. Each new connection starts with a fresh decoder.
/// - A path that is a regular file is refused for good (`replay://` plays files).
///
/// Descriptor: nominal accuracy 5 m, power `.high`.
package final class NMEAStreamSource: LocationSource {
  /// What the source is: its URL, nominal accuracy 5 m, power `.high`.
  package let descriptor: SourceDescriptor
  private let endpoint: StreamEndpoint
  private let running = Mutex<(stream: ReconnectingStream?, session: NMEASession?)>((nil, nil))
  private let lastStatistics = Mutex(NMEAStatistics())

  /// Creates a source for a serial device or pseudo-terminal.
  /// - Parameters:
  ///   - serialPath: the device, as `/dev/ttyUSB0`.
  ///   - baud: the baud rate, one of `SourceURL.baudRates` (NMEA 0183 uses 4800).
  package init(serialPath: String, baud: Int) {
    endpoint = .serial(path: serialPath, baud: baud)
    descriptor = SourceDescriptor(
      url: SourceURL.nmeaSerial(path: serialPath, baud: baud).text, nominalAccuracy: 5,
      power: .high, producesHeading: true)
  }

  /// Creates a source for a TCP server that sends NMEA 0183.
  /// - Parameters:
  ///   - host: a host name or address.
  ///   - port: the TCP port (10110 is the registered NMEA-0183 port).
  package init(host: String, port: Int) {
    endpoint = .tcp(host: host, port: port)
    descriptor = SourceDescriptor(
      url: SourceURL.nmeaTCP(host: host, port: port).text, nominalAccuracy: 5, power: .high,
      producesHeading: true)
  }

  /// "NMEA device /dev/ttyUSB0" or "NMEA server at host:port": how messages name this source.
  package var name: String {
    switch endpoint {
    case .serial(let path, _): return "NMEA device \(path)"
    case .tcp(let host, let port):
      return "NMEA server at \(host.contains(":") ? "[\(host)]" : host):\(port)"
    case .unix(let path): return "NMEA socket \(path)"
    }
  }

  /// What the decoder has seen on the current connection (or the last one).
  package var statistics: NMEAStatistics {
    if let session = running.withLock({ $0.session }) { return session.statistics }
    return lastStatistics.withLock { $0 }
  }

  /// Starts connecting (a running source is stopped first); fixes, and a failure per outage, go
  /// to `context`.
  /// - Parameter context: where fixes and failures go, and whose clock times the retries.
  package func start(context: any SourceContext) {
    stop()
    let session = NMEASession(source: descriptor.url)
    let stream = ReconnectingStream(
      name: name, endpoint: endpoint, handler: session, context: context)
    running.withLock { $0 = (stream, session) }
    stream.start()
  }

  /// The running stream, if any.
  var stream: ReconnectingStream? { running.withLock { $0.stream } }

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

/// One run of `NMEAStreamSource`: the decoder of the current connection.
final class NMEASession: StreamProtocol, Sendable {
  private let source: String
  // A Mutex although only the stream's queue changes it: `statistics` is read from elsewhere.
  private let decoder: Mutex<NMEADecoder>

  init(source: String) {
    self.source = source
    decoder = Mutex(NMEADecoder(options: .init(source: source, reportsAtCycleEnd: true)))
  }

  var statistics: NMEAStatistics { decoder.withLock { $0.statistics } }

  func opened() -> [UInt8] {
    decoder.withLock { $0 = NMEADecoder(options: .init(source: source, reportsAtCycleEnd: true)) }
    return []
  }

  func received(_ bytes: UnsafeRawBufferPointer, now: EngineInstant) -> StreamEvents {
    let readTime = LatencyTrace.isOn ? LatencyTrace.now() : 0
    let outputs = decoder.withLock { $0.decode(bytes: bytes) }
    let events = Self.events(outputs, now: now, source: source)
    if LatencyTrace.isOn {
      for fix in events.fixes {
        LatencyTrace.mark(.read, fixTime: fix.time, at: readTime)
        LatencyTrace.mark(.decoded, fixTime: fix.time)
      }
    }
    return events
  }

  /// Decodes `bytes` (the last read's) again, as new, with a copy of the decoder
  /// (`NMEADecoder.rehearsal`), and drops what it gives: the decoder's code and tables are then
  /// fresh in the processor's caches when the next epoch comes (the wake-up before an epoch,
  /// `EpochLead`). The decoder itself, its partial line and its statistics, are untouched.
  /// - Returns: the fixes decoded, for the context's rehearsal (`SourceContext.rehearse`).
  func rehearse(_ bytes: UnsafeRawBufferPointer, now: EngineInstant) -> [Fix] {
    var copy = decoder.withLock { $0.rehearsal }
    return Self.events(copy.decode(bytes: bytes), now: now, source: source).fixes
  }

  func closed(now: EngineInstant) -> StreamEvents {
    let outputs = decoder.withLock { $0.finish() }
    return Self.events(outputs, now: now, source: source)
  }

  static func events(_ outputs: [NMEAOutput], now: EngineInstant, source: String = "")
    -> StreamEvents
  {
    var events = StreamEvents()
    for output in outputs {
      switch output {
      case .fix(let fix):
        events.fixes.append(fix)
      case .undatedFix(var fix):
        fix.time = dated(timeOfDay: fix.time, now: now.wall)
        events.fixes.append(fix)
      case .heading(let heading):
        if let sample = HeadingSample(
          nmea: heading, fallbackTime: now.wall, source: source, isSimulated: false)
        {
          events.headings.append(sample)
        }
      case .noFix, .satellites:
        continue
      }
    }
    return events
  }

  /// The Unix time of `timeOfDay` (seconds since midnight UTC) on the day that puts it within
  /// 12 hours of `now`.
  static func dated(timeOfDay: Double, now: Double) -> Double {
    let day = (now / 86_400).rounded(.down) * 86_400
    var time = day + timeOfDay
    if time - now > 43_200 { time -= 86_400 }
    if now - time > 43_200 { time += 86_400 }
    return time
  }
}
