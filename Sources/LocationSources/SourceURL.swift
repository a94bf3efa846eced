/// A parsed source URL (DESIGN.md, "Sources"): configuration, the CLI and the daemon name sources the
/// same way.
///
/// ```
/// replay:///path/track.gpx?speed=10&loop=1     replay:///path/log.nmea?instant=1
/// static:///etc/geolocation
/// ```
public enum SourceURL: Sendable, Equatable {
  /// A recorded track (GPX 1.1 or NMEA 0183) replayed on the runtime's clock.
  case replay(path: String, options: ReplayOptions)
  /// GeoClue's four-line static position file.
  case staticFile(path: String)

  /// Options of `replay://`.
  public struct ReplayOptions: Sendable, Equatable {
    /// Playback speed: 1 is real time, 10 ten times faster. Ignored when `instant`.
    public var speed: Double
    /// Emit every fix at once, as fast as the consumer takes them (virtual time).
    public var instant: Bool
    /// Start again from the beginning after the last fix.
    public var loop: Bool

    /// Creates options.
    public init(speed: Double = 1, instant: Bool = false, loop: Bool = false) {
      self.speed = speed
      self.instant = instant
      self.loop = loop
    }
  }

  /// The schemes this build understands, for error messages.
  public static let knownSchemes = ["replay", "static"]

  /// Parses a source URL. A bare path (`/x/track.gpx`) is taken as `replay://` of that path.
  /// - Throws: `SourceError` with code `.configuration` naming what is wrong.
  public static func parse(_ text: String) throws(SourceError) -> SourceURL {
    let trimmed = text.trimmingWhitespace()
    guard !trimmed.isEmpty else {
      throw SourceError(.configuration, "empty source URL", isPermanent: true)
    }
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
    default:
      throw SourceError(
        .configuration,
        "unknown source scheme '\(scheme)' in '\(trimmed)' (known: \(knownSchemes.joined(separator: ", ")))",
        isPermanent: true)
    }
  }

  /// Parses a comma-separated list of source URLs.
  public static func parseList(_ text: String) throws(SourceError) -> [SourceURL] {
    var result: [SourceURL] = []
    for part in text.split(separator: ",") where !part.allSatisfy(\.isWhitespace) {
      result.append(try parse(String(part)))
    }
    if result.isEmpty {
      throw SourceError(.configuration, "no source URL in '\(text)'", isPermanent: true)
    }
    return result
  }

  /// The URL in its canonical text form.
  public var text: String {
    switch self {
    case .replay(let path, let options):
      var items: [String] = []
      if options.speed != 1 { items.append("speed=\(options.speed)") }
      if options.instant { items.append("instant=1") }
      if options.loop { items.append("loop=1") }
      return "replay://" + path + (items.isEmpty ? "" : "?" + items.joined(separator: "&"))
    case .staticFile(let path):
      return "static://" + path
    }
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
