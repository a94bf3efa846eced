import Foundation
import LocationProtocol

/// How a process chooses between `locationd` and embedded mode (issue 8).
///
/// | `CORELOCATION_DAEMON` | behaviour |
/// | --- | --- |
/// | unset, empty or `auto` | the daemon when its socket exists and it answers the hello within 5 s, else the embedded hub; also the embedded hub when the process names its own source with `CORELOCATION_SOURCE` (`whereami --source`, replays), which a daemon cannot honour |
/// | `off` (also `0`, `no`, `false`, `embedded`) | the embedded hub, even when a socket exists |
/// | `required` | the daemon; when it is missing or unreachable, no fallback: every service a manager starts fails with `CLError.locationUnknown` whose message says the daemon is required and not running, and the client keeps trying to connect (the daemon may be started later) |
///
/// Any other value is treated as `auto` (and logged). The socket: `$CORELOCATION_DAEMON_SOCKET` if
/// set, else `$XDG_RUNTIME_DIR/locationd/socket` if it exists, else `/run/locationd/socket` if it
/// exists. With `required` and no existing socket, every candidate is tried at each attempt.
///
/// Why `locationUnknown` for a required daemon that is missing: Apple's nearest case is a location
/// service that cannot produce a location right now but may later (`kCLErrorLocationUnknown`: "the
/// location manager was unable to obtain a location value right now"); `denied` would claim a
/// decision about the app that nobody made, and stop updates for good.
package enum LiveServiceSelection {
  /// The value of `CORELOCATION_DAEMON`.
  package enum Mode: String, Sendable, Equatable {
    /// Use the daemon when its socket exists, else embedded mode.
    case auto
    /// Embedded mode only.
    case off
    /// The daemon only; missing is an error.
    case required
  }

  /// What to run.
  package enum Choice: Sendable, Equatable {
    /// The embedded hub.
    case embedded
    /// A daemon client trying these sockets; `required` when there is no fallback.
    case daemon(socketPaths: [String], required: Bool)
  }

  /// The mode an environment asks for.
  /// - Parameter environment: the process environment.
  /// - Returns: the mode (`auto` for an unknown value).
  package static func mode(_ environment: [String: String]) -> Mode {
    switch environment["CORELOCATION_DAEMON"]?.lowercased() {
    case nil, "", "auto", "on", "1", "yes", "true": return .auto
    case "off", "0", "no", "false", "embedded": return .off
    case "required", "require": return .required
    case .some(let other):
      HubLog.write(.info, "daemon", "CORELOCATION_DAEMON=\(other) is not auto, off or required")
      return .auto
    }
  }

  /// The socket paths to consider, in order: the configured one alone, else the user daemon's and
  /// the system daemon's.
  /// - Parameter environment: the process environment.
  /// - Returns: the candidate paths (existing or not).
  package static func candidateSockets(_ environment: [String: String]) -> [String] {
    DaemonSocketPath.candidates(environment)
  }

  /// Decides what to run, without connecting.
  /// - Parameters:
  ///   - environment: the process environment.
  ///   - fileExists: whether a path exists (a socket counts).
  /// - Returns: the choice.
  package static func decide(
    environment: [String: String],
    fileExists: (String) -> Bool = { access($0, F_OK) == 0 }
  ) -> Choice {
    let candidates = candidateSockets(environment)
    let existing = candidates.first(where: fileExists)
    switch mode(environment) {
    case .off:
      return .embedded
    case .auto:
      if let source = environment["CORELOCATION_SOURCE"],
        !source.trimmingCharacters(in: .whitespaces).isEmpty
      {
        return .embedded
      }
      guard let existing else { return .embedded }
      return .daemon(socketPaths: [existing], required: false)
    case .required:
      return .daemon(socketPaths: existing.map { [$0] } ?? candidates, required: true)
    }
  }

  /// Chooses and makes the live service: a connected `DaemonClient`, else (in `auto` mode) the
  /// embedded hub; in `required` mode a `DaemonClient` in any case.
  /// - Parameters:
  ///   - environment: the process environment.
  ///   - timeout: how long to wait for the daemon's welcome, in seconds.
  ///   - embedded: makes the embedded service (normally `LocationHub.shared`).
  /// - Returns: the service.
  package static func choose(
    environment: [String: String], timeout: Double = 5,
    embedded: () -> any LocationService = { LocationHub.shared }
  ) -> any LocationService {
    switch decide(environment: environment) {
    case .embedded:
      return embedded()
    case .daemon(let paths, let required):
      let client = DaemonClient(socketPaths: paths, required: required)
      if client.waitForConnection(timeout: timeout) || required { return client }
      client.close()
      HubLog.write(.info, "daemon", "locationd did not answer at \(paths[0]); embedded mode")
      return embedded()
    }
  }
}

extension DaemonClient {
  /// What a client hears in `CORELOCATION_DAEMON=required` mode while the daemon is unreachable.
  static func requiredMessage(paths: [String], reason: String) -> String {
    "CORELOCATION_DAEMON=required, but locationd is not running or not reachable (\(reason); "
      + "socket: \(paths.joined(separator: " or "))). Start locationd (systemctl --user start "
      + "locationd) or unset CORELOCATION_DAEMON to use embedded mode"
  }
}
