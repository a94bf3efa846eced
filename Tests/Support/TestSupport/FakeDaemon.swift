import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// A stand-in for `locationd` in tests: a Unix socket in a private temporary directory, speaking
/// raw protocol lines. The socket listens before the initializer returns, so a client connecting
/// afterwards never races it. Two ways to drive it:
///
/// - Answering (`init(welcome:listen:socketIn:)`), for clients that stay and reconnect (an app's
///   `DaemonClient`): every connection is answered `welcome` to its `hello`; every line a client
///   sends is recorded (`received`, `messages(_:)`), and the test sends lines on the current
///   connection (`send(_:)`), drops it (`dropConnection()`) and stops the fake (`stop()`).
/// - Scripted (`init(script:)`), for one-shot clients (`locationctl`): the first connection is
///   driven by a script on a thread of its own, its reads guarded by a 30 s timeout (never a wait:
///   every script ends long before); `finish()` waits for the script and returns every line the
///   client sent.
package final class FakeDaemon: Sendable {
  /// One connection as a script sees it: lines read (and recorded) with `readLine()`, lines sent
  /// with `send(_:)`. Also a test's own client connection (`init(fd:)`).
  package final class Peer {
    /// The connection's descriptor (not owned: whoever made it closes it).
    package let fd: Int32
    private var buffer: [UInt8] = []
    private let log: LineLog?

    /// A peer on `fd` whose lines are recorded nowhere.
    package convenience init(fd: Int32) { self.init(fd: fd, log: nil) }

    init(fd: Int32, log: LineLog?) {
      self.fd = fd
      self.log = log
    }

    /// The next line from the other side (without its newline); nil at end of file or timeout.
    package func readLine() -> String? {
      while true {
        if let newline = buffer.firstIndex(of: 0x0A) {
          let line = String(decoding: buffer[..<newline], as: UTF8.self)
          buffer.removeSubrange(...newline)
          log?.lines.withLock { $0.append(line) }
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
    package func send(_ line: String) { UnixSocket.sendAll(fd, Array((line + "\n").utf8)) }
  }

  private struct State {
    var connection: Int32?
    var connections = 0
    var stopped = false
    /// The listener is closed (by `stop()` or the thread that accepted on it), under the lock, as
    /// every shutdown of it is: its number is never touched once it may belong to someone else.
    var listenerClosed = false
  }

  /// The socket's path.
  package let path: String
  /// The private directory holding it.
  package let directory: String
  private let listener: Int32
  /// Whether a thread of the fake accepts on `listener`: then that thread closes it as it ends,
  /// never `stop()` (see `stop()`).
  private let listenerHasThread: Bool
  private let welcome: String
  private let state = Mutex(State())
  private let log = LineLog()
  private let scriptDone = DispatchSemaphore(value: 0)

  /// A welcome as locationd sends it, for an app with this authorization status and these raw
  /// region entries (`regionEntry`); `app` and `uid` as the daemon identified the client.
  package static func welcomeLine(
    status: Int = 4, regions: [String] = [], app: String = "org.example.Test", uid: Int = 1000
  ) -> String {
    #"{"type":"welcome","version":1,"app":"\#(app)","uid":\#(uid),"#
      + #""authorization":{"status":\#(status),"accuracy":0,"servicesEnabled":true},"#
      + #""regions":[\#(regions.joined(separator: ","))],"maximumRegionRadius":1000000,"#
      + #""headingAvailable":false}"#
  }

  /// A welcome as locationd sends it to a control or agent connection.
  package static let controlWelcome = welcomeLine(status: 0, app: "", uid: 0)

  /// A raw region entry for a welcome.
  package static func regionEntry(
    _ identifier: String, group: String = "manager", state: String = "unknown"
  ) -> String {
    #"{"group":"\#(group)","region":{"identifier":"\#(identifier)","latitude":52.1,"#
      + #""longitude":5.1,"radius":100,"hysteresis":5,"notifyOnEntry":true,"notifyOnExit":true},"#
      + #""state":"\#(state)"}"#
  }

  /// A raw fix.
  package static func fixLine(latitude: Double, longitude: Double, time: Double = 1_767_225_600)
    -> String
  {
    #"{"latitude":\#(latitude),"longitude":\#(longitude),"altitude":null,"#
      + #""ellipsoidalAltitude":null,"horizontalAccuracy":5,"verticalAccuracy":-1,"speed":-1,"#
      + #""speedAccuracy":-1,"course":-1,"courseAccuracy":-1,"time":\#(time),"#
      + #""quality":"autonomous","satellitesUsed":null,"floor":null,"isSimulated":false,"#
      + #""source":"fake://"}"#
  }

  /// An answering fake: `welcome` is its answer to every `hello`. `listen: false` leaves a bound
  /// socket nobody accepts on (a stale socket file). `socketIn` puts the socket in that directory
  /// (made if missing) instead of a new one.
  package init(
    welcome: String = FakeDaemon.welcomeLine(), listen: Bool = true, socketIn: String? = nil
  ) throws {
    if let socketIn {
      mkdir(socketIn, 0o700)
      directory = socketIn
    } else {
      directory = try Self.makeDirectory()
    }
    path = directory + "/socket"
    self.welcome = welcome
    scriptDone.signal()
    guard listen else {
      listener = try UnixSocket.bound(path: path)
      listenerHasThread = false
      return
    }
    listener = try UnixSocket.listening(path: path)
    listenerHasThread = true
    Thread.detachNewThread { [self] in
      answerConnections()
      closeListener()
    }
  }

  /// A scripted fake: runs `script` on the first connection, on a thread of its own.
  package init(script: @escaping @Sendable (Peer) -> Void) throws {
    directory = try Self.makeDirectory()
    path = directory + "/socket"
    welcome = Self.controlWelcome
    listener = try UnixSocket.listening(path: path, backlog: 4)
    listenerHasThread = true
    Thread.detachNewThread { [self] in
      defer { scriptDone.signal() }
      defer { closeListener() }
      var descriptor = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
      guard poll(&descriptor, 1, 30_000) == 1, let fd = accept() else { return }
      UnixSocket.setReceiveTimeout(fd, seconds: 30)
      script(Peer(fd: fd, log: log))
      closeConnection(fd)
    }
  }

  /// A new private directory (short, so the socket path stays far below sun_path's 108 bytes).
  private static func makeDirectory() throws -> String {
    var template = Array("/tmp/cl-daemon-XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else { throw TestFailure("mkdtemp failed") }
    return String(cString: made)
  }

  /// Accepts a connection and makes it the current one; nil once the listener is closed.
  private func accept() -> Int32? {
    while true {
      let fd = Glibc.accept(listener, nil, nil)
      if fd < 0 {
        if errno == EINTR { continue }
        return nil
      }
      let stopped = state.withLock { state -> Bool in
        state.connection = fd
        state.connections += 1
        return state.stopped
      }
      if stopped {
        close(fd)
        return nil
      }
      return fd
    }
  }

  private func answerConnections() {
    while let fd = accept() {
      Thread.detachNewThread { [self] in
        let peer = Peer(fd: fd, log: log)
        while let line = peer.readLine() {
          if line.contains(#""type":"hello""#) { peer.send(welcome) }
        }
        closeConnection(fd)
      }
    }
  }

  /// Forgets `fd` as the current connection, then closes it (so that `stop()` never shuts down a
  /// descriptor number reused since).
  private func closeConnection(_ fd: Int32) {
    state.withLock { state in
      if state.connection == fd { state.connection = nil }
      close(fd)
    }
  }

  /// Sends a line on the current connection.
  package func send(_ line: String) { sendRaw(Array((line + "\n").utf8)) }

  /// Sends bytes as they are (no newline added) on the current connection.
  package func sendRaw(_ bytes: [UInt8]) {
    guard let fd = state.withLock({ $0.connection }) else { return }
    UnixSocket.sendAll(fd, bytes)
  }

  /// The bytes sent on the current connection that the client has not read yet (`SIOCOUTQ`,
  /// which for a Unix socket counts what the peer has not consumed), or nil without one.
  package var unreadBytes: Int? {
    state.withLock { state -> Int? in
      guard let fd = state.connection else { return nil }
      var count: Int32 = 0
      // SIOCOUTQ, the same number as TIOCOUTQ (linux/sockios.h).
      guard ioctl(fd, 0x5411, &count) == 0 else { return nil }
      return Int(count)
    }
  }

  /// Drops the current connection (the client sees the daemon go away).
  package func dropConnection() {
    state.withLock { state in
      if let fd = state.connection { shutdown(fd, Int32(SHUT_RDWR)) }
    }
  }

  /// How many connections were accepted.
  package var connections: Int { state.withLock { $0.connections } }

  /// Whether a connection is open now.
  package var isConnected: Bool { state.withLock { $0.connection != nil } }

  /// Every line received, in order.
  package var received: [String] { log.lines.withLock { $0 } }

  /// Forgets the lines received so far.
  package func clearReceived() { log.lines.withLock { $0.removeAll() } }

  /// The received messages of a type, as JSON objects.
  package func messages(_ type: String) -> [[String: Any]] {
    received.compactMap { line -> [String: Any]? in
      guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)),
        let dictionary = object as? [String: Any], dictionary["type"] as? String == type
      else { return nil }
      return dictionary
    }
  }

  /// Stops listening, drops the connection and removes the socket and its directory.
  ///
  /// The listener is shut down here (a pending or later `accept` then fails) but closed by the
  /// thread that accepts on it, once that thread has ended: closed here, its number could be given
  /// to another test's socket before the thread's next `accept`, which would then take (and, the
  /// fake being stopped, close) that test's connections.
  package func stop() {
    let firstStop = state.withLock { state -> Bool in
      defer { state.stopped = true }
      if let fd = state.connection { shutdown(fd, Int32(SHUT_RDWR)) }
      guard !state.stopped else { return false }
      if !state.listenerClosed {
        shutdown(listener, Int32(SHUT_RDWR))
        if !listenerHasThread {
          close(listener)
          state.listenerClosed = true
        }
      }
      return true
    }
    guard firstStop else { return }
    unlink(path)
    rmdir(directory)
  }

  /// Closes the listener once (the accepting thread, as it ends).
  private func closeListener() {
    state.withLock { state in
      guard !state.listenerClosed else { return }
      close(listener)
      state.listenerClosed = true
    }
  }

  /// Waits for the script to end, stops the fake and returns every line the client sent.
  package func finish() -> [String] {
    scriptDone.wait()
    stop()
    return received
  }
}

/// The lines a fake daemon received, shared by its connections.
final class LineLog: Sendable {
  let lines = Mutex<[String]>([])
}
