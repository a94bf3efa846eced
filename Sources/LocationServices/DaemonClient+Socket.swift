import Foundation

/// An error of the daemon client's connection: a code, a message for people, and the `errno` behind
/// it when there is one.
struct DaemonClientError: Error, Sendable, CustomStringConvertible {
  /// What went wrong.
  enum Code: String, Sendable {
    /// No socket could be created or connected.
    case connect
    /// Writing to the daemon failed.
    case write
    /// The socket path does not fit in `sockaddr_un`.
    case pathTooLong
  }

  var code: Code
  var message: String
  var errno: Int32?

  var description: String { "\(code.rawValue): \(message)" }
}

/// One call per system call for the client's Unix stream socket, with `EINTR` retried and errors
/// turned into `DaemonClientError`.
enum DaemonClientSocket {
  /// Connects to a listening Unix stream socket.
  /// - Parameter path: the socket's path.
  /// - Returns: the connected descriptor (close-on-exec, blocking, with a 5 s send timeout so
  ///   that a daemon that stopped reading cannot hold the client's queue for long).
  static func connect(path: String) throws(DaemonClientError) -> Int32 {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    let capacity = MemoryLayout.size(ofValue: address.sun_path)
    guard bytes.count < capacity else {
      throw DaemonClientError(
        code: .pathTooLong, message: "the socket path \(path) is longer than \(capacity - 1) bytes")
    }
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
      for (index, byte) in bytes.enumerated() { raw[index] = byte }
      raw[bytes.count] = 0
    }
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else {
      let code = Foundation.errno
      throw DaemonClientError(
        code: .connect, message: "socket(): \(String(cString: strerror(code)))", errno: code)
    }
    let length = socklen_t(MemoryLayout<sockaddr_un>.size)
    var result: Int32
    repeat {
      result = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, length) }
      }
    } while result < 0 && Foundation.errno == EINTR
    guard result == 0 else {
      let code = Foundation.errno
      Glibc.close(fd)
      throw DaemonClientError(
        code: .connect, message: "cannot connect to \(path): \(String(cString: strerror(code)))",
        errno: code)
    }
    var timeout = timeval(tv_sec: 5, tv_usec: 0)
    _ = setsockopt(
      fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    return fd
  }

  /// Writes every byte (retrying `EINTR` and short writes), without `SIGPIPE`.
  /// - Parameters:
  ///   - fd: the connected descriptor.
  ///   - bytes: what to write.
  static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws(DaemonClientError) {
    var offset = 0
    while offset < bytes.count {
      let written = bytes.withUnsafeBytes { raw -> Int in
        guard let base = raw.baseAddress else { return 0 }
        return Glibc.send(fd, base + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
      }
      if written < 0 {
        let code = Foundation.errno
        if code == EINTR { continue }
        throw DaemonClientError(
          code: .write, message: "write to locationd: \(String(cString: strerror(code)))",
          errno: code)
      }
      offset += written
    }
  }

  /// Reads what is available (blocking until something is), retrying `EINTR`.
  /// - Parameters:
  ///   - fd: the connected descriptor.
  ///   - buffer: where the bytes go.
  /// - Returns: the number of bytes read; 0 at end of stream or on an error.
  static func read(_ fd: Int32, into buffer: inout [UInt8]) -> Int {
    while true {
      let count = buffer.withUnsafeMutableBytes { raw -> Int in
        guard let base = raw.baseAddress else { return 0 }
        return Glibc.read(fd, base, raw.count)
      }
      if count < 0 && Foundation.errno == EINTR { continue }
      return max(0, count)
    }
  }

  /// Ends both directions, which wakes a thread blocked in `read`.
  static func shutdown(_ fd: Int32) { _ = Glibc.shutdown(fd, Int32(SHUT_RDWR)) }

  /// Closes the descriptor.
  static func close(_ fd: Int32) { _ = Glibc.close(fd) }

  /// Whether something exists at a path (a socket counts).
  static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }
}
