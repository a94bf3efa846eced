#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Where `locationd` listens, and where its clients look (the one place these paths are written).
///
/// - The system daemon: `/run/locationd/socket`.
/// - A user daemon: `$XDG_RUNTIME_DIR/locationd/socket` when `XDG_RUNTIME_DIR` is an absolute path,
///   else `/run/user/UID/locationd/socket` (where systemd puts the user's runtime directory).
/// - Clients (`CLLocationManager`, `locationctl`): `$CORELOCATION_DAEMON_SOCKET` when set and not
///   empty, else the user daemon's socket, then the system daemon's.
package enum DaemonSocketPath {
  /// The system daemon's socket.
  package static let system = "/run/locationd/socket"

  /// The socket of a daemon.
  /// - Parameters:
  ///   - system: Whether for the system daemon.
  ///   - environment: The process environment.
  /// - Returns: The path.
  package static func daemon(system: Bool, environment: [String: String]) -> String {
    if system { return Self.system }
    let runtime =
      environment["XDG_RUNTIME_DIR"].flatMap { $0.hasPrefix("/") ? $0 : nil }
      ?? "/run/user/\(getuid())"
    return runtime + "/locationd/socket"
  }

  /// The sockets a client considers, in order: the configured one alone, else the user daemon's
  /// and the system daemon's (existing or not).
  /// - Parameter environment: The process environment.
  /// - Returns: The candidate paths.
  package static func candidates(_ environment: [String: String]) -> [String] {
    if let path = environment["CORELOCATION_DAEMON_SOCKET"], !path.isEmpty { return [path] }
    return [daemon(system: false, environment: environment), system]
  }
}
