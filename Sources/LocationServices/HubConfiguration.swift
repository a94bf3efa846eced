import Foundation
import LocationModel
import LocationSources
import LocationStore

/// Where an embedded-mode hub gets its settings: the environment, then configuration files, then
/// discovery.
///
/// | setting | where |
/// | --- | --- |
/// | sources | `CORELOCATION_SOURCE` (a URL or a comma-separated list), else the first non-comment lines of `$XDG_CONFIG_HOME/corelocation/sources` (default `~/.config/corelocation/sources`), else `/etc/corelocation/sources`, else discovery: gpsd on 127.0.0.1:2947 if it answers, GeoClue if it is on the system bus, `/etc/geolocation` if it exists |
/// | app identifier | `CORELOCATION_APP_ID`, else the executable's path (`/proc/self/exe`) |
/// | store | `$XDG_STATE_HOME/corelocation/store.sqlite` (default `~/.local/state/...`); `CORELOCATION_STORE` overrides, `:memory:` keeps nothing |
/// | authorization policy | `CORELOCATION_AUTHORIZATION=grant` (default) or `deny`; any other value denies (fails closed) |
/// | Wi-Fi learning | `CORELOCATION_WIFI_LEARNING=off` (or `0`, `no`, `false`) turns it off; on by default |
/// | Wi-Fi fallback | `CORELOCATION_WIFI_FALLBACK_URL` (an Ichnaea-compatible `/v1/geolocate` URL) asks that service for scans not located from what was learned; off by default. `CORELOCATION_WIFI_FALLBACK_AGENT` sets the user agent |
package struct HubConfiguration: Sendable {
  /// The app identifier.
  package var app: String
  /// The sources.
  package var sources: LocationHub.Sources
  /// The store's path, or `nil` to keep everything in memory.
  package var storePath: String?
  /// The authorization policy.
  package var policy: AuthorizationPolicy
  /// Whether Wi-Fi scans taken with a good fix are learned from (`WifiKnowledge`).
  package var wifiLearning = true
  /// The optional Ichnaea-compatible service for scans not located from what was learned.
  package var wifiFallback: IchnaeaClient.Configuration?

  /// Creates a configuration.
  package init(
    app: String, sources: LocationHub.Sources, storePath: String?, policy: AuthorizationPolicy
  ) {
    self.app = app
    self.sources = sources
    self.storePath = storePath
    self.policy = policy
  }

  /// The message given when no source is configured or found.
  package static let noSourceMessage = """
    no location source configured or found (no gpsd answering on 127.0.0.1:2947, no GeoClue on \
    the system bus, no /etc/geolocation). Start gpsd or GeoClue, set CORELOCATION_SOURCE to a \
    source URL (gpsd://host:2947, nmea:///dev/ttyUSB0?baud=9600, nmea+tcp://host:10110, geoclue, \
    replay:///path/track.gpx, static:///etc/geolocation; for beacons bluez or \
    beacons+replay:///path/site.beacons.jsonl), list URLs in \
    ~/.config/corelocation/sources or /etc/corelocation/sources, or create /etc/geolocation \
    (four lines: latitude, longitude, altitude, accuracy)
    """

  /// Reads the configuration from an environment (normally `ProcessInfo.processInfo.environment`).
  package static func fromEnvironment(
    _ environment: [String: String],
    fileExists: @Sendable (String) -> Bool = { access($0, R_OK) == 0 },
    readFile: (String) -> String? = { try? String(contentsOfFile: $0, encoding: .utf8) },
    probe: @Sendable (SourceURL) -> Bool = SourceDiscovery.isAvailable
  ) -> HubConfiguration {
    let app =
      environment["CORELOCATION_APP_ID"].flatMap { $0.isEmpty ? nil : $0 } ?? executablePath()
    let policy: AuthorizationPolicy
    switch environment["CORELOCATION_AUTHORIZATION"]?.lowercased() {
    case nil, "", "grant", "allow": policy = .grant
    // Anything else, a typo included, fails closed.
    default: policy = .deny  // an environment variable
    }
    let storePath: String?
    switch environment["CORELOCATION_STORE"] {
    case ":memory:": storePath = nil
    case .some(let path) where !path.isEmpty: storePath = path
    default:  // an environment variable
      storePath = LocationStore.defaultPath(environment: environment)
    }
    var configuration = HubConfiguration(
      app: app,
      sources: sources(environment, fileExists: fileExists, readFile: readFile, probe: probe),
      storePath: storePath, policy: policy)
    if let url = environment["CORELOCATION_WIFI_FALLBACK_URL"], !url.isEmpty {
      var fallback = IchnaeaClient.Configuration(url: url)
      if let agent = environment["CORELOCATION_WIFI_FALLBACK_AGENT"], !agent.isEmpty {
        fallback.userAgent = agent
      }
      configuration.wifiFallback = fallback
    }
    switch environment["CORELOCATION_WIFI_LEARNING"]?.lowercased() {
    case "off", "0", "no", "false": configuration.wifiLearning = false
    default: break  // an environment variable: on unless said off
    }
    return configuration
  }

  package static func sources(
    _ environment: [String: String], fileExists: @Sendable (String) -> Bool,
    readFile: (String) -> String?,
    probe: @Sendable (SourceURL) -> Bool
  ) -> LocationHub.Sources {
    if let list = environment["CORELOCATION_SOURCE"], !list.allSatisfy(\.isWhitespace) {
      do {
        return .urls(try SourceURL.parseList(list))
      } catch {
        return .unavailable("CORELOCATION_SOURCE: \(error.message)")
      }
    }
    let home = environment["HOME"] ?? "/"
    let configHome =
      environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? home + "/.config"
    for file in [configHome + "/corelocation/sources", "/etc/corelocation/sources"] {
      guard let text = readFile(file) else { continue }
      var urls: [SourceURL] = []
      for (number, line) in text.split(
        omittingEmptySubsequences: false, whereSeparator: \.isNewline
      )
      .enumerated() {
        let content =
          line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        guard !content.allSatisfy(\.isWhitespace) else { continue }
        do {
          urls.append(try SourceURL.parse(String(content)))
        } catch {
          return .unavailable("\(file):\(number + 1): \(error.message)")
        }
      }
      if !urls.isEmpty { return .urls(urls) }
    }
    let found = SourceDiscovery.discover { url in
      if case .staticFile(let path) = url { return fileExists(path) }
      return probe(url)
    }
    return found.isEmpty ? .unavailable(noSourceMessage) : .urls(found)
  }

  /// The path of the running executable, the app identifier when none is configured.
  package static func executablePath() -> String {
    var buffer = [CChar](repeating: 0, count: 4096)
    let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    guard count > 0 else { return CommandLine.arguments.first ?? "unknown" }
    return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }
}

extension LocationHub {
  /// The process's hub in embedded mode, configured from the environment on first use. The
  /// main run loop reads its stream sources while it waits (`RunLoopReading`): a delegate there
  /// gets each fix after one wake-up of the main thread.
  package static let shared: LocationHub = {
    let configuration = HubConfiguration.fromEnvironment(ProcessInfo.processInfo.environment)
    let persistence = makePersistence(configuration.storePath, app: configuration.app)
    return LocationHub(
      app: configuration.app, sources: configuration.sources, persistence: persistence,
      policy: configuration.policy,
      wifi: WifiKnowledge(
        store: (persistence as? StorePersistence)?.store, learning: configuration.wifiLearning,
        fallback: configuration.wifiFallback.flatMap(IchnaeaClient.fallback)),
      readingRunLoop: .main)
  }()
}
