import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Unix stream sockets for the fakes, the harnesses and the tests' own clients: one call each,
/// close-on-exec, failures thrown as `TestFailure` with `strerror`.
package enum UnixSocket {
  /// The address of `path`.
  /// - Throws: when the path does not fit `sun_path` (107 bytes and a NUL).
  static func address(_ path: String) throws -> sockaddr_un {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
      throw TestFailure("socket path too long: \(path)")
    }
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
      raw.copyBytes(from: bytes)
      raw[bytes.count] = 0
    }
    return address
  }

  /// A new socket and the address of `path`, passed to `body` (which returns 0 on success); the
  /// socket is closed when `body` fails.
  private static func make(
    _ path: String, _ what: String, _ body: (Int32, UnsafePointer<sockaddr>, socklen_t) -> Int32
  ) throws -> Int32 {
    var address = try address(path)
    let fd = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { throw TestFailure("socket: \(String(cString: strerror(errno)))") }
    let result = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        body(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
      }
    }
    guard result == 0 else {
      let message = String(cString: strerror(errno))
      close(fd)
      throw TestFailure("\(what) \(path): \(message)")
    }
    return fd
  }

  /// A socket bound to `path` and not listening (a stale socket file, once closed).
  package static func bound(path: String) throws -> Int32 {
    try make(path, "bind") { bind($0, $1, $2) }
  }

  /// A socket listening on `path`.
  package static func listening(path: String, backlog: Int32 = 8) throws -> Int32 {
    try make(path, "bind/listen") { bind($0, $1, $2) == 0 ? listen($0, backlog) : -1 }
  }

  /// A socket connected to `path`.
  package static func connected(path: String) throws -> Int32 {
    try make(path, "connect") { connect($0, $1, $2) }
  }

  /// Sets a receive timeout on `fd`: a guard against a hung peer, never a wait.
  package static func setReceiveTimeout(_ fd: Int32, seconds: Int) {
    var limit = timeval(tv_sec: seconds, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
  }

  /// Writes all of `bytes` (a broken peer ends it early: the reader sees that), `EINTR` retried,
  /// without SIGPIPE.
  package static func sendAll(_ fd: Int32, _ bytes: [UInt8]) {
    var offset = 0
    while offset < bytes.count {
      let written = bytes[offset...].withUnsafeBytes {
        send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
      }
      if written < 0, errno == EINTR { continue }
      if written <= 0 { return }
      offset += written
    }
  }
}
