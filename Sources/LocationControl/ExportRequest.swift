import Geodesy

/// `locationctl export --since WHEN [--until WHEN] (--gpx | --geojson) [-o FILE]`: what to
/// export of the daemon's track history, and where.
package struct ExportRequest: Equatable, Sendable {
  /// The file format written.
  package enum Format: String, Equatable, Sendable, CaseIterable {
    /// GPX 1.1: one track of one segment (`GPXTrackWriter`'s points).
    case gpx
    /// GeoJSON (RFC 7946): a FeatureCollection of Point features (`GeoJSONTrackWriter`).
    case geojson
  }

  /// The earliest time, included.
  package var since: ExportTime
  /// The latest time, excluded; nil: no bound (everything recorded so far).
  package var until: ExportTime?
  /// The format.
  package var format: Format
  /// The file written; nil: standard output.
  package var output: String?

  /// Creates a request.
  package init(since: ExportTime, until: ExportTime? = nil, format: Format, output: String? = nil) {
    self.since = since
    self.until = until
    self.format = format
    self.output = output
  }

  /// The bounds in seconds since 1970 at `now`, or why they are wrong (`--until` not after
  /// `--since`).
  /// - Parameter now: The current time, seconds since 1970.
  /// - Returns: The bounds.
  /// - Throws: `ControlOptions.UsageError`.
  package func bounds(now: Double) throws(ControlOptions.UsageError) -> (
    since: Double, until: Double?
  ) {
    let start = since.resolved(now: now)
    let end = until?.resolved(now: now)
    if let end, end <= start {
      throw ControlOptions.UsageError(message: "--until must be later than --since")
    }
    return (start, end)
  }
}

/// A time on `locationctl export`'s command line.
///
/// Forms (ours): ISO 8601 in UTC or with an offset, `2026-12-01T10:00:00Z`,
/// `2026-12-01T10:00:00.5+01:00` (a space may stand for the `T`; seconds may be left out); a date
/// alone, `2026-12-01`, is its midnight UTC; a time before now, a positive number and a unit:
/// `90s`, `30m`, `24h`, `7d`, `2w` (seconds, minutes, hours, days, weeks); `now`; and `@SECONDS`,
/// seconds since 1970 (as `date +%s` prints).
package enum ExportTime: Equatable, Sendable {
  /// Seconds since 1970.
  case absolute(Double)
  /// Seconds before the command runs.
  case ago(Double)

  /// The time in seconds since 1970 at `now`.
  package func resolved(now: Double) -> Double {
    switch self {
    case .absolute(let time): return time
    case .ago(let seconds): return now - seconds
    }
  }

  /// Parses one of the forms.
  /// - Parameters:
  ///   - text: The argument.
  ///   - option: The option it was given to, for the message.
  /// - Returns: The time.
  /// - Throws: `ControlOptions.UsageError` naming the option, the text and the forms.
  package static func parse(_ text: String, option: String) throws(ControlOptions.UsageError)
    -> ExportTime
  {
    if let time = relative(text) ?? iso8601(text) ?? epoch(text) { return time }
    throw ControlOptions.UsageError(
      message:
        "\(option) '\(text)' is not a time: use ISO 8601 (2026-12-01T10:00:00Z, 2026-12-01), "
        + "a time ago (90s, 30m, 24h, 7d, 2w), now, or @SECONDS since 1970")
  }

  private static func relative(_ text: String) -> ExportTime? {
    if text.lowercased() == "now" { return .ago(0) }
    guard let unit = text.last, text.count >= 2 else { return nil }
    let seconds: Double
    switch unit {
    case "s": seconds = 1
    case "m": seconds = 60
    case "h": seconds = 3600
    case "d": seconds = 86_400
    case "w": seconds = 604_800
    default: return nil
    }
    let digits = text.dropLast()
    guard digits.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
      let amount = Double(digits), amount.isFinite, amount >= 0, amount * seconds < 1e11
    else { return nil }
    return .ago(amount * seconds)
  }

  private static func epoch(_ text: String) -> ExportTime? {
    guard text.hasPrefix("@"), let seconds = Double(text.dropFirst()), seconds.isFinite,
      abs(seconds) < 1e11, text.dropFirst().allSatisfy({ $0.isASCII && $0 != "e" && $0 != "E" })
    else { return nil }
    return .absolute(seconds)
  }

  /// `YYYY-MM-DD[(T| )hh:mm[:ss[.fff]](Z|±hh:mm|±hhmm)]`.
  private static func iso8601(_ text: String) -> ExportTime? {
    let bytes = Array(text.utf8)
    var index = 0
    func number(_ count: Int) -> Int? {
      guard index + count <= bytes.count else { return nil }
      var value = 0
      for byte in bytes[index..<index + count] {
        guard (0x30...0x39).contains(byte) else { return nil }
        value = value * 10 + Int(byte - 0x30)
      }
      index += count
      return value
    }
    func take(_ character: Character) -> Bool {
      guard index < bytes.count, let ascii = character.asciiValue, bytes[index] == ascii else {
        return false
      }
      index += 1
      return true
    }
    guard let year = number(4), take("-"), let month = number(2), take("-"), let day = number(2),
      (1...12).contains(month), (1...31).contains(day)
    else { return nil }
    let days = CivilDate.days(year: year, month: month, day: day)
    // Not a day of that month (2026-02-30).
    guard CivilDate.date(fromDays: days) == (year, month, day) else { return nil }
    var seconds = Double(days) * 86_400
    guard index < bytes.count else { return .absolute(seconds) }
    guard take("T") || take(" ") || take("t"), let hour = number(2), take(":"),
      let minute = number(2), hour < 24, minute < 60
    else { return nil }
    seconds += Double(hour * 3600 + minute * 60)
    if take(":") {
      guard let second = number(2), second < 61 else { return nil }
      seconds += Double(second)
      if take(".") || take(",") {
        let start = index
        var scale = 0.1
        while index < bytes.count, (0x30...0x39).contains(bytes[index]) {
          seconds += Double(bytes[index] - 0x30) * scale
          scale /= 10
          index += 1
        }
        guard index > start else { return nil }
      }
    }
    if take("Z") || take("z") {
      return index == bytes.count ? .absolute(seconds) : nil
    }
    let sign: Double
    if take("+") {
      sign = 1
    } else if take("-") {
      sign = -1
    } else {
      return nil
    }
    guard let offsetHours = number(2), offsetHours < 24 else { return nil }
    _ = take(":")
    guard let offsetMinutes = number(2), offsetMinutes < 60, index == bytes.count else {
      return nil
    }
    return .absolute(seconds - sign * Double(offsetHours * 3600 + offsetMinutes * 60))
  }
}

/// The options of `export` as `ControlOptions.parse` meets them, anywhere on the line.
struct ExportOptions {
  /// The usage line.
  static let usage = "export --since WHEN [--until WHEN] --gpx|--geojson [-o FILE]"

  /// The export options given, in order (to refuse them with another command).
  private(set) var given: [String] = []
  private var since: ExportTime?
  private var until: ExportTime?
  private var formats: [ExportRequest.Format] = []
  private var output: String?

  /// Reads `argument` (and its value, the next argument, moving `index` past it).
  mutating func take(_ argument: String, _ arguments: [String], _ index: inout Int)
    throws(ControlOptions.UsageError)
  {
    given.append(argument)
    func value() throws(ControlOptions.UsageError) -> String {
      guard index < arguments.count, !arguments[index].isEmpty else {
        throw ControlOptions.UsageError(
          message: "\(argument) needs a value (usage: locationctl \(Self.usage))")
      }
      defer { index += 1 }
      return arguments[index]
    }
    switch argument {
    case "--gpx": formats.append(.gpx)
    case "--geojson": formats.append(.geojson)
    case "--since": since = try ExportTime.parse(try value(), option: argument)
    case "--until": until = try ExportTime.parse(try value(), option: argument)
    default: output = try value()  // -o, --output
    }
  }

  /// The request, once the whole line is read.
  func request(json: Bool) throws(ControlOptions.UsageError) -> ExportRequest {
    guard let since else {
      throw ControlOptions.UsageError(
        message: "export needs --since WHEN (usage: locationctl \(Self.usage))")
    }
    guard Set(formats).count == 1, let format = formats.first else {
      throw ControlOptions.UsageError(
        message: "export needs one of --gpx or --geojson (usage: locationctl \(Self.usage))")
    }
    guard !json else {
      throw ControlOptions.UsageError(
        message: "--json does not apply to export (choose --gpx or --geojson)")
    }
    return ExportRequest(since: since, until: until, format: format, output: output)
  }
}
