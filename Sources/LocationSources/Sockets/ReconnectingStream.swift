import Dispatch
import Geodesy
import LocationModel

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// What a stream's protocol made of some bytes.
struct StreamEvents: Sendable {
  /// Fixes to hand to the runtime, in order.
  var fixes: [Fix] = []
  /// Heading samples to hand to the runtime, in order.
  var headings: [HeadingSample] = []
  /// A problem: the connection is closed; if permanent the stream gives up, otherwise it is an
  /// outage like any other.
  var failure: SourceError?
}

/// The protocol spoken on a stream (gpsd JSON, NMEA 0183). Called only on the stream's queue.
protocol StreamProtocol: AnyObject {
  /// A connection opened: forget partial input and return the bytes to send (may be empty).
  func opened() -> [UInt8]
  /// Bytes arrived.
  /// - Parameters:
  ///   - bytes: the bytes, valid only during the call.
  ///   - now: the runtime's clock.
  func received(_ bytes: UnsafeRawBufferPointer, now: EngineInstant) -> StreamEvents
  /// The connection closed (not called on `stop`): return what the end of input completes.
  func closed(now: EngineInstant) -> StreamEvents
  /// A read found nothing (the wake-up before an epoch, `EpochLead`): decode `bytes`, the last
  /// read's, again without effects, so that the next epoch finds the decoding warm. Optional.
  /// - Returns: the fixes decoded, which the stream's context rehearses in turn
  ///   (`SourceContext.rehearse`).
  func rehearse(_ bytes: UnsafeRawBufferPointer, now: EngineInstant) -> [Fix]
}

extension StreamProtocol {
  func rehearse(_ bytes: UnsafeRawBufferPointer, now: EngineInstant) -> [Fix] { [] }
}

/// Keeps one stream open: opens the endpoint, reads it on a `StreamWatcher`'s thread (blocked in
/// `epoll_wait`), or on the context's reading run loop while that waits (the handler runs there,
/// inside `queue.sync`, which runs a block on the calling thread when the queue is free: no hop to
/// another thread between the last byte and the fix), feeds a `StreamProtocol`, and after any
/// failure reopens it with `ReconnectBackoff` delays on the runtime's clock
/// (`SourceContext.schedule`), so that a manual clock drives the retries in tests.
///
/// Rules (ours):
/// - An outage starts when an attempt fails or an open stream ends (end of file, a read error,
///   the protocol's failure). Each outage is reported once with
///   `SourceError(.disconnected, "NAME: reason", isPermanent: false)`; it ends, and the backoff
///   starts again from 0.5 s, when a connection delivers its first bytes.
/// - A permanent failure (the protocol's, or an endpoint that can never open) is reported with
///   `isPermanent: true` and the stream stops for good.
/// - `stop()` closes the stream and cancels the pending retry; when it returns no call reaches
///   the context any more. It may be called from any thread, including from inside a context
///   call made by this stream; it waits for a context call in progress on the stream's queue, so
///   a context must not block on the thread that calls `stop()` (the hub's context only enqueues).
/// - TCP connections use keepalive (`StreamOpener.enableKeepAlive`): a peer that vanished
///   without closing is an outage after about a minute.
///
/// Opening (name lookup, a TCP connect bounded by `StreamOpener.connectTimeout`, `open`) blocks,
/// so it runs on a global queue and hands the descriptor back to the stream's queue.
final class ReconnectingStream: @unchecked Sendable {
  // @unchecked Sendable: every mutable member below is read and written only on `queue`
  // (`onQueue` checks that with a queue-specific key), and `handler` is called only there.

  private enum Phase {
    case idle
    case opening(generation: Int)
    case open(fd: Int32, watcher: StreamWatcher, generation: Int)
    case waiting(generation: Int, retry: any Cancellable)
    case stopped
  }

  /// The name used in messages: "gpsd at 127.0.0.1:2947", "NMEA device /dev/ttyUSB0", ...
  let name: String
  private let endpoint: StreamEndpoint
  private let queue: DispatchQueue
  private let queueKey = DispatchSpecificKey<Int>()
  private let handler: any StreamProtocol
  private let context: any SourceContext

  private var phase = Phase.idle
  private var generation = 0
  private var backoff = ReconnectBackoff()
  private var inOutage = false
  private var buffer = [UInt8](repeating: 0, count: 65_536)
  /// How many bytes the last read of this connection left in `buffer`, for
  /// `StreamProtocol.rehearse` (a read that finds nothing leaves them there).
  private var lastRead = 0
  /// The longest read rehearsed: an epoch with its satellite views (a log read in bulk never
  /// waits idle for its next epoch).
  static let rehearsedBytes = 2048

  /// Creates a stream; nothing happens before `start()`.
  init(
    name: String, endpoint: StreamEndpoint, handler: any StreamProtocol,
    context: any SourceContext
  ) {
    self.name = name
    self.endpoint = endpoint
    self.handler = handler
    self.context = context
    queue = DispatchQueue(label: "corelocation.stream")
    queue.setSpecific(key: queueKey, value: 1)
  }

  /// Starts the first attempt.
  func start() {
    queue.async { [self] in
      guard case .idle = phase else { return }
      attempt()
    }
  }

  /// Closes the stream and cancels any retry. Synchronous: afterwards nothing reaches the
  /// context.
  func stop() {
    onQueue { [self] in
      tearDown()
      phase = .stopped
    }
  }

  /// Reads what the stream holds now, as its watcher does when woken (for a test, the wake-up
  /// before an epoch without waiting for the cadence). Returns whether a fix went out.
  func readNow() -> Bool {
    onQueue { [self] in
      guard case .open(_, _, let current) = phase else { return false }
      return readable(generation: current, toEnd: false)
    }
  }

  private func onQueue<T>(_ work: () -> T) -> T {
    if DispatchQueue.getSpecific(key: queueKey) == 1 { return work() }
    return queue.sync(execute: work)
  }

  // MARK: Attempts

  private func attempt() {
    generation += 1
    let current = generation
    phase = .opening(generation: current)
    let endpoint = endpoint
    DispatchQueue.global().async { [self] in
      let result = StreamOpener.open(endpoint)
      queue.async { [self] in opened(result, generation: current) }
    }
  }

  private func opened(_ result: Result<Int32, StreamOpenError>, generation current: Int) {
    guard case .opening(let expected) = phase, expected == current else {
      if case .success(let fd) = result { StreamOpener.close(fd) }
      return
    }
    let fd: Int32
    switch result {
    case .failure(let error):
      if error.isPermanent {
        giveUp(SourceError(.unavailable, "\(name): \(error.message)", isPermanent: true))
      } else {
        outage(error.message)
      }
      return
    case .success(let opened):
      fd = opened
    }
    let greeting = handler.opened()
    if !greeting.isEmpty,
      let error = StreamOpener.writeAll(fd, greeting, isSocket: endpoint.isSocket)
    {
      StreamOpener.close(fd)
      outage(error.message)
      return
    }
    let watcher = StreamWatcher(
      fd: fd, runLoop: context.readingRunLoop,
      readable: { [weak self] hungUp in
        guard let self else { return false }
        return queue.sync { readable(generation: current, toEnd: hungUp) }
      },
      close: { StreamOpener.close(fd) })
    guard let watcher else {
      let code = errno
      StreamOpener.close(fd)
      outage("cannot watch the stream: \(SystemErrors.text(code))")
      return
    }
    lastRead = 0
    phase = .open(fd: fd, watcher: watcher, generation: current)
  }

  /// Reads what the stream holds, until a read comes back short (the watcher waits for new
  /// bytes edge-triggered: bytes left unread would wait for the next arrival), or with `toEnd`
  /// (the peer hung up) until the end or `EAGAIN`. Returns whether a fix went out.
  private func readable(generation current: Int, toEnd: Bool) -> Bool {
    var delivered = false
    var readAny = false
    while true {
      guard case .open(let fd, _, let expected) = phase, expected == current else {
        return delivered
      }
      let count = buffer.withUnsafeMutableBytes { raw in
        Glibc.read(fd, raw.baseAddress, raw.count)
      }
      if count < 0 {
        let code = errno
        if code == EINTR { continue }
        if code == EAGAIN {
          // Nothing at all: the wake-up before an epoch (`EpochLead`), or a spurious wake.
          if !readAny && lastRead > 0 && lastRead <= Self.rehearsedBytes {
            let fixes = buffer.withUnsafeBytes { raw in
              handler.rehearse(
                UnsafeRawBufferPointer(rebasing: raw[0..<lastRead]), now: context.now)
            }
            if let fix = fixes.last { context.rehearse(fix) }
          }
          return delivered
        }
        // A pseudo-terminal whose other side closed, or an unplugged USB adapter, reads EIO.
        connectionLost(SystemErrors.text(code))
        return delivered
      }
      if count == 0 {
        connectionLost(endpoint.isSocket ? "the connection was closed" : "the device closed")
        return delivered
      }
      readAny = true
      lastRead = count
      if inOutage || backoff.upcoming != ReconnectBackoff.initial {
        inOutage = false
        backoff.reset()
      }
      let events = buffer.withUnsafeBytes { raw in
        handler.received(UnsafeRawBufferPointer(rebasing: raw[0..<count]), now: context.now)
      }
      delivered = delivered || !events.fixes.isEmpty
      deliver(events, generation: current)
      // A short read took all the stream held.
      if count < buffer.count && !toEnd { return delivered }
    }
  }

  /// Hands fixes to the context while this connection is still the current one (a context call
  /// may stop the stream), then acts on a failure.
  private func deliver(_ events: StreamEvents, generation current: Int) {
    for fix in events.fixes {
      guard isCurrent(current) else { return }
      context.emit(fix)
    }
    for sample in events.headings {
      guard isCurrent(current) else { return }
      context.emitHeading(sample)
    }
    guard let failure = events.failure, isCurrent(current) else { return }
    if failure.isPermanent {
      giveUp(failure)
    } else {
      tearDown()
      outage(failure.message, reported: failure)
    }
  }

  private func isCurrent(_ current: Int) -> Bool {
    if case .open(_, _, let expected) = phase { return expected == current }
    return false
  }

  private func connectionLost(_ reason: String) {
    guard case .open(_, _, let current) = phase else { return }
    tearDown()
    let events = handler.closed(now: context.now)
    phase = .opening(generation: current)  // not idle: fixes below may still be delivered
    for fix in events.fixes {
      guard case .opening(let expected) = phase, expected == current else { return }
      context.emit(fix)
    }
    guard case .opening(let expected) = phase, expected == current else { return }
    outage(reason)
  }

  /// Closes whatever is open and cancels a pending retry.
  private func tearDown() {
    switch phase {
    case .open(_, let watcher, _):
      watcher.cancel()
    case .waiting(_, let retry):
      retry.cancel()
    case .idle, .opening, .stopped:
      break
    }
    generation += 1
    phase = .idle
  }

  /// Reports the outage (once) and schedules the next attempt.
  private func outage(_ reason: String, reported: SourceError? = nil) {
    if !inOutage {
      inOutage = true
      context.fail(
        reported ?? SourceError(.disconnected, "\(name): \(reason)", isPermanent: false))
      // The context call may have stopped the stream.
      if case .stopped = phase { return }
    }
    generation += 1
    let current = generation
    let delay = backoff.next()
    phase = .opening(generation: current)
    let retry = context.schedule(after: delay) { [weak self] in
      guard let self else { return }
      queue.async { [self] in
        guard case .waiting(let expected, _) = phase, expected == current else { return }
        attempt()
      }
    }
    if case .opening(let expected) = phase, expected == current {
      phase = .waiting(generation: current, retry: retry)
    } else {
      retry.cancel()
    }
  }

  private func giveUp(_ error: SourceError) {
    tearDown()
    phase = .stopped
    context.fail(error)
  }
}
