import Dispatch
import Foundation
import Geodesy
import LocationFormats
import LocationModel
import Synchronization
import TestSupport
import Testing

@testable import LocationSources

#if canImport(Glibc)
  import Glibc
#endif

// Shared support for the gpsd and NMEA stream tests: a recording SourceContext, real components
// started as child processes, and tiny loopback servers.

/// A `SourceContext` that records what a source reports (thread-safe). `schedule` either runs the
/// action on a real dispatch queue after the delay (tests against real daemons) or keeps it for
/// the test to fire (`manual`, the virtual clock).
final class RecordingContext: SourceContext {
  enum Clock {
    case dispatch
    case manual
  }

  struct Scheduled {
    var delay: Double
    var action: @Sendable () -> Void
    var token: Token
  }

  final class Token: Cancellable {
    let cancelled = Atomic(false)
    func cancel() { cancelled.store(true, ordering: .relaxed) }
  }

  struct State {
    var fixes: [Fix] = []
    /// Fixes rehearsed (`SourceContext.rehearse`).
    var rehearsals: [Fix] = []
    var failures: [SourceError] = []
    var ends = 0
    var scheduled: [Scheduled] = []
    var delays: [Double] = []
    /// Calls that arrived after `sealed` was set.
    var lateCalls = 0
    var sealed = false
  }

  let clock: Clock
  let state = Mutex(State())
  private let queue = DispatchQueue(label: "test.context.schedule")

  init(clock: Clock) { self.clock = clock }

  var now: EngineInstant {
    let wall = Date().timeIntervalSince1970
    return EngineInstant(monotonic: wall, wall: wall)
  }

  func emit(_ fix: Fix) {
    state.withLock { state in
      if state.sealed { state.lateCalls += 1 }
      state.fixes.append(fix)
    }
  }

  func rehearse(_ fix: Fix) { state.withLock { $0.rehearsals.append(fix) } }

  func fail(_ error: SourceError) {
    state.withLock { state in
      if state.sealed { state.lateCalls += 1 }
      state.failures.append(error)
    }
  }

  func end() {
    state.withLock { state in
      if state.sealed { state.lateCalls += 1 }
      state.ends += 1
    }
  }

  func schedule(after seconds: Double, _ action: @escaping @Sendable () -> Void)
    -> any Cancellable
  {
    let token = Token()
    state.withLock { state in
      if state.sealed { state.lateCalls += 1 }
      state.delays.append(seconds)
      if case .manual = clock {
        state.scheduled.append(Scheduled(delay: seconds, action: action, token: token))
      }
    }
    if case .dispatch = clock {
      queue.asyncAfter(deadline: .now() + seconds) {
        if !token.cancelled.load(ordering: .relaxed) { action() }
      }
    }
    return token
  }

  /// Manual clock: runs the oldest pending action that is not cancelled.
  /// - Returns: its delay, or nil when none is pending.
  @discardableResult
  func fireNext() -> Double? {
    let next = state.withLock { state -> Scheduled? in
      while !state.scheduled.isEmpty {
        let item = state.scheduled.removeFirst()
        if !item.token.cancelled.load(ordering: .relaxed) { return item }
      }
      return nil
    }
    guard let next else { return nil }
    next.action()
    return next.delay
  }

  /// From now on, count every call as late (after the source's `stop()`).
  func seal() { state.withLock { $0.sealed = true } }

  var fixes: [Fix] { state.withLock { $0.fixes } }
  var failures: [SourceError] { state.withLock { $0.failures } }
  var delays: [Double] { state.withLock { $0.delays } }
  var lateCalls: Int { state.withLock { $0.lateCalls } }
}

/// A child process stopped by pid: SIGTERM, then SIGKILL if it still runs 3 s later.
final class ChildProcess: Sendable {
  let process: Process
  let name: String

  init(_ executable: String, _ arguments: [String], name: String) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try runWithEmptySignalMask(process)
    self.process = process
    self.name = name
  }

  var pid: Int32 { process.processIdentifier }
  var isRunning: Bool { process.isRunning }

  /// Terminates the process and reaps it.
  func stop() async { stopChild(process, grace: 3) }
}

/// A tiny stream server for tests, on 127.0.0.1 (a free port) or a Unix socket path: every
/// connection it accepts gets `payload` (then, with `closeAfterPayload`, is closed gracefully;
/// otherwise it is held open until the server stops or `dropConnections()`). One thread,
/// blocking calls. A connection that thread is still writing or finishing (`busy`) is only shut
/// down from other threads, never closed there: the thread closes it itself, so that none of its
/// calls reaches a descriptor number that another test of the process has been given since (a
/// `recv` here once read another test's line off its socket).
final class PayloadServer: Sendable {
  let port: Int
  let path: String?
  private let listener: Int32
  private let payload: [UInt8]
  private let closeAfterPayload: Bool
  private let state = Mutex<(open: [Int32], accepted: Int, stopped: Bool, busy: Int32?)>(
    ([], 0, false, nil))
  private let finished = DispatchSemaphore(value: 0)

  /// Starts a TCP server on a free loopback port.
  init(payload: [UInt8], closeAfterPayload: Bool) throws {
    (listener, port) = try Loopback.listening()
    path = nil
    self.payload = payload
    self.closeAfterPayload = closeAfterPayload
    startThread()
  }

  /// Starts a server on a Unix socket at `path`.
  init(unixPath: String, payload: [UInt8], closeAfterPayload: Bool) throws {
    listener = try UnixSocket.listening(path: unixPath)
    port = 0
    path = unixPath
    self.payload = payload
    self.closeAfterPayload = closeAfterPayload
    startThread()
  }

  /// Connections accepted so far.
  var accepted: Int { state.withLock { $0.accepted } }

  private func startThread() {
    let thread = Thread { [self] in
      serve()
      finished.signal()
    }
    thread.start()
  }

  private func serve() {
    while true {
      let client = accept(listener, nil, nil)
      if client < 0 {
        if errno == EINTR { continue }
        return
      }
      let keep = state.withLock { state -> Bool in
        if state.stopped { return false }
        state.accepted += 1
        state.open.append(client)
        state.busy = client
        return true
      }
      guard keep else {
        close(client)
        return
      }
      var offset = 0
      while offset < payload.count {
        let written = payload.withUnsafeBytes {
          send(client, $0.baseAddress.map { $0 + offset }, $0.count - offset, Int32(MSG_NOSIGNAL))
        }
        if written <= 0 { break }
        offset += written
      }
      if closeAfterPayload {
        finish(client)
      } else {
        // Held open: from now on only `drop` touches it, and only from here on may it close it.
        let dropped = state.withLock { state -> Bool in
          state.busy = nil
          return !state.open.contains(client)
        }
        if dropped { close(client) }
      }
    }
  }

  /// Closes gracefully: end of file to the client, then read what it sent until it closes too (a
  /// close with unread input would reset the connection and could discard the payload).
  private func finish(_ client: Int32) {
    shutdown(client, Int32(SHUT_WR))
    var timeout = timeval(tv_sec: 2, tv_usec: 0)
    setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var scratch = [UInt8](repeating: 0, count: 4096)
    while scratch.withUnsafeMutableBytes({ recv(client, $0.baseAddress, $0.count, 0) }) > 0 {}
    state.withLock { state in
      state.busy = nil
      state.open.removeAll { $0 == client }
    }
    close(client)
  }

  /// Forgets a connection and ends it: closed here, or only shut down while the serving thread
  /// still uses it (that thread closes it when done).
  private func drop(_ client: Int32) {
    let owned = state.withLock { state -> Bool? in
      guard let index = state.open.firstIndex(of: client) else { return nil }
      state.open.remove(at: index)
      return state.busy != client
    }
    guard let owned else { return }
    shutdown(client, Int32(SHUT_RDWR))
    if owned { close(client) }
  }

  /// Closes every open connection (the peer sees end of file).
  func dropConnections() {
    for client in state.withLock({ $0.open }) { drop(client) }
  }

  /// Stops accepting, closes every connection and waits for the thread.
  func stop() {
    let already = state.withLock { state -> Bool in
      defer { state.stopped = true }
      return state.stopped
    }
    guard !already else { return }
    dropConnections()
    shutdown(listener, Int32(SHUT_RDWR))
    finished.wait()
    close(listener)
    if let path { unlink(path) }
  }
}

/// The captures of gpsd's regression suite (`Tests/Fixtures/gpsd-regress`).
enum Captures {
  static var folder: URL { Paths.fixtureFolder("gpsd-regress") }

  /// The sentence lines of a capture (its `#` header left out), each ending in CR LF.
  static func sentences(_ name: String) throws -> [String] {
    let text = try String(contentsOf: folder.appendingPathComponent(name + ".log"), encoding: .utf8)
    return text.split(whereSeparator: \.isNewline).filter { $0.hasPrefix("$") }.map {
      String($0) + "\r\n"
    }
  }

  /// The fixes gpsd reported for a capture (`TPV` with mode 2 or 3 and a time in its `.chk`),
  /// by time in milliseconds.
  static func gpsdFixes(_ name: String) throws -> [Int64: GPSDTPV] {
    let text = try String(
      contentsOf: folder.appendingPathComponent(name + ".log.chk"), encoding: .utf8)
    var result: [Int64: GPSDTPV] = [:]
    var decoder = GPSDDecoder()
    for message in decoder.decode(Array(text.utf8)) {
      if case .tpv(let tpv) = message, let mode = tpv.mode, mode >= 2, let time = tpv.time {
        result[Int64((time * 1000).rounded())] = tpv
      }
    }
    return result
  }

  /// The fixes `NMEADecoder` finds in a capture, by time in milliseconds.
  static func decodedFixes(_ name: String) throws -> [Int64: Fix] {
    let bytes = try [UInt8](Data(contentsOf: folder.appendingPathComponent(name + ".log")))
    var result: [Int64: Fix] = [:]
    for output in NMEADecoder.decodeLog(bytes).outputs {
      if case .fix(let fix) = output { result[Int64((fix.time * 1000).rounded())] = fix }
    }
    return result
  }
}

extension Fix {
  /// The fix's time in milliseconds, the key of the capture tables.
  var timeKey: Int64 { Int64((time * 1000).rounded()) }
}
