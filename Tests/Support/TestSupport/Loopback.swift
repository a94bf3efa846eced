import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Network helpers for the tests.
package enum Loopback {
  /// A TCP port that was free a moment ago (bound to port 0 and closed again).
  package static func freePort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw TestFailure("socket: errno \(errno)") }
    defer { close(fd) }
    var address = loopbackAddress(port: 0)
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard bound == 0 else { throw TestFailure("bind: errno \(errno)") }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    guard
      withUnsafeMutablePointer(
        to: &address,
        {
          $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }) == 0
    else { throw TestFailure("getsockname: errno \(errno)") }
    return Int(UInt16(bigEndian: address.sin_port))
  }

  /// Waits until a TCP connection to 127.0.0.1:`port` succeeds (each probe is closed at once).
  ///
  /// - Parameters:
  ///   - port: The port a component was told to listen on.
  ///   - timeout: Seconds to keep trying.
  ///   - interval: Seconds between probes; 0 yields the processor instead (for a listener of this
  ///     process, which is ready in microseconds).
  /// - Returns: Whether a connection succeeded in time.
  package static func waitUntilAccepting(port: Int, timeout: Double, interval: Double = 0) -> Bool {
    let deadline = monotonicSeconds() + timeout
    while monotonicSeconds() < deadline {
      let probe = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
      var address = loopbackAddress(port: port)
      let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          connect(probe, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
      }
      close(probe)
      if connected == 0 { return true }
      if interval > 0 {
        // A wait on nothing, for `interval`: the component starts in another process.
        _ = poll(nil, 0, Int32(interval * 1000))
      } else {
        sched_yield()
      }
    }
    return false
  }

  package static func loopbackAddress(port: Int) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = UInt16(port).bigEndian
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    return address
  }

  /// Whether a TCP connection to 127.0.0.1:`port` succeeds now.
  package static func accepts(port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var address = loopbackAddress(port: port)
    return withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
      }
    }
  }

  /// A TCP socket listening on 127.0.0.1 (a free port, `SO_REUSEADDR`, close-on-exec) and its
  /// port.
  package static func listening(backlog: Int32 = 8) throws -> (fd: Int32, port: Int) {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { throw TestFailure("socket: errno \(errno)") }
    var one: Int32 = 1
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
    var address = loopbackAddress(port: 0)
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let ok = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(fd, $0, length) == 0 && listen(fd, backlog) == 0 && getsockname(fd, $0, &length) == 0
      }
    }
    guard ok else {
      let message = String(cString: strerror(errno))
      close(fd)
      throw TestFailure("bind/listen: \(message)")
    }
    return (fd, Int(UInt16(bigEndian: address.sin_port)))
  }
}
