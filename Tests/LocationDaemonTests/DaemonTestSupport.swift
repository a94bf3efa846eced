import Foundation
import Geodesy
import LocationDaemon
import LocationEngine
import LocationModel
import LocationProtocol
import LocationServices
import LocationStore
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

/// Seconds on `CLOCK_MONOTONIC`, for deadlines.
private func monotonicNow() -> Double { monotonicSeconds() }

/// An in-process daemon on a private socket, its hubs and source pool on a `ManualClock`, with one
/// scripted source the test drives.
final class DaemonFixture {
  let directory: String
  let socketPath: String
  let clock = ManualClock()
  let source = ScriptedSource()
  let store: LocationStore
  let server: DaemonServer
  /// This test process's app identifier (its executable), as the daemon sees it.
  let app = HubConfiguration.executablePath()

  init(
    policy: AuthorizationPolicy = .grant, store: LocationStore? = nil,
    directory: String? = nil, configure: (inout DaemonConfiguration) -> Void = { _ in }
  ) throws {
    DaemonLog.enabled.store(false, ordering: .relaxed)
    let directory =
      directory ?? NSTemporaryDirectory() + "ld-" + String(UUID().uuidString.prefix(8))
    self.directory = directory
    socketPath = directory + "/run/locationd/socket"
    self.store = try store ?? LocationStore.inMemory()
    var configuration = DaemonConfiguration(
      socketPath: socketPath, storePath: directory + "/store.sqlite")
    configuration.policy = policy
    configure(&configuration)
    server = DaemonServer(
      configuration: configuration, store: self.store, sources: [source], clock: clock,
      daemonUID: geteuid(), environment: [:])
    try server.start()
  }

  /// Stops the server and removes the directory.
  func stop() {
    server.stop()
    try? FileManager.default.removeItem(atPath: directory)
  }

  /// A raw connection.
  func connect() throws -> TestPeer { try TestPeer(path: socketPath) }

  /// A connection that said hello in a role and got its welcome.
  func peer(_ role: DaemonRole) throws -> (TestPeer, DaemonWelcome) {
    let peer = try connect()
    peer.send(.hello(version: 1, role: role))
    guard case .welcome(let welcome) = try peer.next() else {
      throw TestFailure("no welcome")
    }
    return (peer, welcome)
  }

  /// An app connection with manager 1 registered.
  func connectApp(register client: Int? = 1) throws -> TestPeer {
    let (peer, _) = try peer(.app)
    if let client {
      peer.send(.register(client: client))
      _ = try peer.sync()
    }
    return peer
  }

  /// Polls the daemon (over a control connection) until a condition on the app list holds.
  func waitForApps(_ condition: ([DaemonAppInfo]) -> Bool) throws -> [DaemonAppInfo] {
    let (control, _) = try peer(.control)
    let deadline = monotonicNow() + 10
    var id = 1000
    while monotonicNow() < deadline {
      id += 1
      control.send(.apps(id: id))
      if case .reply(id, .apps(let apps)) = try control.next(), condition(apps) { return apps }
    }
    throw TestFailure("the app list never reached the expected state")
  }
}

/// One raw connection to the daemon: writes lines, reads lines with a deadline on readiness.
final class TestPeer {
  let fd: Int32
  private let reader: DeadlineLineReader
  private var nextPing = 1_000_000

  init(path: String) throws {
    fd = try UnixSocket.connected(path: path)
    reader = DeadlineLineReader(fd: fd)
  }

  deinit { Glibc.close(fd) }

  /// Writes bytes as they are.
  func sendRaw(_ bytes: [UInt8]) { UnixSocket.sendAll(fd, bytes) }

  /// Writes a line (the newline is added).
  func send(_ line: String) { sendRaw(Array((line + "\n").utf8)) }

  /// Writes a message.
  func send(_ message: DaemonMessage) { sendRaw(DaemonProtocol.encode(message)) }

  /// Closes the writing half (the daemon sees end of stream).
  func shutdownWrite() { Glibc.shutdown(fd, Int32(SHUT_WR)) }

  /// The next line, or nil at end of stream; throws when nothing comes before the deadline.
  func readLine(timeout: Double = 10) throws -> [UInt8]? {
    do {
      return try reader.next(timeout: timeout)
    } catch {
      throw TestFailure("\(error)")
    }
  }

  /// The next message; throws at end of stream or on a line that does not decode.
  func next(timeout: Double = 10) throws -> DaemonMessage {
    guard let line = try readLine(timeout: timeout) else {
      throw TestFailure("the connection was closed")
    }
    return try DaemonProtocol.decode(line: line)
  }

  /// Sends a ping and returns every message that arrived before its reply.
  func sync() throws -> [DaemonMessage] {
    nextPing += 1
    let id = nextPing
    send(.ping(id: id))
    var messages: [DaemonMessage] = []
    while true {
      let message = try next()
      if message == .reply(id: id, .done) { return messages }
      messages.append(message)
    }
  }

  /// Reads until end of stream; returns the messages read on the way.
  func readUntilClosed() throws -> [DaemonMessage] {
    var messages: [DaemonMessage] = []
    while let line = try readLine() {
      messages.append(try DaemonProtocol.decode(line: line))
    }
    return messages
  }
}

extension DaemonMessage {
  /// The error code, if this is an error.
  var errorCode: DaemonErrorCode? {
    if case .error(let error) = self { return error.code }
    return nil
  }

  /// The locations, if this is a locations delivery.
  var fixes: [Fix]? {
    if case .locations(_, let fixes) = self { return fixes }
    return nil
  }
}
