import CoreLocation
import Foundation

/// `whereami`'s command line, parsed (CoreLocationCLI's interface, plus the Linux options).
package struct WhereAmIOptions: Equatable, Sendable {
  /// What to print for each location.
  package enum Output: Equatable, Sendable {
    /// A format string with `%` tokens.
    case format(String)
    /// One JSON object per line.
    case json

    /// The format string, or `nil` for JSON.
    var formatString: String? {
      if case .format(let format) = self { return format }
      return nil
    }
  }

  /// `-w/--watch`: keep printing updates.
  package var watch = false
  /// `-v/--verbose`: diagnostics on standard error.
  package var verbose = false
  /// `-f/--format` or `-j/--json`.
  package var output = Output.format("%latitude %longitude")
  /// `--source URL`: the location source (else `CORELOCATION_SOURCE`, configuration, discovery).
  package var source: String?
  /// `--accuracy`: the desired accuracy in metres (negative: Apple's "best" constants).
  package var accuracy: CLLocationAccuracy = kCLLocationAccuracyBest
  /// `--distance-filter`: metres.
  package var distanceFilter: CLLocationDistance = kCLDistanceFilterNone
  /// `--timeout`: seconds to wait for a location (once) or between locations (watch).
  package var timeout: TimeInterval?
  /// `--speed`: replay speed factor.
  package var speed: Double?
  /// `--instant`: replay as fast as possible.
  package var instant = false
  /// `--count N`: stop after N locations (implies watch).
  package var count: Int?
  /// `--regions FILE.geojson`: monitor these regions and print their state changes instead of
  /// locations (implies watch).
  package var regions: String?
  /// `--geocode TEXT`: print the places that match TEXT instead of a location.
  package var geocode: String?
  /// `--record FILE.gpx`: also write the printed locations to FILE as a GPX 1.1 track.
  package var record: String?
  /// `--beacons UUID` (repeatable): range the iBeacons of these proximity UUIDs and print them
  /// instead of locations, in the order given, without repeats.
  package var beacons: [UUID] = []
  /// `-h/--help`.
  package var help = false
  /// `--version`.
  package var version = false

  /// Creates the defaults.
  package init() {}

  /// A usage error: the message says what is wrong.
  package struct UsageError: Error, Equatable, CustomStringConvertible {
    /// What is wrong.
    package var message: String
    package var description: String { message }
  }

  /// Parses arguments (without the program name).
  package static func parse(_ rawArguments: [String]) throws(UsageError) -> WhereAmIOptions {
    // `--name=value` is `--name value`.
    var arguments: [String] = []
    for argument in rawArguments {
      if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
        arguments.append(String(argument[..<equals]))
        arguments.append(String(argument[argument.index(after: equals)...]))
      } else {
        arguments.append(argument)
      }
    }
    var options = WhereAmIOptions()
    var index = 0
    var formatGiven = false
    func value(_ name: String) throws(UsageError) -> String {
      index += 1
      guard index < arguments.count else { throw UsageError(message: "\(name) needs a value") }
      return arguments[index]
    }
    func number(_ name: String) throws(UsageError) -> Double {
      let text = try value(name)
      guard let number = Double(text), number.isFinite else {
        throw UsageError(message: "\(name) needs a number, not '\(text)'")
      }
      return number
    }
    while index < arguments.count {
      let argument = arguments[index]
      switch argument {
      case "-w", "--watch", "-follow", "-watch": options.watch = true
      case "-v", "--verbose", "-verbose": options.verbose = true
      case "-j", "--json", "-json": options.output = .json
      case "-f", "--format", "-format":
        options.output = .format(try value(argument))
        formatGiven = true
      case "-h", "--help", "-help": options.help = true
      case "--version", "-version": options.version = true
      case "--source": options.source = try value(argument)
      case "--geocode": options.geocode = try value(argument)
      case "--record":
        let path = try value(argument)
        guard !path.isEmpty else { throw UsageError(message: "--record needs a file name") }
        options.record = path
      case "--beacons":
        let text = try value(argument)
        guard let uuid = UUID(uuidString: text) else {
          throw UsageError(
            message: "--beacons needs a beacon proximity UUID "
              + "(E2C56DB5-DFFB-48D2-B060-D0F5A71096E0), not '\(text)'")
        }
        if !options.beacons.contains(uuid) { options.beacons.append(uuid) }
      case "--accuracy": options.accuracy = try accuracy(try value(argument))
      case "--distance-filter":
        let metres = try number(argument)
        guard metres >= 0 || metres == kCLDistanceFilterNone else {
          throw UsageError(message: "--distance-filter needs metres >= 0")
        }
        options.distanceFilter = metres
      case "--timeout":
        let seconds = try number(argument)
        guard seconds > 0 else { throw UsageError(message: "--timeout needs seconds > 0") }
        options.timeout = seconds
      case "--speed":
        let factor = try number(argument)
        guard factor > 0 else { throw UsageError(message: "--speed needs a factor > 0") }
        options.speed = factor
      case "--instant": options.instant = true
      case "--regions":
        options.regions = try value(argument)
        options.watch = true
      case "--count":
        let text = try value(argument)
        guard let count = Int(text), count > 0 else {
          throw UsageError(message: "--count needs a whole number > 0, not '\(text)'")
        }
        options.count = count
        options.watch = true
      default:
        throw UsageError(message: "unknown option '\(argument)' (see whereami --help)")
      }
      index += 1
    }
    if options.record != nil {
      // A track of the locations printed: modes that print no locations have none to record.
      let other =
        !options.beacons.isEmpty
        ? "--beacons"
        : options.regions != nil ? "--regions" : options.geocode != nil ? "--geocode" : nil
      if let other { throw UsageError(message: "--record cannot be combined with \(other)") }
    }
    if !options.beacons.isEmpty {
      if formatGiven {
        throw UsageError(message: "--format does not apply to --beacons (--json does)")
      }
      if options.regions != nil || options.geocode != nil {
        throw UsageError(
          message:
            "--beacons cannot be combined with \(options.regions != nil ? "--regions" : "--geocode")"
        )
      }
    }
    return options
  }

  /// `best`, `navigation`, `10m`, `100m`, `1km`, `3km`, or a number of metres.
  static func accuracy(_ text: String) throws(UsageError) -> CLLocationAccuracy {
    switch text.lowercased() {
    case "best": return kCLLocationAccuracyBest
    case "navigation", "bestfornavigation": return kCLLocationAccuracyBestForNavigation
    case "10m": return kCLLocationAccuracyNearestTenMeters
    case "100m": return kCLLocationAccuracyHundredMeters
    case "1km": return kCLLocationAccuracyKilometer
    case "3km": return kCLLocationAccuracyThreeKilometers
    default:
      guard let metres = Double(text), metres.isFinite, metres > 0 else {
        throw UsageError(
          message: "--accuracy takes best, navigation, 10m, 100m, 1km, 3km or metres, not '\(text)'"
        )
      }
      return metres
    }
  }

  /// The source URL with the replay options applied.
  /// - Throws: when `--speed`/`--instant` are given for a source that is not a replay.
  package func effectiveSource(environment: [String: String]) throws(UsageError) -> String? {
    guard speed != nil || instant else { return source }
    guard let base = source ?? environment["CORELOCATION_SOURCE"], !base.contains(",") else {
      throw UsageError(
        message: "--speed and --instant need one replay source (--source replay:///path)")
    }
    var url = base.trimmingCharacters(in: .whitespaces)
    if url.hasPrefix("/") { url = "replay://" + url }
    guard
      url.hasPrefix("replay://") || url.hasPrefix("file://") || url.hasPrefix("beacons+replay://")
    else {
      throw UsageError(
        message: "--speed and --instant apply to replay:// and beacons+replay:// sources only")
    }
    var items: [String] = []
    if let speed { items.append("speed=\(speed)") }
    if instant { items.append("instant=1") }
    return url + (url.contains("?") ? "&" : "?") + items.joined(separator: "&")
  }

  /// The help text.
  package static let helpText = """
    USAGE: whereami [--watch] [--verbose] [--format FORMAT | --json] [options]
           whereami --beacons UUID [--beacons UUID]... [--watch] [--json] [options]

    Prints the location of this machine, from gpsd, an NMEA device, GeoClue, /etc/geolocation
    or a replayed track, through the CoreLocation API.

    OPTIONS:
      -w, --watch              Keep printing location updates
      -f, --format FORMAT      Print FORMAT with the tokens below replaced (\\n and \\t honoured)
      -j, --json               Print one JSON object per line
      -v, --verbose            Show diagnostics on standard error
          --source URL         Location source: replay:///track.gpx, static:///etc/geolocation, ...
                               (default: CORELOCATION_SOURCE, configuration, then discovery)
          --accuracy A         best, navigation, 10m, 100m, 1km, 3km, or metres (default best)
          --distance-filter M  Only report moves of at least M metres
          --timeout S          Give up after S seconds without a location
          --speed X            Replay X times faster than recorded
          --instant            Replay as fast as possible
          --count N            Stop after N locations (implies --watch)
          --record FILE        Also write the locations printed to FILE as a GPX 1.1 track
                               (replaced if it exists), complete on disk after every location,
                               so that an interrupted run keeps what it printed
          --regions FILE       Monitor the circles of a GeoJSON FeatureCollection (Points with a
                               "radius" property and an id) and print one line per state change:
                               TIME ID STATE EVENT (JSON with --json); implies --watch
          --geocode TEXT       Print the places that match TEXT ("Zürich", "Paris, Texas"), best
                               first, one a line (with the tokens of --format, or --json)
          --beacons UUID       Range the iBeacons of UUID (repeatable) and print them, closest
                               first, one a line: UUID MAJOR MINOR PROXIMITY ACCURACY_M RSSI
                               (one JSON object per delivery with --json). Once: the first
                               delivery with a beacon, within --timeout (default 10 s); with
                               --watch every delivery, about once a second; --count N deliveries
          --version            Print the version
      -h, --help               Show this help

    FORMAT TOKENS:
      %latitude %longitude %altitude %direction %speed %h_accuracy %v_accuracy %time
      %course_accuracy %speed_accuracy %floor %simulated %%
      Reverse-geocoding tokens, from the offline gazetteer (or CORELOCATION_GEOCODER's server):
      %address %name %isoCountryCode %country %postalCode %administrativeArea
      %subAdministrativeArea %locality %subLocality %thoroughfare %subThoroughfare %ocean
      %inlandWater %region %timeZone %time_local (empty when unknown)
    Default format: "%latitude %longitude"; with --geocode,
    "%latitude %longitude  %name, %administrativeArea, %country".

    EXIT STATUS:
      0 success (with --watch: the replayed source ended, or --count was reached)
      1 no location (no source, the source failed, or it ended before a location); with
        --geocode, no place matched; with --beacons, ranging is not available or failed, or
        no beacon in range within 10 s; with --record, writing the file failed
      2 usage error; the --record file cannot be created
      3 location access denied or location services off
      4 timed out
    """
}
