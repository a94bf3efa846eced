import Foundation
import LocationServices
import Synchronization
import TestSupport

/// A stand-in for `locationd` in tests: a real Unix socket in a private temp directory, one
/// connection at a time, speaking raw protocol lines. It answers `hello` with `welcome` (the line
/// set in `welcome`); everything else it records for the test to inspect.
final class FakeDaemon: Sendable {
  private struct State {
    var connection: Int32?
    var connections = 0
    var received: [String] = []
    var stopped = false
  }

  /// The socket's path.
  let path: String
  let directory: String
  /// The line sent in answer to `hello`.
  let welcome: Mutex<String>
  private let listener: Int32
  private let state = Mutex(State())

  /// A welcome for an app with this authorization status and these raw region entries.
  static func welcomeLine(status: Int = 4, regions: [String] = []) -> String {
    #"{"type":"welcome","version":1,"app":"org.example.Test","uid":1000,"#
      + #""authorization":{"status":\#(status),"accuracy":0,"servicesEnabled":true},"#
      + #""regions":[\#(regions.joined(separator: ","))],"maximumRegionRadius":1000000,"#
      + #""headingAvailable":false}"#
  }

  /// A raw region entry for a welcome.
  static func regionEntry(
    _ identifier: String, group: String = "manager", state: String = "unknown"
  ) -> String {
    #"{"group":"\#(group)","region":{"identifier":"\#(identifier)","latitude":52.1,"#
      + #""longitude":5.1,"radius":100,"hysteresis":5,"notifyOnEntry":true,"notifyOnExit":true},"#
      + #""state":"\#(state)"}"#
  }

  /// A raw fix.
  static func fixLine(latitude: Double, longitude: Double, time: Double = 1_767_225_600) -> String {
    #"{"latitude":\#(latitude),"longitude":\#(longitude),"altitude":null,"#
      + #""ellipsoidalAltitude":null,"horizontalAccuracy":5,"verticalAccuracy":-1,"speed":-1,"#
      + #""speedAccuracy":-1,"course":-1,"courseAccuracy":-1,"time":\#(time),"#
      + #""quality":"autonomous","satellitesUsed":null,"floor":null,"isSimulated":false,"#
      + #""source":"fake://"}"#
  }

  /// Listens on a new socket; `listen: false` leaves a bound socket nobody accepts on (a stale
  /// socket file).
  /// `socketIn` puts the socket in that directory (made if missing) instead of a new one.
  init(
    welcome: String = FakeDaemon.welcomeLine(), listen: Bool = true, socketIn: String? = nil
  ) throws {
    if let socketIn {
      mkdir(socketIn, 0o700)
      directory = socketIn
    } else {
      var template = Array("/tmp/cl-daemon-XXXXXX".utf8CString)
      guard let made = mkdtemp(&template) else { throw FakeDaemonError("mkdtemp failed") }
      directory = String(cString: made)
    }
    path = directory + "/socket"
    self.welcome = Mutex(welcome)
    listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard listener >= 0 else { throw FakeDaemonError("socket failed") }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
      for (index, byte) in bytes.enumerated() { raw[index] = byte }
      raw[bytes.count] = 0
    }
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
      }
    }
    guard bound == 0 else { throw FakeDaemonError("bind failed: \(errno)") }
    guard listen else { return }
    guard Glibc.listen(listener, 8) == 0 else { throw FakeDaemonError("listen failed") }
    Thread.detachNewThread { [self] in acceptLoop() }
  }

  private func acceptLoop() {
    while true {
      let fd = accept(listener, nil, nil)
      if fd < 0 {
        if errno == EINTR { continue }
        return
      }
      let stopped = state.withLock { state -> Bool in
        state.connection = fd
        state.connections += 1
        return state.stopped
      }
      if stopped {
        close(fd)
        return
      }
      Thread.detachNewThread { [self] in readLoop(fd) }
    }
  }

  private func readLoop(_ fd: Int32) {
    var pending: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
      let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
      if count <= 0 { break }
      pending.append(contentsOf: buffer[0..<count])
      while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
        let line = String(decoding: pending[..<newline], as: UTF8.self)
        pending.removeSubrange(...newline)
        state.withLock { $0.received.append(line) }
        if line.contains(#""type":"hello""#) { send(welcome.withLock { $0 }, on: fd) }
      }
    }
    state.withLock { state in
      if state.connection == fd { state.connection = nil }
    }
    close(fd)
  }

  private func send(_ line: String, on fd: Int32) {
    let bytes = Array((line + "\n").utf8)
    var offset = 0
    while offset < bytes.count {
      let written = bytes.withUnsafeBytes {
        Glibc.send(
          fd, $0.baseAddress.map { $0 + offset }, bytes.count - offset, Int32(MSG_NOSIGNAL))
      }
      if written <= 0 { return }
      offset += written
    }
  }

  /// Sends a line on the current connection.
  func send(_ line: String) {
    guard let fd = state.withLock({ $0.connection }) else { return }
    send(line, on: fd)
  }

  /// Drops the current connection (the client sees the daemon go away).
  func dropConnection() {
    if let fd = state.withLock({ $0.connection }) { shutdown(fd, Int32(SHUT_RDWR)) }
  }

  /// How many connections were accepted.
  var connections: Int { state.withLock { $0.connections } }

  /// Whether a connection is open now.
  var isConnected: Bool { state.withLock { $0.connection != nil } }

  /// Every line received, in order.
  var received: [String] { state.withLock { $0.received } }

  /// Forgets the lines received so far.
  func clearReceived() { state.withLock { $0.received.removeAll() } }

  /// The received messages of a type, as JSON objects.
  func messages(_ type: String) -> [[String: Any]] {
    received.compactMap { line -> [String: Any]? in
      guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)),
        let dictionary = object as? [String: Any], dictionary["type"] as? String == type
      else { return nil }
      return dictionary
    }
  }

  /// Stops listening, drops the connection and removes the socket and its directory.
  func stop() {
    let fd = state.withLock { state -> Int32? in
      state.stopped = true
      return state.connection
    }
    if let fd { shutdown(fd, Int32(SHUT_RDWR)) }
    shutdown(listener, Int32(SHUT_RDWR))
    close(listener)
    unlink(path)
    rmdir(directory)
  }
}

struct FakeDaemonError: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}
