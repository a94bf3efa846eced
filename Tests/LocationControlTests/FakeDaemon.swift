import Foundation
import LocationControl
import Synchronization
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

/// A stand-in for locationd in tests: a Unix socket in a private temporary directory whose one
/// connection is driven by a script of raw protocol lines, on a thread of its own.
///
/// The socket listens before the initializer returns, so a client connecting afterwards never
/// races it. Reads on the connection carry a 30 s timeout as a guard against a hang (never a wait:
/// every script ends long before).
final class FakeDaemon: Sendable {
  /// The connected peer, as the script sees it.
  final class Peer {
    let fd: Int32
    private var buffer: [UInt8] = []
    private let log: LineLog

    init(fd: Int32, log: LineLog) {
      self.fd = fd
      self.log = log
    }

    /// The next line from the client (without its newline); nil at end of file or timeout.
    func readLine() -> String? {
      while true {
        if let newline = buffer.firstIndex(of: 0x0A) {
          let line = String(decoding: buffer[..<newline], as: UTF8.self)
          buffer.removeSubrange(...newline)
          log.lines.withLock { $0.append(line) }
          return line
        }
        var chunk = [UInt8](repeating: 0, count: 4096)
        let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count < 0, errno == EINTR { continue }
        guard count > 0 else { return nil }
        buffer.append(contentsOf: chunk[..<count])
      }
    }

    /// Sends one raw line (a newline is added).
    func send(_ line: String) {
      let bytes = Array((line + "\n").utf8)
      var offset = 0
      while offset < bytes.count {
        let written = bytes.withUnsafeBytes {
          Glibc.send(fd, $0.baseAddress.map { $0 + offset }, $0.count - offset, Int32(MSG_NOSIGNAL))
        }
        if written < 0, errno == EINTR { continue }
        guard written > 0 else { return }
        offset += written
      }
    }
  }

  /// The socket's path.
  let path: String
  /// The private directory holding it.
  let directory: String
  private let listener: Int32
  private let log = LineLog()
  private let done = DispatchSemaphore(value: 0)

  /// A welcome as locationd sends it to a control or agent connection.
  static let welcome =
    #"{"type":"welcome","version":1,"app":"","uid":0,"authorization":{"status":0,"accuracy":0,"#
    + #""servicesEnabled":true},"regions":[],"maximumRegionRadius":1000000,"#
    + #""headingAvailable":false}"#

  /// Starts listening and runs `script` on the first connection, on a thread of its own.
  init(script: @escaping @Sendable (Peer) -> Void) throws {
    // Short, so the socket path stays far below sun_path's 108 bytes.
    directory = "/tmp/lctl-" + UUID().uuidString.prefix(13)
    try FileManager.default.createDirectory(
      atPath: directory, withIntermediateDirectories: false,
      attributes: [.posixPermissions: 0o700])
    path = directory + "/socket"
    listener = try Self.listen(path: path)
    let listener = listener
    let log = log
    let done = done
    let thread = Thread {
      defer { done.signal() }
      var descriptor = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
      guard poll(&descriptor, 1, 30_000) == 1 else { return }
      let connection = accept(listener, nil, nil)
      guard connection >= 0 else { return }
      defer { close(connection) }
      var limit = timeval(tv_sec: 30, tv_usec: 0)
      setsockopt(
        connection, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
      script(Peer(fd: connection, log: log))
    }
    thread.start()
  }

  /// Waits for the script to end and returns every line the client sent.
  func finish() -> [String] {
    done.wait()
    close(listener)
    try? FileManager.default.removeItem(atPath: directory)
    return log.lines.withLock { $0 }
  }

  struct Failure: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
  }

  static func listen(path: String) throws -> Int32 {
    let fd = try bound(path: path)
    guard Glibc.listen(fd, 4) == 0 else {
      close(fd)
      throw Failure(message: "listen failed: \(errno)")
    }
    return fd
  }

  /// A Unix stream socket bound to `path`, not listening.
  static func bound(path: String) throws -> Int32 {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { throw Failure(message: "socket failed") }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
      raw.copyBytes(from: bytes)
      raw[bytes.count] = 0
    }
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
      }
    }
    guard bound == 0 else {
      close(fd)
      throw Failure(message: "bind failed: \(errno)")
    }
    return fd
  }
}

/// The lines a fake daemon received.
final class LineLog: Sendable {
  let lines = Mutex<[String]>([])
}

/// Collects what `locationctl` writes.
final class Captured: Sendable {
  private let outputText = Mutex("")
  private let errorText = Mutex("")

  /// Standard output so far.
  var output: String { outputText.withLock { $0 } }
  /// Standard error so far.
  var error: String { errorText.withLock { $0 } }

  /// An I/O set writing here, reading from `input`.
  func io(input: Int32 = -1, onOutput: (@Sendable (String) -> Void)? = nil) -> ControlIO {
    ControlIO(
      input: input,
      output: { [self] text in
        outputText.withLock { $0 += text }
        onOutput?(text)
      },
      error: { [self] text in errorText.withLock { $0 += text } })
  }
}
