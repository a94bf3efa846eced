import Foundation
import LocationModel
import LocationProtocol
import LocationServices
import LocationSources

/// `locationd`'s settings: the command line over a configuration file over defaults.
///
/// ## Paths
///
/// | | user daemon (default) | system daemon (`--system`) |
/// | --- | --- | --- |
/// | socket | `$XDG_RUNTIME_DIR/locationd/socket` (directory 0700, socket 0600; without `XDG_RUNTIME_DIR`, `/run/user/UID/locationd/socket`) | `/run/locationd/socket` (directory 0755, socket 0666) |
/// | store | `$XDG_STATE_HOME/corelocation/locationd.sqlite` (default `~/.local/state/...`) | `/var/lib/locationd/store.sqlite` |
/// | configuration | `$XDG_CONFIG_HOME/corelocation/locationd.conf` (default `~/.config/...`) | `/etc/corelocation/locationd.conf` |
///
/// A missing configuration file at the default path is not an error; one named with `--config`
/// must exist.
///
/// ## Configuration file
///
/// Lines of `key = value`; `#` starts a comment; blank lines are ignored. Keys before any section:
///
/// | key | value |
/// | --- | --- |
/// | `source` | a source URL (repeatable, in order of preference; `--source` replaces them all) |
/// | `policy` | `grant` or `deny` (default `deny`): the answer to an app with no decision when no agent is connected |
/// | `socket` | the socket path |
/// | `store` | the store path |
/// | `queue-limit` | bytes queued for one slow client before its location deliveries are thinned (default 1 MiB; four times this disconnects it) |
/// | `strikes` | protocol errors a connection may make before it is closed (default 3) |
/// | `max-connections` | connections served at once (default 4096; more wait in the listen queue) |
/// | `max-connections-per-uid` | connections one uid may have open at once (default 256; more get `tooMany` and are closed) |
/// | `hello-timeout` | seconds a new connection has to say `hello` before it is closed (default 5) |
/// | `requests-per-uid` | requests one uid's connections together are served per second (default 10000; a new connection and a `hello` count 10, every 4 KiB received 1; beyond it they wait, unread) |
/// | `max-regions` | regions one app may monitor at once, every group together (default 50000) |
/// | `max-regions-per-uid` | regions one uid's apps may monitor at once, together (default 10000) |
/// | `wifi-learning` | `on` (default) or `off`: whether Wi-Fi scans taken with a good fix teach the daemon where access points are |
/// | `wifi-fallback-url` | an Ichnaea-compatible geolocate URL (`https://…/v1/geolocate?key=…`) asked for scans not located from what was learned; off by default (needs `curl`) |
/// | `wifi-fallback-user-agent` | the user agent sent to it (default `CoreLocation-for-Linux/VERSION`) |
/// | `max-ranged-constraints` | beacon constraints one uid's managers may range at once, together (default 1000; more get `rangingFailed` `unavailable`) |
/// | `max-held-requests` | requests of one uid's apps together kept while an agent decides (default 256; more get `tooMany`) |
/// | `max-apps-per-uid` | app identities one uid may have the daemon remember (default 256; a new one beyond gets `tooMany` at `hello`) |
/// | `max-pending-events` | region events kept for one app while it is away (default 10000; the oldest are dropped first, and logged) |
/// | `pending-event-days` | days a kept event waits for its app before it is dropped (default 30) |
/// | `control-group` | system daemon: the group (name or number) whose members may use the control and agent roles besides root (default: none) |
/// | `history` | `yes` or `no` (default `no`): keep the device's own positions in the store for `locationctl export` (``HistorySettings``) |
/// | `history-days` | days a recorded point is kept (default 30) |
/// | `history-interval` | seconds between two recorded points, at least (default 1) |
///
/// One section per app that has a desktop-file-style identifier:
///
/// ```
/// [app org.example.Maps]
/// executable = /usr/bin/maps          # repeatable: every executable of the app
/// launch = /usr/bin/maps --background # run with /bin/sh -c when a region event waits for it
/// publish-regions = yes               # with [publish]: its regions and their events over MQTT
/// ```
///
/// A process whose executable is not listed is identified by its executable's path (or, for an
/// interpreter, its script's; `docs/security.md`). `launch` applies to a user daemon only: a system
/// daemon never starts programs, and a `launch` line in its file is an error. The file is trusted
/// (it names commands the daemon runs): it must be owned by root or the daemon's user and not be
/// writable by group or others, or the daemon refuses to start.
package struct DaemonConfiguration: Sendable, Equatable {
  /// An app with a configured identity.
  package struct App: Sendable, Equatable {
    /// The desktop-file-style identifier (`org.example.Maps`).
    package var id: String
    /// The executables that are this app (absolute paths).
    package var executables: [String]
    /// The command that starts the app when an event waits for it (`/bin/sh -c`), if any.
    package var launch: String?
    /// Whether the app's regions and region events are published with the device's positions
    /// (`publish-regions`; issue 18): the owner's opt-in, app by app. Off by default.
    package var publishesRegions = false

    /// Creates an app entry.
    /// - Parameters:
    ///   - id: The identifier.
    ///   - executables: Its executables.
    ///   - launch: Its launch command.
    package init(id: String, executables: [String], launch: String? = nil) {
      self.id = id
      self.executables = executables
      self.launch = launch
    }
  }

  /// Whether this is the system daemon (`--system`).
  package var system = false
  /// Whether `--foreground` was given (the daemon never forks; the flag is accepted for unit
  /// files and scripts).
  package var foreground = false
  /// The socket path.
  package var socketPath: String
  /// The store path (`:memory:` keeps nothing).
  package var storePath: String
  /// The configuration file read, if any.
  package var configPath: String?
  /// The configured sources, in order; empty: discover them as an embedded hub does
  /// (`CORELOCATION_SOURCE`, the sources files, gpsd, GeoClue, `/etc/geolocation`).
  package var sources: [SourceURL] = []
  /// The answer to apps with no decision when no agent is connected (default `deny`).
  package var policy: AuthorizationPolicy = .deny
  /// Apps with a configured identity.
  package var apps: [App] = []
  /// The outgoing queue limit per connection, bytes.
  package var queueLimit = 1 << 20
  /// Protocol errors a connection may make before it is closed.
  package var strikes = 3
  /// Connections served at once.
  package var maximumConnections = 4096
  /// Connections one uid may have open at once (`max-connections-per-uid`).
  package var maximumConnectionsPerUID = 256
  /// Seconds a new connection has to say `hello` (`hello-timeout`).
  package var helloTimeout = 5.0
  /// Requests one uid's connections together are served per second (`requests-per-uid`): a
  /// token bucket holding one second's worth; a new connection costs
  /// `UIDWorkBudget.connectionCost`. Beyond it the uid's connections are not read until it
  /// refills, so one uid cannot keep the I/O thread to itself.
  package var requestsPerUID = 10_000
  /// Requests of one uid's apps together kept while an agent decides (`max-held-requests`).
  package var maximumHeldRequests = 256
  /// App identities one uid may have the daemon remember (`max-apps-per-uid`).
  package var maximumAppsPerUID = 256
  /// Region events kept for one app while it is away (`max-pending-events`).
  package var maximumPendingEvents = 10_000
  /// Days a kept event waits for its app (`pending-event-days`).
  package var pendingEventDays = 30.0
  /// The system daemon's control group (`control-group`): a name or a number.
  package var controlGroup: String?
  /// Managers one connection may register.
  package var maximumManagers = 1024
  /// Whether Wi-Fi scans taken with a good fix are learned from (`wifi-learning`).
  package var wifiLearning = true
  /// The optional Ichnaea-compatible service for scans not located from what was learned
  /// (`wifi-fallback-url`, `wifi-fallback-user-agent`); nil: off.
  package var wifiFallback: IchnaeaClient.Configuration?
  /// Beacon constraints one uid's managers may range at once, together (`max-ranged-constraints`):
  /// each costs a delivery a second and what was heard of its beacons.
  package var maximumRangedConstraints = 1000
  /// The `[publish]` section: the device's positions over MQTT (nil: off, the default).
  package var publish: PublishSettings?
  /// The track history (`history`, `history-days`, `history-interval`; off by default).
  package var history = HistorySettings()
  /// Regions one app may monitor at once, every group together (`max-regions`): the store, the
  /// daemon's memory and the welcome that lists them stay bounded (50,000 regions with short
  /// identifiers make a welcome of about 8 MB; with identifiers of the longest, 1 KiB, about
  /// 60 MB, within the 64 MiB a client reads in one line).
  package var maximumRegions = 50_000
  /// Regions one uid's apps may monitor at once, together (`max-regions-per-uid`): what bounds a
  /// uid's share of memory and store, whatever identities it makes.
  package var maximumRegionsPerUID = 10_000

  /// Creates a configuration with explicit paths and defaults for the rest.
  /// - Parameters:
  ///   - socketPath: The socket path.
  ///   - storePath: The store path.
  package init(socketPath: String, storePath: String) {
    self.socketPath = socketPath
    self.storePath = storePath
  }

  /// The app identifier for an executable: the configured id, else the path itself.
  /// - Parameter executable: The absolute path of the peer's executable.
  /// - Returns: The identifier.
  package func appID(forExecutable executable: String) -> String {
    appID(forExecutable: executable, configured: true) ?? executable
  }

  /// The configured app identifier of an executable (or a script), if an `[app]` section lists it.
  /// - Parameters:
  ///   - executable: The absolute path.
  ///   - configured: Always true (tells this overload apart).
  /// - Returns: The identifier, or nil.
  package func appID(forExecutable executable: String, configured: Bool) -> String? {
    apps.first { $0.executables.contains(executable) }?.id
  }

  /// The app identifier for a peer. A system daemon serves every user, and one user's
  /// authorization, regions and events must not be another's (as on Apple platforms, where
  /// they are per user): it appends `@UID` (`org.example.Maps@1000`). A user daemon serves one
  /// user and uses the bare identifier. Launch commands apply to a user daemon's apps only (a
  /// system daemon does not start programs for users).
  /// - Parameters:
  ///   - executable: The absolute path of the peer's executable.
  ///   - uid: The peer's uid (`SO_PEERCRED`).
  /// - Returns: The identifier.
  package func appID(forExecutable executable: String, uid: UInt32) -> String {
    let id = appID(forExecutable: executable)
    return system ? "\(id)@\(uid)" : id
  }

  /// The configured app with this identifier, if any.
  /// - Parameter id: The identifier.
  /// - Returns: The entry.
  package func app(id: String) -> App? { apps.first { $0.id == id } }

  // MARK: Defaults

  /// The default socket path.
  /// - Parameters:
  ///   - system: Whether for the system daemon.
  ///   - environment: The process environment.
  /// - Returns: The path.
  package static func defaultSocketPath(system: Bool, environment: [String: String]) -> String {
    DaemonSocketPath.daemon(system: system, environment: environment)
  }

  /// The default store path.
  /// - Parameters:
  ///   - system: Whether for the system daemon.
  ///   - environment: The process environment.
  /// - Returns: The path.
  package static func defaultStorePath(system: Bool, environment: [String: String]) -> String {
    if system { return "/var/lib/locationd/store.sqlite" }
    let state =
      environment["XDG_STATE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
      ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.local/state"
    return state + "/corelocation/locationd.sqlite"
  }

  /// The default configuration file path.
  /// - Parameters:
  ///   - system: Whether for the system daemon.
  ///   - environment: The process environment.
  /// - Returns: The path.
  package static func defaultConfigPath(system: Bool, environment: [String: String]) -> String {
    if system { return "/etc/corelocation/locationd.conf" }
    let config =
      environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
      ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.config"
    return config + "/corelocation/locationd.conf"
  }

  // MARK: Command line

  /// The usage line, printed after a usage error.
  package static let usage = """
    usage: locationd [--foreground] [--system] [--socket PATH] [--store PATH] [--config PATH]
                     [--source URL]... [--policy grant|deny]
    """

  /// The help text (`--help`): every option and exit status; the man page locationd(8) says the
  /// same at length, and a test keeps the two in agreement.
  package static let helpText = """
    USAGE: locationd [--system] [--socket PATH] [--store PATH] [--config PATH] [--source URL]...
                     [--policy grant|deny] [--foreground]

    The location daemon: one set of location sources for many apps, each app's authorization
    decided and enforced, regions watched while apps are not running. It stays in the
    foreground (systemd supervises it) and stops cleanly on SIGTERM or SIGINT.

    OPTIONS:
          --system         Serve the whole machine: socket /run/locationd/socket, store
                           /var/lib/locationd/store.sqlite, configuration
                           /etc/corelocation/locationd.conf (default: serve this user)
          --socket PATH    Listen on PATH (default $XDG_RUNTIME_DIR/locationd/socket)
          --store PATH     The SQLite store (default
                           $XDG_STATE_HOME/corelocation/locationd.sqlite; :memory: keeps nothing)
          --config PATH    Read this configuration file, which must exist (default
                           $XDG_CONFIG_HOME/corelocation/locationd.conf, when it exists)
          --source URL     A location source; repeatable, in order of preference; replaces the
                           configuration's sources (default: the configuration, else discovery)
          --policy P       grant or deny: the answer to an app nobody has decided about while no
                           agent is connected (default deny)
      -f, --foreground     Accepted for unit files and scripts; the daemon never forks
      -h, --help           Show this help

    See locationd(8), locationd.conf(5) and corelocation-sources(7).

    EXIT STATUS:
      0 stopped by SIGTERM or SIGINT (or --help)
      1 the store cannot be opened or the socket cannot be set up
      2 usage error, or a bad configuration file
      3 another daemon is already listening on the socket
    """

  /// Reads the command line, then the configuration file it names (or the default one).
  /// - Parameters:
  ///   - arguments: The arguments without the program name.
  ///   - environment: The process environment.
  ///   - readFile: Reads a file; nil when it does not exist or cannot be read.
  ///   - fileOwner: A file's owner and permission bits (`stat`); nil when it cannot be found.
  ///   - daemonUID: The daemon's effective uid.
  /// - Returns: The configuration.
  /// - Throws: ``DaemonConfigurationError`` for an unknown option, a missing value, a bad value, a
  ///   missing `--config` file, a file that is not trusted (owned by another user than root and the
  ///   daemon's, or writable by group or others), a `launch` line for a system daemon, or a bad
  ///   line in the file (with its path and line number).
  package static func fromCommandLine(
    _ arguments: [String], environment: [String: String],
    readFile: (String) -> String? = DaemonConfiguration.readTextFile,
    fileOwner: (String) -> (uid: UInt32, mode: UInt32)? = DaemonConfiguration.owner,
    daemonUID: UInt32 = geteuid()
  ) throws(DaemonConfigurationError) -> DaemonConfiguration {
    var system = false
    var foreground = false
    var socket: String?
    var store: String?
    var config: String?
    var sources: [SourceURL] = []
    var policy: AuthorizationPolicy?
    var index = 0
    func value(_ option: String) throws(DaemonConfigurationError) -> String {
      index += 1
      guard index < arguments.count, !arguments[index].isEmpty else {
        throw DaemonConfigurationError(message: "\(option) needs a value\n\(usage)")
      }
      return arguments[index]
    }
    while index < arguments.count {
      let argument = arguments[index]
      switch argument {
      case "--system": system = true
      case "--foreground", "-f": foreground = true
      case "--socket": socket = try value(argument)
      case "--store": store = try value(argument)
      case "--config": config = try value(argument)
      case "--source":
        let text = try value(argument)
        do {
          sources.append(try SourceURL.parse(text))
        } catch {
          throw DaemonConfigurationError(message: "--source \(text): \(error.message)")
        }
      case "--policy":
        let text = try value(argument)
        guard let parsed = AuthorizationPolicy(rawValue: text) else {
          throw DaemonConfigurationError(message: "--policy must be grant or deny, not \(text)")
        }
        policy = parsed
      case "--help", "-h":
        throw DaemonConfigurationError(message: helpText, isHelp: true)
      default:  // an argument or a key
        throw DaemonConfigurationError(message: "unknown option \(argument)\n\(usage)")
      }
      index += 1
    }
    let configPath = config ?? defaultConfigPath(system: system, environment: environment)
    var configuration = DaemonConfiguration(
      socketPath: defaultSocketPath(system: system, environment: environment),
      storePath: defaultStorePath(system: system, environment: environment))
    if let text = readFile(configPath) {
      // The file names commands the daemon runs and who may control it: only root or the
      // daemon's own user may be able to change it.
      // Character devices (`/dev/null`, an empty configuration) are made by root only.
      if let owner = fileOwner(configPath), owner.mode & UInt32(S_IFMT) != UInt32(S_IFCHR),
        (owner.uid != 0 && owner.uid != daemonUID) || owner.mode & 0o022 != 0
      {
        throw DaemonConfigurationError(
          message:
            "\(configPath): not trusted: it must be owned by root or uid \(daemonUID) and not "
            + "writable by group or others (owner \(owner.uid), mode "
            + String(owner.mode & 0o7777, radix: 8) + ")")
      }
      try configuration.apply(file: text, path: configPath)
      configuration.configPath = configPath
      if system, let app = configuration.apps.first(where: { $0.launch != nil }) {
        throw DaemonConfigurationError(
          message:
            "\(configPath): [app \(app.id)]: launch is for a user daemon only; a system daemon "
            + "never starts programs")
      }
    } else if config != nil {
      throw DaemonConfigurationError(message: "\(configPath): cannot be read")
    }
    configuration.system = system
    configuration.foreground = foreground
    if let socket { configuration.socketPath = socket }
    if let store { configuration.storePath = store }
    if !sources.isEmpty { configuration.sources = sources }
    if let policy { configuration.policy = policy }
    return configuration
  }

  /// Reads a whole file as UTF-8 (any file that can be read, `/dev/null` included); nil when it
  /// cannot be opened or is not UTF-8.
  /// - Parameter path: The file.
  /// - Returns: Its text.
  package static func readTextFile(_ path: String) -> String? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 16_384)
    while true {
      let count = read(fd, &chunk, chunk.count)
      if count < 0, errno == EINTR { continue }
      guard count >= 0 else { return nil }
      if count == 0 { break }
      bytes.append(contentsOf: chunk[0..<count])
      // A configuration file is small; refuse to read a device that never ends.
      guard bytes.count <= 1 << 20 else { return nil }
    }
    return String(validating: bytes, as: UTF8.self)
  }

  /// A file's owner and permission bits (`stat(2)`); nil when it cannot be found.
  /// - Parameter path: The file.
  /// - Returns: Its owner's uid and its mode.
  package static func owner(_ path: String) -> (uid: UInt32, mode: UInt32)? {
    var info = stat()
    guard stat(path, &info) == 0 else { return nil }
    return (info.st_uid, UInt32(info.st_mode))
  }

  /// Applies a configuration file's settings.
  /// - Parameters:
  ///   - text: The file's text.
  ///   - path: Its path, for messages.
  /// - Throws: ``DaemonConfigurationError`` naming the path and line.
  package mutating func apply(file text: String, path: String) throws(DaemonConfigurationError) {
    var currentApp: Int?
    var publishing: PublishSettings?
    var inPublish = false
    var fileSources: [SourceURL] = []
    for (number, rawLine) in text.split(
      omittingEmptySubsequences: false, whereSeparator: \.isNewline
    )
    .enumerated() {
      let place = "\(path):\(number + 1)"
      let line =
        (rawLine.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first
        ?? "").trimmingCharacters(in: .whitespaces)
      if line.isEmpty { continue }
      if line.hasPrefix("[") {
        guard line.hasSuffix("]") else {
          throw DaemonConfigurationError(message: "\(place): a section header ends with ]")
        }
        let header = line.dropFirst().dropLast().trimmingCharacters(in: .whitespaces)
        let words = header.split(separator: " ", omittingEmptySubsequences: true)
        if header == "publish" {
          inPublish = true
          currentApp = nil
          publishing = publishing ?? PublishSettings()
          continue
        }
        inPublish = false
        guard words.count == 2, words[0] == "app" else {
          throw DaemonConfigurationError(
            message:
              "\(place): unknown section [\(header)] (expected [app IDENTIFIER] or [publish])")
        }
        let id = String(words[1])
        if let existing = apps.firstIndex(where: { $0.id == id }) {
          currentApp = existing
        } else {
          apps.append(App(id: id, executables: []))
          currentApp = apps.count - 1
        }
        continue
      }
      guard let equals = line.firstIndex(of: "=") else {
        throw DaemonConfigurationError(message: "\(place): expected key = value")
      }
      let key = line[..<equals].trimmingCharacters(in: .whitespaces)
      let value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
      guard !value.isEmpty else {
        throw DaemonConfigurationError(message: "\(place): \(key) needs a value")
      }
      if inPublish {
        try publishing?.apply(key: key, value: value, place: place)
        continue
      }
      if let app = currentApp {
        switch key {
        case "executable":
          guard value.hasPrefix("/") else {
            throw DaemonConfigurationError(message: "\(place): executable must be an absolute path")
          }
          apps[app].executables.append(value)
        case "launch":
          apps[app].launch = value
        case "publish-regions":
          apps[app].publishesRegions = try Self.yesOrNo(value, place: place, key: key)
        default:  // an argument or a key
          throw DaemonConfigurationError(
            message:
              "\(place): unknown key \(key) in an app section (executable, launch, "
              + "publish-regions)")
        }
        continue
      }
      switch key {
      case "source":
        do {
          fileSources.append(try SourceURL.parse(value))
        } catch {
          throw DaemonConfigurationError(message: "\(place): \(error.message)")
        }
      case "policy":
        guard let parsed = AuthorizationPolicy(rawValue: value) else {
          throw DaemonConfigurationError(message: "\(place): policy must be grant or deny")
        }
        policy = parsed
      case "socket": socketPath = value
      case "store": storePath = value
      case "queue-limit": queueLimit = try Self.positive(value, place: place, key: key)
      case "strikes": strikes = try Self.positive(value, place: place, key: key)
      case "max-connections": maximumConnections = try Self.positive(value, place: place, key: key)
      case "max-regions": maximumRegions = try Self.positive(value, place: place, key: key)
      case "wifi-learning":
        switch value.lowercased() {
        case "on", "yes", "true", "1": wifiLearning = true
        case "off", "no", "false", "0": wifiLearning = false
        default:  // a string from the file
          throw DaemonConfigurationError(
            message: "\(place): wifi-learning takes on or off, not '\(value)'")
        }
      case "wifi-fallback-url":
        var fallback = wifiFallback ?? IchnaeaClient.Configuration(url: value)
        fallback.url = value
        if let problem = fallback.problem {
          throw DaemonConfigurationError(message: "\(place): wifi-fallback-url: \(problem)")
        }
        wifiFallback = fallback
      case "wifi-fallback-user-agent":
        var fallback = wifiFallback ?? IchnaeaClient.Configuration(url: "")
        fallback.userAgent = value
        wifiFallback = fallback
      case "max-ranged-constraints":
        maximumRangedConstraints = try Self.positive(value, place: place, key: key)
      case "max-regions-per-uid":
        maximumRegionsPerUID = try Self.positive(value, place: place, key: key)
      case "max-connections-per-uid":
        maximumConnectionsPerUID = try Self.positive(value, place: place, key: key)
      case "hello-timeout": helloTimeout = Double(try Self.positive(value, place: place, key: key))
      case "requests-per-uid": requestsPerUID = try Self.positive(value, place: place, key: key)
      case "max-held-requests":
        maximumHeldRequests = try Self.positive(value, place: place, key: key)
      case "max-apps-per-uid": maximumAppsPerUID = try Self.positive(value, place: place, key: key)
      case "max-pending-events":
        maximumPendingEvents = try Self.positive(value, place: place, key: key)
      case "pending-event-days":
        pendingEventDays = Double(try Self.positive(value, place: place, key: key))
      case "control-group": controlGroup = value
      case _ where HistorySettings.keys.contains(key):
        try history.apply(key: key, value: value, place: place)
      default:  // an argument or a key
        throw DaemonConfigurationError(message: "\(place): unknown key \(key)")
      }
    }
    if !fileSources.isEmpty { sources = fileSources }
    if let publishing { publish = try publishing.validated(path: path) }
  }

  /// A switch's value: `yes`, `on`, `true` or `1`; `no`, `off`, `false` or `0` (any case).
  static func yesOrNo(_ value: String, place: String, key: String)
    throws(DaemonConfigurationError) -> Bool
  {
    switch value.lowercased() {
    case "yes", "on", "true", "1": return true
    case "no", "off", "false", "0": return false
    default:  // any other word
      throw DaemonConfigurationError(message: "\(place): \(key) takes yes or no, not '\(value)'")
    }
  }

  private static func positive(_ value: String, place: String, key: String)
    throws(DaemonConfigurationError) -> Int
  {
    guard let number = Int(value), number > 0 else {
      throw DaemonConfigurationError(message: "\(place): \(key) must be a positive integer")
    }
    return number
  }
}

/// A bad command line or configuration file.
package struct DaemonConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
  /// What is wrong, with the file and line where there is one.
  package var message: String
  /// True when `--help` was asked for (the message is the usage; exit 0).
  package var isHelp: Bool

  /// Creates an error.
  /// - Parameters:
  ///   - message: What is wrong.
  ///   - isHelp: Whether this is the answer to `--help`.
  package init(message: String, isHelp: Bool = false) {
    self.message = message
    self.isHelp = isHelp
  }

  /// The message.
  package var description: String { message }
}
