/// A parsed source URL (`docs/architecture.md`, "Sources"): configuration, the CLI and the daemon name sources the
/// same way.
///
/// ```
/// replay:///path/track.gpx?speed=10&loop=1     replay:///path/log.nmea?instant=1
/// static:///etc/geolocation                     geoclue
/// gpsd://127.0.0.1:2947   gpsd:///run/gpsd.sock  nmea:///dev/ttyUSB0?baud=9600   nmea+tcp://host:10110
/// ```
package enum SourceURL: Sendable, Equatable {
  /// gpsd's JSON protocol on TCP (default 127.0.0.1:2947) or a Unix socket.
  case gpsd(Endpoint)
  /// NMEA 0183 from a serial device or pseudo-terminal (raw mode, the given baud rate; NMEA 0183's
  /// 4800 by default).
  case nmeaSerial(path: String, baud: Int)
  /// NMEA 0183 from a TCP server (a marine multiplexer, `gpsd -N` relays, `socat`).
  case nmeaTCP(host: String, port: Int)
  /// GeoClue2 on the system bus.
  case geoclue
  /// The compass of iio-sensor-proxy (`net.hadess.SensorProxy.Compass`) on the system bus.
  case iioCompass
  /// Bluetooth LE advertisements (iBeacons) through BlueZ on the system bus: `bluez` (the first
  /// adapter) or `bluez://hci1`.
  case bluez(adapter: String?)
  /// Wi-Fi scans through NetworkManager on the system bus, turned into positions from what the
  /// machine learned of the access points around it: `wifi` (every wireless device) or
  /// `wifi://wlan0`.
  case wifi(interface: String?)
  /// A recording of advertisements (JSON lines, `BeaconRecording`) replayed on the runtime's
  /// clock: `beacons+replay:///path/site.beacons.jsonl?speed=10&loop=1`.
  case beaconReplay(path: String, options: ReplayOptions)
  /// Another device's positions in OwnTracks' format on an MQTT broker:
  /// `owntracks+mqtt://broker/owntracks/alice/phone` (`OwnTracksSubscription`).
  case ownTracks(OwnTracksSubscription)

  /// A network or local socket address.
  package enum Endpoint: Sendable, Equatable {
    /// TCP to a host and port.
    case tcp(host: String, port: Int)
    /// A Unix stream socket at a path.
    case unix(path: String)
  }

  /// The baud rates a serial source accepts.
  package static let baudRates = [
    1200, 2400, 4800, 9600, 19_200, 38_400, 57_600, 115_200, 230_400, 460_800, 921_600,
  ]
  /// A recorded track (GPX 1.1 or NMEA 0183) replayed on the runtime's clock.
  case replay(path: String, options: ReplayOptions)
  /// GeoClue's four-line static position file.
  case staticFile(path: String)

  /// Options of `replay://`.
  package struct ReplayOptions: Sendable, Equatable {
    /// Playback speed: 1 is real time, 10 ten times faster. Ignored when `instant`.
    package var speed: Double
    /// Emit every fix at once, as fast as the consumer takes them (virtual time).
    package var instant: Bool
    /// Start again from the beginning after the last fix.
    package var loop: Bool

    /// Creates options.
    package init(speed: Double = 1, instant: Bool = false, loop: Bool = false) {
      self.speed = speed
      self.instant = instant
      self.loop = loop
    }
  }

  /// The schemes this build understands, for error messages.
  package static let knownSchemes = [
    "replay", "file", "static", "gpsd", "nmea", "nmea+tcp", "geoclue", "iio-compass", "bluez",
    "beacons+replay", "wifi", "owntracks+mqtt", "owntracks+mqtts",
  ]

  /// Parses a source URL. A bare path (`/x/track.gpx`) is taken as `replay://` of that path.
  /// - Throws: `SourceError` with code `.configuration` naming what is wrong.
  package static func parse(_ text: String) throws(SourceError) -> SourceURL {
    let trimmed = text.trimmingWhitespace()
    guard !trimmed.isEmpty else {
      throw SourceError(.configuration, "empty source URL", isPermanent: true)
    }
    if trimmed == "geoclue" || trimmed == "geoclue://" { return .geoclue }
    if trimmed == "iio-compass" || trimmed == "iio-compass://" { return .iioCompass }
    if trimmed == "bluez" || trimmed == "bluez://" { return .bluez(adapter: nil) }
    if trimmed == "wifi" || trimmed == "wifi://" { return .wifi(interface: nil) }
    if trimmed.hasPrefix("/") {
      return .replay(path: trimmed, options: ReplayOptions())
    }
    guard let schemeEnd = trimmed.range(of: "://") else {
      throw SourceError(
        .configuration,
        "'\(trimmed)' is not a source URL (expected SCHEME://..., with SCHEME one of \(knownSchemes.joined(separator: ", ")))",
        isPermanent: true)
    }
    let scheme = trimmed[..<schemeEnd.lowerBound].lowercased()
    let rest = trimmed[schemeEnd.upperBound...]
    let (pathPart, query) = splitQuery(rest)
    let path = percentDecoded(String(pathPart))
    switch scheme {
    case "replay", "file":
      guard path.hasPrefix("/") else {
        throw SourceError(
          .configuration, "\(scheme):// needs an absolute path, as in replay:///home/me/track.gpx",
          isPermanent: true)
      }
      return .replay(path: path, options: try replayOptions(query, url: trimmed))
    case "static":
      guard path.hasPrefix("/") else {
        throw SourceError(
          .configuration, "static:// needs an absolute path, as in static:///etc/geolocation",
          isPermanent: true)
      }
      if let key = query.first?.key {
        throw SourceError(.configuration, "static:// has no option '\(key)'", isPermanent: true)
      }
      return .staticFile(path: path)
    case "gpsd":
      if let key = query.first?.key {
        throw SourceError(.configuration, "gpsd:// has no option '\(key)'", isPermanent: true)
      }
      if path.hasPrefix("/") { return .gpsd(.unix(path: path)) }
      let (host, port) = try hostPort(path, defaultPort: 2947, scheme: scheme)
      return .gpsd(.tcp(host: host, port: port))
    case "nmea":
      guard path.hasPrefix("/") else {
        throw SourceError(
          .configuration, "nmea:// needs a device path, as in nmea:///dev/ttyUSB0?baud=9600",
          isPermanent: true)
      }
      var baud = 4800
      for (key, value) in query {
        guard key == "baud" else {
          throw SourceError(
            .configuration, "nmea:// has no option '\(key)' (option: baud)", isPermanent: true)
        }
        guard let rate = Int(value), baudRates.contains(rate) else {
          throw SourceError(
            .configuration,
            "baud must be one of \(baudRates.map(String.init).joined(separator: ", ")), not '\(value)'",
            isPermanent: true)
        }
        baud = rate
      }
      return .nmeaSerial(path: path, baud: baud)
    case "nmea+tcp":
      if let key = query.first?.key {
        throw SourceError(.configuration, "nmea+tcp:// has no option '\(key)'", isPermanent: true)
      }
      let (host, port) = try hostPort(path, defaultPort: 10_110, scheme: scheme)
      return .nmeaTCP(host: host, port: port)
    case "geoclue":
      return .geoclue
    case "iio-compass":
      return .iioCompass
    case "bluez":
      if let key = query.first?.key {
        throw SourceError(.configuration, "bluez:// has no option '\(key)'", isPermanent: true)
      }
      let adapter = path.hasPrefix("/") ? String(path.dropFirst()) : path
      guard !adapter.isEmpty else { return .bluez(adapter: nil) }
      guard adapter.utf8.count <= 32, adapter.allSatisfy({ $0.isLetter || $0.isNumber }) else {
        throw SourceError(
          .configuration, "bluez://\(adapter): an adapter is named like hci0", isPermanent: true)
      }
      return .bluez(adapter: adapter)
    case "wifi":
      if let key = query.first?.key {
        throw SourceError(.configuration, "wifi:// has no option '\(key)'", isPermanent: true)
      }
      let interface = path.hasPrefix("/") ? String(path.dropFirst()) : path
      guard !interface.isEmpty else { return .wifi(interface: nil) }
      guard interface.utf8.count <= 15,
        interface.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == "." })
      else {
        throw SourceError(
          .configuration, "wifi://\(interface): an interface is named like wlan0",
          isPermanent: true)
      }
      return .wifi(interface: interface)
    case "beacons+replay":
      guard path.hasPrefix("/") else {
        throw SourceError(
          .configuration,
          "beacons+replay:// needs an absolute path, as in beacons+replay:///home/me/site.beacons.jsonl",
          isPermanent: true)
      }
      return .beaconReplay(path: path, options: try replayOptions(query, url: trimmed))
    case "owntracks+mqtt", "owntracks+mqtts":
      return .ownTracks(
        try OwnTracksSubscription.parse(
          tls: scheme == "owntracks+mqtts", path: path, query: query))
    default:
      throw SourceError(
        .configuration,
        "unknown source scheme '\(scheme)' in '\(trimmed)' (known: \(knownSchemes.joined(separator: ", ")))",
        isPermanent: true)
    }
  }

  /// Parses a comma-separated list of source URLs.
  package static func parseList(_ text: String) throws(SourceError) -> [SourceURL] {
    var result: [SourceURL] = []
    for part in text.split(separator: ",") where !part.allSatisfy(\.isWhitespace) {
      result.append(try parse(String(part)))
    }
    if result.isEmpty {
      throw SourceError(.configuration, "no source URL in '\(text)'", isPermanent: true)
    }
    return result
  }

  /// Whether a fix's `source` names this source: its URL, or the path of its file (a replay's
  /// fixes name the file they came from), with a replay's speed, instant and loop options and a
  /// serial line's baud rate not counting. A name that is no source URL matches nothing.
  package func produced(fixSource: String) -> Bool {
    if fixSource.hasPrefix("/") { return fixSource == filePath }
    guard !fixSource.isEmpty, let other = try? SourceURL.parse(fixSource) else { return false }
    return other.place == place
  }

  /// The file a replay, a static position or a serial line reads.
  private var filePath: String? {
    switch self {
    case .replay(let path, _), .staticFile(let path), .nmeaSerial(let path, _),
      .beaconReplay(let path, _):
      path
    case .gpsd, .nmeaTCP, .geoclue, .iioCompass, .bluez, .wifi, .ownTracks: nil
    }
  }

  /// The source without its options: what it reads from.
  private var place: SourceURL {
    switch self {
    case .replay(let path, _): .replay(path: path, options: ReplayOptions())
    case .nmeaSerial(let path, _): .nmeaSerial(path: path, baud: 0)
    case .beaconReplay(let path, _): .beaconReplay(path: path, options: ReplayOptions())
    case .ownTracks(let subscription):
      .ownTracks(
        OwnTracksSubscription(
          host: subscription.host, port: subscription.port, tls: subscription.tls,
          topic: subscription.topic))
    case .gpsd, .nmeaTCP, .geoclue, .iioCompass, .staticFile, .bluez, .wifi: self
    }
  }

  /// The URL in its canonical text form.
  package var text: String {
    switch self {
    case .replay(let path, let options):
      var items: [String] = []
      if options.speed != 1 { items.append("speed=\(options.speed)") }
      if options.instant { items.append("instant=1") }
      if options.loop { items.append("loop=1") }
      return "replay://" + Self.percentEncoded(path)
        + (items.isEmpty ? "" : "?" + items.joined(separator: "&"))
    case .staticFile(let path):
      return "static://" + Self.percentEncoded(path)
    case .gpsd(.tcp(let host, let port)):
      return "gpsd://\(host.contains(":") ? "[\(host)]" : host):\(port)"
    case .gpsd(.unix(let path)):
      return "gpsd://" + Self.percentEncoded(path)
    case .nmeaSerial(let path, let baud):
      return "nmea://\(Self.percentEncoded(path))?baud=\(baud)"
    case .nmeaTCP(let host, let port):
      return "nmea+tcp://\(host.contains(":") ? "[\(host)]" : host):\(port)"
    case .geoclue:
      return "geoclue"
    case .iioCompass:
      return "iio-compass"
    case .bluez(let adapter):
      return adapter.map { "bluez://\($0)" } ?? "bluez"
    case .wifi(let interface):
      return interface.map { "wifi://\($0)" } ?? "wifi"
    case .beaconReplay(let path, let options):
      return "beacons+" + SourceURL.replay(path: path, options: options).text
    case .ownTracks(let subscription):
      return subscription.text
    }
  }

  /// Splits `host:port`, `[v6]:port`, `host` or an empty string (127.0.0.1).
  package static func hostPort(_ text: String, defaultPort: Int, scheme: String) throws(SourceError)
    -> (
      String, Int
    )
  {
    var host = text
    var portText: Substring?
    if text.hasPrefix("[") {
      guard let close = text.firstIndex(of: "]") else {
        throw SourceError(.configuration, "\(scheme)://\(text): unclosed '['", isPermanent: true)
      }
      host = String(text[text.index(after: text.startIndex)..<close])
      let rest = text[text.index(after: close)...]
      if rest.hasPrefix(":") { portText = rest.dropFirst() }
    } else if let colon = text.lastIndex(of: ":") {
      host = String(text[..<colon])
      portText = text[text.index(after: colon)...]
    }
    if host.isEmpty { host = "127.0.0.1" }
    guard let portText else { return (host, defaultPort) }
    guard let port = Int(portText), (1...65_535).contains(port) else {
      throw SourceError(
        .configuration, "\(scheme)://\(text): bad port '\(portText)'", isPermanent: true)
    }
    return (host, port)
  }

  private static func replayOptions(
    _ query: [(key: String, value: String)], url: String
  ) throws(SourceError) -> ReplayOptions {
    var options = ReplayOptions()
    for (key, value) in query {
      switch key {
      case "speed":
        guard let speed = Double(value), speed.isFinite, speed > 0 else {
          throw SourceError(
            .configuration, "replay speed must be a positive number, not '\(value)'",
            isPermanent: true)
        }
        options.speed = speed
      case "instant":
        options.instant = try flag(value, key)
      case "loop":
        options.loop = try flag(value, key)
      default:
        throw SourceError(
          .configuration, "replay:// has no option '\(key)' (options: speed, instant, loop)",
          isPermanent: true)
      }
    }
    return options
  }

  private static func flag(_ value: String, _ key: String) throws(SourceError) -> Bool {
    switch value.lowercased() {
    case "", "1", "true", "yes", "on": return true
    case "0", "false", "no", "off": return false
    default:
      throw SourceError(.configuration, "\(key) must be 1 or 0, not '\(value)'", isPermanent: true)
    }
  }

  private static func splitQuery(_ text: Substring) -> (Substring, [(key: String, value: String)]) {
    guard let mark = text.firstIndex(of: "?") else { return (text, []) }
    var items: [(key: String, value: String)] = []
    for pair in text[text.index(after: mark)...].split(separator: "&") {
      if let equals = pair.firstIndex(of: "=") {
        items.append(
          (
            percentDecoded(String(pair[..<equals])),
            percentDecoded(String(pair[pair.index(after: equals)...]))
          ))
      } else {
        items.append((percentDecoded(String(pair)), ""))
      }
    }
    return (text[..<mark], items)
  }

  /// Escapes what would not read back as the same path: `%`, `?`, `#`, `&`, `,`, white space,
  /// control characters and non-ASCII bytes.
  static func percentEncoded(_ path: String) -> String {
    var result = ""
    for byte in path.utf8 {
      switch byte {
      case UInt8(ascii: "%"), UInt8(ascii: "?"), UInt8(ascii: "#"), UInt8(ascii: "&"),
        UInt8(ascii: ","), 0...0x20, 0x7F...0xFF:
        result += String(format: "%%%02X", byte)
      default:
        result.unicodeScalars.append(Unicode.Scalar(byte))
      }
    }
    return result
  }

  /// Decodes `%XX` escapes; malformed escapes are kept as they are.
  static func percentDecoded(_ text: String) -> String {
    guard text.contains("%") else { return text }
    var bytes: [UInt8] = []
    var utf8 = Array(text.utf8)[...]
    while let byte = utf8.popFirst() {
      if byte == UInt8(ascii: "%"), utf8.count >= 2,
        let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16)
      {
        bytes.append(value)
        utf8 = utf8.dropFirst(2)
      } else {
        bytes.append(byte)
      }
    }
    return String(decoding: bytes, as: UTF8.self)
  }
}

extension String {
  func trimmingWhitespace() -> String {
    var view = Substring(self)
    while view.first?.isWhitespace == true { view = view.dropFirst() }
    while view.last?.isWhitespace == true { view = view.dropLast() }
    return String(view)
  }
}
