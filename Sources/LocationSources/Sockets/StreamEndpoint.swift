#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Where a stream source reads from.
enum StreamEndpoint: Sendable, Equatable {
  /// A TCP server.
  case tcp(host: String, port: Int)
  /// A Unix stream socket.
  case unix(path: String)
  /// A serial device or pseudo-terminal, in raw mode at a baud rate.
  case serial(path: String, baud: Int)

  /// Whether the descriptor is a socket (so writes use `send` with `MSG_NOSIGNAL`).
  var isSocket: Bool {
    switch self {
    case .tcp, .unix: return true
    case .serial: return false
    }
  }
}

/// Why a stream could not be opened, in words for people (no coordinates, no secrets).
struct StreamOpenError: Error, Sendable, Equatable {
  /// What went wrong.
  var message: String
  /// True when retrying cannot help (a path that is a regular file, a name too long).
  var isPermanent: Bool

  init(_ message: String, isPermanent: Bool = false) {
    self.message = message
    self.isPermanent = isPermanent
  }

  /// An error from `errno` after a failed call.
  static func errno(_ operation: String, _ code: Int32 = Glibc.errno) -> StreamOpenError {
    StreamOpenError("\(operation): \(SystemErrors.text(code))")
  }
}

/// `strerror` as a Swift string.
enum SystemErrors {
  static func text(_ code: Int32) -> String {
    guard let text = strerror(code) else { return "error \(code)" }
    return String(cString: text).lowercased()
  }
}
