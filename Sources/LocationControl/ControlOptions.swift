import Foundation
import LocationProtocol

/// `locationctl`'s command line, parsed.
///
/// Options may come before or after the command: `locationctl --json apps` and
/// `locationctl apps --json` are the same. `--name=value` is `--name value`.
package struct ControlOptions: Equatable, Sendable {
  /// A grant that `locationctl authorize` can store for an app.
  package enum Grant: String, Equatable, Sendable, CaseIterable {
    /// `CLAuthorizationStatus.authorizedAlways`.
    case always
    /// `CLAuthorizationStatus.authorizedWhenInUse` (spelled `when-in-use` on the command line).
    case whenInUse
    /// `CLAuthorizationStatus.denied`.
    case denied
    /// Forget the decision: the app is `notDetermined` again and its next request is asked.
    case reset

    /// The spelling on the command line.
    package var argument: String {
      switch self {
      case .always: return "always"
      case .whenInUse: return "when-in-use"
      case .denied: return "denied"
      case .reset: return "reset"
      }
    }

    /// Parses the command-line spelling (`when-in-use`, also `wheninuse`, `when_in_use`).
    ///
    /// - Parameter text: The argument.
    /// - Returns: The grant, or nil when the text names none.
    package static func parse(_ text: String) -> Grant? {
      switch text.lowercased() {
      case "always": return .always
      case "when-in-use", "wheninuse", "when_in_use": return .whenInUse
      case "denied", "deny": return .denied
      case "reset": return .reset
      default: return nil
      }
    }
  }

  /// What to do.
  package enum Command: Equatable, Sendable {
    /// `status`: sources, clients and apps.
    case status
    /// `apps`: every app the daemon knows, with its authorization.
    case apps
    /// `authorize APP GRANT [--approximate]`.
    case authorize(app: String, grant: Grant, approximate: Bool)
    /// `regions APP`: an app's monitored regions and their states.
    case regions(app: String)
    /// `sources`: the daemon's location sources.
    case sources
    /// `agent`: answer authorization requests interactively.
    case agent
    /// `services on|off`: the global location services switch.
    case services(enabled: Bool)
    /// `wifi [forget]`: the access points the daemon learned; `forget` clears them.
    case wifi(forget: Bool)
    /// `wifi import FILE`: adds the access points of an Ichnaea-format CSV the daemon lacks.
    case wifiImport(path: String)
    /// `export --since WHEN [--until WHEN] (--gpx | --geojson) [-o FILE]`: the track history.
    case export(ExportRequest)
    /// `help` or `--help`.
    case help
  }

  /// The command.
  package var command: Command
  /// `--json`: print the daemon's answer as JSON instead of a table.
  package var json: Bool
  /// `--socket PATH` or `--system`; nil: the default from the environment.
  package var socket: String?

  /// Creates options.
  ///
  /// - Parameters:
  ///   - command: The command.
  ///   - json: Whether to print JSON.
  ///   - socket: The socket path given on the command line, if any.
  package init(command: Command, json: Bool = false, socket: String? = nil) {
    self.command = command
    self.json = json
    self.socket = socket
  }

  /// A usage error: the message says what is wrong.
  package struct UsageError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What is wrong.
    package var message: String
    /// The message.
    package var description: String { message }
  }

  /// The system daemon's socket (`--system`).
  package static let systemSocket = DaemonSocketPath.system

  /// The socket to use when none is given: `$CORELOCATION_DAEMON_SOCKET`, else the user daemon's
  /// (`$XDG_RUNTIME_DIR/locationd/socket`, or `/run/user/UID/locationd/socket` without
  /// `XDG_RUNTIME_DIR`, where `locationd` puts it) when it exists or no system daemon's socket
  /// exists, else the system daemon's `/run/locationd/socket`.
  ///
  /// - Parameters:
  ///   - environment: The process environment.
  ///   - fileExists: Whether a path exists (tests replace it).
  /// - Returns: The socket path.
  package static func defaultSocket(
    environment: [String: String],
    fileExists: (String) -> Bool = { FileManager.default.fileExists(atPath: $0) }
  ) -> String {
    if let path = environment["CORELOCATION_DAEMON_SOCKET"], !path.isEmpty { return path }
    let user = DaemonSocketPath.daemon(system: false, environment: environment)
    if !fileExists(user), fileExists(systemSocket) { return systemSocket }
    return user
  }

  /// The socket these options name, with the environment's default.
  ///
  /// - Parameter environment: The process environment.
  /// - Returns: The socket path.
  package func socketPath(environment: [String: String]) -> String {
    socket ?? Self.defaultSocket(environment: environment)
  }

  /// Parses arguments (without the program name).
  ///
  /// - Parameter rawArguments: The command-line arguments.
  /// - Returns: The options.
  /// - Throws: `UsageError` naming the problem: an unknown command or option, a missing or extra
  ///   argument, a bad grant, `--approximate` outside `authorize`, `--socket` with `--system`.
  package static func parse(_ rawArguments: [String]) throws(UsageError) -> ControlOptions {
    var arguments: [String] = []
    var afterDashes = false
    for argument in rawArguments {
      if !afterDashes, argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
        arguments.append(String(argument[..<equals]))
        arguments.append(String(argument[argument.index(after: equals)...]))
      } else {
        if argument == "--" { afterDashes = true }
        arguments.append(argument)
      }
    }
    var json = false
    var help = false
    var socket: String?
    var system = false
    var approximate = false
    var export = ExportOptions()
    var words: [String] = []
    var index = 0
    var dashes = false
    while index < arguments.count {
      let argument = arguments[index]
      index += 1
      if dashes || !argument.hasPrefix("-") || argument == "-" {
        words.append(argument)
        continue
      }
      switch argument {
      case "--": dashes = true
      case "--json", "-j": json = true
      case "--help", "-h": help = true
      case "--system": system = true
      case "--approximate": approximate = true
      case "--gpx", "--geojson", "--since", "--until", "--output", "-o":
        try export.take(argument, arguments, &index)
      case "--socket":
        guard index < arguments.count, !arguments[index].isEmpty else {
          throw UsageError(message: "--socket needs a path")
        }
        socket = arguments[index]
        index += 1
      default:
        throw UsageError(message: "unknown option '\(argument)' (see locationctl --help)")
      }
    }
    if system {
      guard socket == nil else {
        throw UsageError(message: "--socket and --system cannot be used together")
      }
      socket = systemSocket
    }
    if help || words.first == "help" {
      return ControlOptions(command: .help, json: json, socket: socket)
    }
    guard let name = words.first else {
      throw UsageError(message: "no command given (see locationctl --help)")
    }
    let rest = Array(words.dropFirst())
    func expect(_ count: Int, _ usage: String) throws(UsageError) {
      if rest.count < count { throw UsageError(message: "usage: locationctl \(usage)") }
      if rest.count > count {
        throw UsageError(
          message: "unexpected argument '\(rest[count])' (usage: locationctl \(usage))")
      }
    }
    let command: Command
    switch name {
    case "status":
      try expect(0, "status [--json]")
      command = .status
    case "apps":
      try expect(0, "apps [--json]")
      command = .apps
    case "sources":
      try expect(0, "sources [--json]")
      command = .sources
    case "agent":
      try expect(0, "agent")
      command = .agent
    case "wifi":
      if rest.isEmpty {
        command = .wifi(forget: false)
      } else if rest[0] == "import" {
        try expect(2, "wifi import FILE [--json]")
        command = .wifiImport(path: rest[1])
      } else {
        try expect(1, "wifi [forget | import FILE] [--json]")
        guard rest[0] == "forget" else {
          throw UsageError(message: "wifi takes forget, import FILE or nothing, not '\(rest[0])'")
        }
        command = .wifi(forget: true)
      }
    case "export":
      try expect(0, ExportOptions.usage)
      command = .export(try export.request(json: json))
    case "regions":
      try expect(1, "regions APP [--json]")
      command = .regions(app: rest[0])
    case "services":
      try expect(1, "services on|off")
      switch rest[0].lowercased() {
      case "on", "enable", "enabled", "true", "1": command = .services(enabled: true)
      case "off", "disable", "disabled", "false", "0": command = .services(enabled: false)
      default:
        throw UsageError(message: "services takes on or off, not '\(rest[0])'")
      }
    case "authorize":
      let usage = "authorize APP always|when-in-use|denied|reset [--approximate]"
      try expect(2, usage)
      guard let grant = Grant.parse(rest[1]) else {
        throw UsageError(
          message: "authorize takes always, when-in-use, denied or reset, not '\(rest[1])'")
      }
      if approximate, grant == .denied || grant == .reset {
        throw UsageError(message: "--approximate applies to always and when-in-use only")
      }
      command = .authorize(app: rest[0], grant: grant, approximate: approximate)
    default:
      throw UsageError(message: "unknown command '\(name)' (see locationctl --help)")
    }
    if approximate {
      guard case .authorize = command else {
        throw UsageError(message: "--approximate applies to authorize only")
      }
    }
    if let option = export.given.first {
      guard case .export = command else {
        throw UsageError(message: "\(option) applies to export only")
      }
    }
    return ControlOptions(command: command, json: json, socket: socket)
  }

  /// The help text.
  package static let helpText = """
    USAGE: locationctl [--json] [--socket PATH | --system] COMMAND [ARGUMENTS]

    Shows and changes what locationd (the location daemon) knows: sources, connected clients,
    apps, their authorization and regions.

    COMMANDS:
      status                      Sources, connected clients and apps
      apps                        Every app with its authorization, regions and pending events
      authorize APP GRANT         Store a decision for APP; GRANT is always, when-in-use, denied
                                  or reset (forget it: the app is asked again). The app's
                                  running managers are told at once.
          --approximate           With always or when-in-use: reduced accuracy (locations
                                  snapped to a grid of about 3 km)
      regions APP                 APP's monitored regions and their states
      sources                     The daemon's location sources
      services on|off             The global switch behind locationServicesEnabled()
      wifi                        The Wi-Fi access points learned from this machine's own fixes
      wifi forget                 Forget them all (learning starts again from nothing)
      wifi import FILE            Add the access points of an Ichnaea-format CSV (mac, lat, lon,
                                  radius, samples) that the daemon does not know yet
      agent                       Answer apps' authorization requests in this terminal; reads
                                  answers from standard input, ends at end of input (Ctrl-D)
      export --since WHEN [--until WHEN] --gpx|--geojson [-o FILE]
                                  Write the track history (history = yes in locationd.conf)
                                  from WHEN (included) until WHEN (excluded; default: all) as
                                  GPX 1.1 (one track) or GeoJSON (one Point feature a position)
                                  to FILE (-o, --output) or standard output. WHEN:
                                  2026-12-01T10:00:00Z (or with an offset, or a date: its
                                  midnight UTC), 90s, 30m, 24h, 7d, 2w (that long ago), now,
                                  or @SECONDS since 1970

    OPTIONS:
      --json                      Print JSON instead of a table (every command)
      --socket PATH               The daemon's socket (default: $CORELOCATION_DAEMON_SOCKET, else
                                  $XDG_RUNTIME_DIR/locationd/socket, else /run/locationd/socket)
      --system                    The system daemon's socket, /run/locationd/socket
      -h, --help                  Show this help

    APP is the app identifier locationd uses: the desktop-file-style id from its configuration,
    else the executable's path (see `locationctl apps`).

    EXIT STATUS:
      0 success
      1 the daemon answered with an error (or broke the protocol)
      2 usage error
      3 cannot connect to the daemon (not running, or no permission)
    """
}
