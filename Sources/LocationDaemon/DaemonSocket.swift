import Foundation
import LocationServices

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// A failed system call of the daemon, with `errno` and where it happened.
package struct DaemonSystemError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The operation, such as `bind /run/locationd/socket`.
  package var operation: String
  /// `errno` after the call.
  package var errno: Int32

  /// Creates an error.
  /// - Parameters:
  ///   - operation: What was attempted.
  ///   - errno: The error number.
  package init(operation: String, errno: Int32) {
    self.operation = operation
    self.errno = errno
  }

  /// The operation and `strerror`'s text.
  package var description: String { "\(operation): \(String(cString: strerror(errno)))" }
}

/// Thin wrappers over the socket calls the server makes: one function per call, `EINTR` retried,
/// errors as `DaemonSystemError` (CONTRIBUTING.md, "How the code is written").
enum DaemonSyscall {
  /// Fills a `sockaddr_un` with a path; nil when the path does not fit (108 bytes with the NUL).
  static func withAddress<R>(
    _ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> R
  ) -> R? {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    let capacity = MemoryLayout.size(ofValue: address.sun_path)
    guard !bytes.isEmpty, bytes.count < capacity, !bytes.contains(0) else { return nil }
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
      for (index, byte) in bytes.enumerated() { raw[index] = byte }
      raw[bytes.count] = 0
    }
    let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + 1)
    return withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) }
    }
  }

  /// A new Unix stream socket, close-on-exec, optionally non-blocking.
  static func socket(nonBlocking: Bool) throws(DaemonSystemError) -> Int32 {
    var type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
    if nonBlocking { type |= Int32(SOCK_NONBLOCK.rawValue) }
    let fd = Glibc.socket(AF_UNIX, type, 0)
    guard fd >= 0 else { throw DaemonSystemError(operation: "socket", errno: Glibc.errno) }
    return fd
  }

  /// Binds a socket to a path.
  static func bind(_ fd: Int32, path: String) throws(DaemonSystemError) {
    let result = withAddress(path) { Glibc.bind(fd, $0, $1) }
    guard let result else {
      throw DaemonSystemError(operation: "bind \(path) (path too long)", errno: ENAMETOOLONG)
    }
    guard result == 0 else {
      throw DaemonSystemError(operation: "bind \(path)", errno: Glibc.errno)
    }
  }

  /// Connects a blocking socket to a path (used to detect a running daemon, and by tests).
  static func connect(_ fd: Int32, path: String) throws(DaemonSystemError) {
    while true {
      let result = withAddress(path) { Glibc.connect(fd, $0, $1) }
      guard let result else {
        throw DaemonSystemError(operation: "connect \(path) (path too long)", errno: ENAMETOOLONG)
      }
      if result == 0 { return }
      if Glibc.errno == EINTR { continue }
      throw DaemonSystemError(operation: "connect \(path)", errno: Glibc.errno)
    }
  }

  /// Starts listening.
  static func listen(_ fd: Int32, backlog: Int32) throws(DaemonSystemError) {
    guard Glibc.listen(fd, backlog) == 0 else {
      throw DaemonSystemError(operation: "listen", errno: Glibc.errno)
    }
  }

  /// The lowest number a descriptor that peers can multiply (a connection, its pidfd) gets when
  /// the descriptor limit allows: the numbers below stay for the daemon's own descriptors.
  /// libmosquitto's network loop waits with select(2), which refuses a socket numbered
  /// `FD_SETSIZE` (1024) or above; without this, a local program holding a few hundred
  /// connections would leave the MQTT publisher, at its next reconnection, a socket it can
  /// never use (issue 18; `docs/security.md`, "Caps").
  static let firstPeerDescriptor: Int32 = 1024

  /// `fd` moved to `firstPeerDescriptor` or above (close-on-exec), the low number freed; `fd`
  /// itself when it is there already or the limit leaves no room (then nothing changes).
  static func movedHigh(_ fd: Int32) -> Int32 {
    guard fd >= 0, fd < firstPeerDescriptor else { return fd }
    let high = fcntl(fd, F_DUPFD_CLOEXEC, firstPeerDescriptor)
    guard high >= 0 else { return fd }
    Glibc.close(fd)
    return high
  }

  /// Accepts one connection, non-blocking and close-on-exec, numbered `firstPeerDescriptor` or
  /// above where the limit allows; nil when none is waiting.
  static func accept(_ fd: Int32) throws(DaemonSystemError) -> Int32? {
    while true {
      let client: Int32
      if let accept4 = acceptWithFlags {
        // Close-on-exec from the start: a launch command started on another thread meanwhile
        // never inherits the connection.
        client = accept4(fd, nil, nil, Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue))
      } else {
        client = Glibc.accept(fd, nil, nil)
        if client >= 0 {
          _ = fcntl(client, F_SETFD, FD_CLOEXEC)
          _ = fcntl(client, F_SETFL, fcntl(client, F_GETFL) | O_NONBLOCK)
        }
      }
      if client >= 0 { return movedHigh(client) }
      switch Glibc.errno {
      case EINTR: continue
      case EAGAIN, EWOULDBLOCK, ECONNABORTED, EPROTO: return nil
      default: throw DaemonSystemError(operation: "accept", errno: Glibc.errno)  // an errno
      }
    }
  }

  /// The outcome of a non-blocking read.
  enum ReadResult {
    /// This many bytes were read.
    case data(Int)
    /// Nothing to read now.
    case wouldBlock
    /// The peer closed its end (or the connection broke).
    case closed
  }

  /// Reads into a buffer without blocking.
  static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) -> ReadResult {
    while true {
      let count = Glibc.read(fd, buffer.baseAddress, buffer.count)
      if count > 0 { return .data(count) }
      if count == 0 { return .closed }
      switch Glibc.errno {
      case EINTR: continue
      case EAGAIN, EWOULDBLOCK: return .wouldBlock
      default: return .closed  // an errno
      }
    }
  }

  /// Writes without blocking and without `SIGPIPE`; returns the bytes written (0 when the socket
  /// is full), or nil when the connection is broken.
  static func send(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int? {
    guard bytes.count > 0 else { return 0 }
    while true {
      let count = Glibc.send(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
      if count >= 0 { return count }
      switch Glibc.errno {
      case EINTR: continue
      case EAGAIN, EWOULDBLOCK: return 0
      default: return nil  // an errno
      }
    }
  }

  /// The peer's credentials (`SO_PEERCRED`): pid, uid, gid.
  static func peerCredentials(_ fd: Int32) throws(DaemonSystemError) -> (
    pid: Int32, uid: UInt32, gid: UInt32
  ) {
    // `struct ucred` (pid_t, uid_t, gid_t: three 32-bit integers, socket(7)) is hidden behind
    // _GNU_SOURCE in Swift's Glibc module; a tuple has the same layout.
    var credentials: (Int32, UInt32, UInt32) = (0, 0, 0)
    var length = socklen_t(MemoryLayout<(Int32, UInt32, UInt32)>.size)
    guard getsockopt(fd, SOL_SOCKET, Self.peerCredentialsOption, &credentials, &length) == 0,
      length == socklen_t(MemoryLayout<(Int32, UInt32, UInt32)>.size)
    else {
      throw DaemonSystemError(operation: "getsockopt SO_PEERCRED", errno: Glibc.errno)
    }
    return credentials
  }

  /// `SO_PEERCRED` (socket(7); 17 on every Linux architecture but a few not supported here).
  static let peerCredentialsOption: Int32 = 17

  /// The executable of a process (`readlink /proc/PID/exe`), without the kernel's ` (deleted)`
  /// suffix for a file replaced since it was started.
  static func executable(pid: Int32) -> String? {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let count = readlink("/proc/\(pid)/exe", &buffer, buffer.count - 1)
    guard count > 0 else { return nil }
    var path = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    if path.hasSuffix(" (deleted)") { path.removeLast(" (deleted)".count) }
    return path
  }

  /// A non-blocking, close-on-exec pipe: (read end, write end).
  static func pipe() throws(DaemonSystemError) -> (Int32, Int32) {
    // A socket pair, not pipe2 (hidden behind _GNU_SOURCE in Swift's Glibc module): created
    // close-on-exec and non-blocking in one call.
    var fds: [Int32] = [0, 0]
    let type =
      Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
    guard socketpair(AF_UNIX, type, 0, &fds) == 0 else {
      throw DaemonSystemError(operation: "socketpair", errno: Glibc.errno)
    }
    return (fds[0], fds[1])
  }

  private typealias Accept4 =
    @convention(c) (Int32, UnsafeMutablePointer<sockaddr>?, UnsafeMutablePointer<socklen_t>?, Int32)
    -> Int32

  /// `accept4(2)`, looked up with `dlsym` (a GNU extension Swift's Glibc module does not show;
  /// glibc has had it since 2.10); nil where it is missing, and `accept` then `fcntl` is used.
  private static let acceptWithFlags: Accept4? = {
    guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "accept4") else { return nil }
    return unsafeBitCast(symbol, to: Accept4.self)
  }()

  /// Closes a descriptor (errors other than `EBADF` are ignored: the descriptor is gone anyway).
  static func close(_ fd: Int32) { _ = Glibc.close(fd) }
}
