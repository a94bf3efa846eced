import CEpoll
import Foundation
import LocationEngine
import LocationModel
import LocationProtocol
import LocationSources
import Synchronization

// The connection's reading: a thread of its own, and, while the reading run loop (the main run
// loop by default) waits, that run loop.
extension DaemonClient {
  /// Reads the connection until it ends. Every message is handled on `queue`, in order, except
  /// `locations`: when nothing read before still waits there, a `locations` line is delivered at
  /// once by whoever read it, sparing the wake-up of another thread on the way from the receiver
  /// to the app (`locbench latency`); it cannot overtake an earlier message, and a manager's
  /// deliveries are hopped to its own thread anyway.
  ///
  /// Who reads: a thread of its own, waiting for the socket's new bytes (edge-triggered). When the
  /// client has a reading run loop (`RunLoopReading`), bytes that arrive while that run loop
  /// waits are read by the run loop itself, so that a delegate on the main thread gets its
  /// location after one wake-up instead of two.
  func startReader(fd: Int32, generation: Int) {
    let reading = DaemonConnectionReading(fd: fd, generation: generation)
    let edges = cepoll_watching(fd, 1)
    let runLoop =
      edges >= 0
      ? readingRunLoop.flatMap {
        RunLoopReading.install(
          fd: fd, threadInstance: edges, on: $0, alive: runLoopReadings
        ) { [self] in
          reading.drain(self, onRunLoop: true)
        }
      } : nil
    state.withLock { $0.runLoopReading = runLoop }
    Thread.detachNewThread { [self] in
      // The wake-up or spin before each `locations` line (`EpochLead`), timed by the lines this
      // thread read; while the run loop reads, its reading does it instead.
      let lead = EpochLead.configured
      var cadence = EpochCadence()
      while !reading.ended.load(ordering: .acquiring) {
        var hungUp = false
        if edges >= 0 {
          let events = EpochLead.wait(
            edges, window: lead.flatMap { cadence.window(lead: $0) },
            reads: { runLoop?.threadIsReading ?? true })
          if events < 0 { break }
          if LatencyTrace.isOn { LatencyTrace.noteWake() }
          hungUp = cepoll_hung_up(events) != 0
        } else {
          // No epoll instance: a plain level-triggered wait.
          var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
          if poll(&descriptor, 1, -1) < 0, errno != EINTR { break }
        }
        let arrival = lead == nil ? 0 : LiveClock.monotonicSeconds()
        if reading.drain(self, onRunLoop: false, toEnd: hungUp) && lead != nil {
          cadence.note(arrival)
        }
      }
      runLoop?.uninstall()
      if let runLoop { runLoop.closeThreadInstance() } else if edges >= 0 { Glibc.close(edges) }
      state.withLock { state in
        if state.runLoopReading === runLoop { state.runLoopReading = nil }
      }
      queue.async { [self] in readerEnded(fd: fd, generation: generation) }
    }
  }

  /// The connection ended: close it, tell the clients whose services were running, reconnect.
  func readerEnded(fd: Int32, generation: Int) {
    let (current, wasWelcomed) = state.withLock { state -> (Bool, Bool) in
      guard state.generation == generation, state.fd == fd else { return (false, false) }
      state.fd = nil
      let was = state.welcomed
      state.welcomed = false
      endRefresh(&state)
      return (true, was)
    }
    DaemonClientSocket.close(fd)
    guard current, !state.withLock({ $0.closed }) else { return }
    guard wasWelcomed else {
      let refusal = state.withLock { $0.refusal }
      connectionFailed(
        reason: refusal.map { "locationd refused the connection: \($0)" }
          ?? "locationd closed the connection before its welcome")
      return
    }
    let problem =
      required
      ? Self.requiredMessage(paths: socketPaths, reason: "the connection was lost")
      : "locationd went away; reconnecting"
    let affected = state.withLock { state -> [(Int, Record)] in
      state.problem = problem
      var affected: [(Int, Record)] = []
      for (number, record) in state.clients.sorted(by: { $0.key < $1.key }) {
        affected.append((number, record))
        state.clients[number]?.locationRequest = nil
        state.clients[number]?.deferring = false
      }
      return affected
    }
    HubLog.write(.info, "daemon", "connection lost; reconnecting")
    declineTemporaryRequests(problem)
    for (number, record) in affected {
      if record.deferring {
        deliver(.deferredFinished(DeferredUpdates.Failure.deferredFailed.rawValue), to: number)
      }
      if record.updates != nil || record.locationRequest != nil || record.heading != nil
        || record.significantChanges
      {
        deliver(.error(.locationUnknown, message: problem), to: number)
      }
    }
    let (delay, closed) = state.withLock { state -> (Double, Bool) in
      let delay = state.backoff
      state.backoff = min(Self.maximumBackoff, state.backoff * 2)
      return (delay, state.closed)
    }
    guard !closed else { return }
    queue.asyncAfter(deadline: .now() + delay) { [self] in connect() }
  }

  /// Before a wait on the reading run loop's thread for something the daemon sends: the run loop
  /// cannot read while its thread waits, so the reader thread reads (until the run loop waits
  /// again).
  func yieldRunLoopReading() {
    state.withLock { $0.runLoopReading }?.threadReadsIfCurrent()
  }

  /// The longest line accepted from the daemon: a welcome lists every region of the app, up to
  /// 50,000 by default with identifiers of up to 1 KiB.
  static let lineLimit = 64 << 20
}

/// What one connection has read: the bytes of an unfinished line, and whether the connection
/// ended. Its reader thread and its reading run loop read under its lock, one at a time, so that
/// lines are handed on in the order they came.
final class DaemonConnectionReading: Sendable {
  let fd: Int32
  let generation: Int
  /// Set once the socket has ended (end of stream, an error, a line over the limit); the
  /// descriptor is not used for reading after that, and the reader thread stops.
  let ended = Atomic<Bool>(false)

  private struct Buffer: ~Copyable {
    var lines = DaemonLineReader(limit: DaemonClient.lineLimit)
    var bytes = [UInt8](repeating: 0, count: 65_536)
    var ended = false
    /// The last `locations` line read, for the rehearsal of the wake-up before an epoch.
    var lastLocations: [UInt8]?
  }

  /// The longest `locations` line that is rehearsed (`DaemonClient.rehearse(line:)`).
  static let rehearsedLine = 2048

  private let buffer = Mutex(Buffer())

  init(fd: Int32, generation: Int) {
    self.fd = fd
    self.generation = generation
  }

  /// Reads what the socket holds now, without blocking, and hands each complete line on.
  /// - Parameters:
  ///   - client: the client the lines are for.
  ///   - onRunLoop: whether the reading run loop reads: it decodes only `locations` lines in the
  ///     daemon's own shape and leaves every other line to `queue`, so that a long line (a welcome
  ///     with many regions) never holds the app's main thread.
  ///   - toEnd: the daemon hung up: read on to the end, which no later edge would announce to the
  ///     reader thread (its wait is edge-triggered), even after a short read.
  /// - Returns: whether a `locations` line was read (which times the wake-up or spin, `EpochLead`).
  @discardableResult
  func drain(_ client: DaemonClient, onRunLoop: Bool, toEnd: Bool = false) -> Bool {
    var located = false
    let end = buffer.withLock { buffer -> Bool in
      guard !buffer.ended else { return false }
      var readAny = false
      reading: while true {
        let count = buffer.bytes.withUnsafeMutableBytes { raw in
          recv(fd, raw.baseAddress, raw.count, Int32(MSG_DONTWAIT))
        }
        if count < 0 {
          let code = errno
          if code == EINTR { continue }
          if code == EAGAIN || code == EWOULDBLOCK {
            // Nothing came: the wake-up before an epoch (or a spurious one), which rehearses
            // the last `locations` line's delivery.
            if !readAny, let line = buffer.lastLocations { client.rehearse(line: line) }
            return false
          }
        }
        guard count > 0 else { break }
        readAny = true
        let readTime = LatencyTrace.isOn ? LatencyTrace.now() : 0
        buffer.lines.append(buffer.bytes[0..<count])
        while let item = buffer.lines.next() {
          switch item {
          case .line(let line):
            let isLocations = client.handle(
              line: line, generation: generation, onRunLoop: onRunLoop, readTime: readTime)
            located = located || isLocations
            if isLocations {
              buffer.lastLocations = line.count <= Self.rehearsedLine ? line : nil
            }
          case .tooLarge, .truncated:
            HubLog.write(.info, "daemon", "a line from locationd is too long; disconnecting")
            break reading
          }
        }
        // A short read took all the socket held: the next `recv` would only say `EAGAIN` (a
        // system call per location). Bytes that come after it wake the reader again: the run
        // loop's port is level-triggered, and the thread's edge-triggered instance sees a new
        // arrival as a new edge.
        if count < buffer.bytes.count && !toEnd { return false }
      }
      buffer.ended = true
      return true
    }
    guard end else { return located }
    ended.store(true, ordering: .releasing)
    // Wakes the reader thread if the run loop saw the end first.
    DaemonClientSocket.shutdown(fd)
    return located
  }
}

extension DaemonClient {
  /// Hands one line on: a `locations` line in the daemon's own shape at once when nothing read
  /// before still waits on `queue`, anything else to `queue`, in order. The reading run loop
  /// decodes only those `locations` lines; `queue` decodes every other line it reads, and the
  /// reader thread decodes the lines it reads before handing them to `queue`.
  /// - Parameter readTime: when the `recv` that completed the line returned (`LatencyTrace`'s
  ///   clock; 0 when not tracing).
  /// - Returns: whether the line was a `locations` line in the daemon's own shape.
  fileprivate func handle(line: [UInt8], generation: Int, onRunLoop: Bool, readTime: UInt64)
    -> Bool
  {
    if onRunLoop {
      linesReadByRunLoop.add(1, ordering: .relaxed)
    } else {
      linesReadByThread.add(1, ordering: .relaxed)
    }
    // A `locations` line in the daemon's own shape goes to the manager as the manager's number
    // and the fixes, never wrapped in a message (copying the message enum went through a copy
    // function of all its cases, cold on every fix).
    if let (client, fixes) = DaemonProtocol.decodeLocationsLine(line) {
      if LatencyTrace.isOn { Self.traceRead(fixes, at: readTime) }
      if readerBacklog.load(ordering: .acquiring) == 0 {
        receivedLocations(client: client, fixes, generation: generation)
        return true
      }
      readerBacklog.add(1, ordering: .releasing)
      queue.async { [self] in
        receivedLocations(client: client, fixes, generation: generation)
        readerBacklog.subtract(1, ordering: .releasing)
      }
      return true
    }
    // The run loop leaves every other line to `queue`, which decodes it.
    let decoded = onRunLoop ? nil : Self.decode(line)
    readerBacklog.add(1, ordering: .releasing)
    queue.async { [self] in
      received(decoded ?? Self.decode(line), generation: generation)
      readerBacklog.subtract(1, ordering: .releasing)
    }
    return false
  }

  /// Decodes a `locations` line read before and has its manager rehearse the delivery
  /// (`HubClient.rehearse`), telling nobody: the wake-up before an epoch (`EpochLead`) warms the
  /// processor's caches for the next line. Changes nothing: no record, no mark, no delivery.
  fileprivate func rehearse(line: [UInt8]) {
    guard let (number, fixes) = DaemonProtocol.decodeLocationsLine(line) else { return }
    let client = state.withLock { $0.clients[number]?.client }
    client?.rehearse(fixes)
  }

  private static func decode(_ line: [UInt8]) -> Result<DaemonMessage, DaemonProtocolError> {
    Result { () throws(DaemonProtocolError) -> DaemonMessage in
      try DaemonProtocol.decode(line: line, limit: lineLimit)
    }
  }
}
