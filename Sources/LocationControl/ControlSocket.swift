import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// A connected Unix stream socket to locationd, read and written as lines.
///
/// Owned by one thread (the command's); not `Sendable`. Writes block (the daemon reads its
/// control connections promptly); reads wait with `poll(2)` up to a deadline, so a daemon that
/// never answers ends the command with an error instead of a hang.
final class ControlSocket {
  /// The longest line accepted from the daemon. Replies to `status` or `apps` on a daemon with
  /// many apps, and to `regions` for an app with 50,000 regions, are long, so this is well above
  /// the daemon's own 64 KiB limit for incoming lines (the same as `DaemonClient`'s).
  static let maximumLineLength = 64 << 20

  /// The file descriptor.
  let fd: Int32
  /// The path connected to.
  let path: String
  private var buffer: [UInt8] = []
  private var closed = false

  private init(fd: Int32, path: String) {
    self.fd = fd
    self.path = path
  }

  deinit { close(fd) }

  /// What to say when the daemon cannot be reached: how to start it.
  static func startHint(path: String) -> String {
    if path == ControlOptions.systemSocket {
      return "start the system daemon with `sudo systemctl start locationd` "
        + "(or `sudo locationd --system --foreground`)"
    }
    return "start it with `locationd --foreground` (or `systemctl --user start locationd`), "
      + "or name another socket with --socket PATH (--system for the system daemon)"
  }

  /// Connects to the socket at `path`.
  ///
  /// - Parameter path: The socket's path.
  /// - Returns: The connection.
  /// - Throws: `ControlError` `.cannotConnect`, naming the path, the reason and how to start
  ///   locationd.
  static func connect(path: String) throws(ControlError) -> ControlSocket {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    let capacity = MemoryLayout.size(ofValue: address.sun_path)
    guard !bytes.isEmpty, bytes.count < capacity else {
      throw ControlError(
        .cannotConnect,
        "cannot connect to locationd at \(path): the path must be 1 to \(capacity - 1) bytes")
    }
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
      raw.copyBytes(from: bytes)
      raw[bytes.count] = 0
    }
    let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
    let fd = socket(AF_UNIX, type, 0)
    guard fd >= 0 else {
      throw ControlError(.cannotConnect, "cannot create a socket: \(Self.reason(errno))")
    }
    let result = withUnsafePointer(to: &address) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
        retryingInterrupts {
          Glibc.connect(fd, socketAddress, socklen_t(MemoryLayout<sockaddr_un>.size))
        }
      }
    }
    guard result == 0 else {
      let code = errno
      close(fd)
      var message = "cannot connect to locationd at \(path): \(Self.reason(code))"
      if code == EACCES || code == EPERM {
        message += " (the socket belongs to another user; is this the right daemon?)"
      } else {
        message += "; is locationd running? " + startHint(path: path)
      }
      throw ControlError(.cannotConnect, message)
    }
    return ControlSocket(fd: fd, path: path)
  }

  /// Writes one line (a newline is added). `MSG_NOSIGNAL`: a write to a daemon that has gone
  /// fails with `EPIPE` instead of killing the tool with `SIGPIPE`.
  ///
  /// - Parameter line: The line, without its newline.
  /// - Throws: `ControlError` `.io` when the write fails (the daemon closed the connection).
  func send(_ line: String) throws(ControlError) {
    var bytes = Array(line.utf8)
    bytes.append(0x0A)
    var offset = 0
    while offset < bytes.count {
      let written = bytes.withUnsafeBytes { raw in
        retryingInterrupts {
          Glibc.send(
            fd, raw.baseAddress.map { $0 + offset }, raw.count - offset, Int32(MSG_NOSIGNAL))
        }
      }
      guard written > 0 else {
        throw ControlError(.io, "cannot write to locationd at \(path): \(Self.reason(errno))")
      }
      offset += written
    }
  }

  /// Returns the next complete line if one is buffered, without reading.
  func bufferedLine() throws(ControlError) -> String? {
    guard let newline = buffer.firstIndex(of: 0x0A) else {
      if buffer.count > Self.maximumLineLength {
        throw ControlError(.protocolViolation, "locationd sent a line longer than 64 MiB")
      }
      return nil
    }
    let line = String(decoding: buffer[..<newline], as: UTF8.self)
    buffer.removeSubrange(...newline)
    return line
  }

  /// Reads what is available now (one `read`), after `poll` said the socket is readable.
  ///
  /// - Returns: False at end of file (the daemon closed the connection).
  /// - Throws: `ControlError` `.io` when the read fails.
  func fill() throws(ControlError) -> Bool {
    if closed { return false }
    var chunk = [UInt8](repeating: 0, count: 65_536)
    let count = chunk.withUnsafeMutableBytes { raw in
      retryingInterrupts { read(fd, raw.baseAddress, raw.count) }
    }
    if count < 0 {
      throw ControlError(.io, "cannot read from locationd at \(path): \(Self.reason(errno))")
    }
    if count == 0 {
      closed = true
      return false
    }
    buffer.append(contentsOf: chunk[..<count])
    return true
  }

  /// Reads the next line, waiting up to `timeout` seconds for it.
  ///
  /// - Parameter timeout: The longest wait, in seconds.
  /// - Returns: The line, or nil when the daemon closed the connection.
  /// - Throws: `ControlError` when reading fails, the line is too long or the time is up.
  func readLine(timeout: Double) throws(ControlError) -> String? {
    let deadline = monotonicSeconds() + timeout
    while true {
      if let line = try bufferedLine() { return line }
      let remaining = deadline - monotonicSeconds()
      guard remaining > 0 else {
        throw ControlError(
          .protocolViolation, "locationd at \(path) did not answer within \(Int(timeout)) s")
      }
      var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
      let ready = retryingInterrupts { poll(&descriptor, 1, Int32(min(remaining * 1000, 60_000))) }
      if ready < 0 {
        throw ControlError(.io, "cannot wait for locationd: \(Self.reason(errno))")
      }
      if ready == 0 { continue }
      guard try fill() else {
        if buffer.isEmpty { return nil }
        // A last line without its newline: the connection ended in the middle of a message.
        throw ControlError(.protocolViolation, "locationd closed the connection mid-message")
      }
    }
  }

  /// The text for an `errno` value.
  static func reason(_ code: Int32) -> String {
    String(cString: strerror(code))
  }
}

/// Calls `body` until it does not fail with `EINTR`.
func retryingInterrupts<T: BinaryInteger>(_ body: () -> T) -> T {
  while true {
    let result = body()
    if result >= 0 || errno != EINTR { return result }
  }
}

/// Seconds on the monotonic clock.
func monotonicSeconds() -> Double {
  var now = timespec()
  clock_gettime(CLOCK_MONOTONIC, &now)
  return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}
