import CEpoll
import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Watches one open stream's descriptor on a thread of its own, blocked in `epoll_wait(2)`, and
/// calls `readable` on that thread each time new bytes (or a hangup, or an error) arrive; with a
/// reading run loop, that run loop calls it instead for the bytes that arrive while it waits
/// (`RunLoopReading`).
///
/// Why not a `DispatchSourceRead`: on Linux, libdispatch's event thread (blocked in `epoll_wait`)
/// is woken first and then wakes a worker thread to run the handler; a receiver's epoch paid for
/// two thread wake-ups before its first byte was decoded (`locbench latency --breakdown`). Here
/// the thread that the kernel wakes is the one that reads and decodes, as gpsd's own loop does.
/// One thread per open stream: a device, a TCP feed, not one per client. And why a reading run
/// loop: an app's delegate on the main run loop then gets a fix after one wake-up, the main
/// thread's, which reads, decodes and runs the engine itself, instead of two (this thread's, then
/// the main thread's to run what this thread handed it).
///
/// The descriptor is watched edge-triggered: `readable` must read until a read comes back short
/// (or says `EAGAIN`), and, when told the peer hung up, to the end (no later edge announces it).
///
/// `cancel()` may be called from any thread, once or more; the watcher then stops calling
/// `readable` (a call in progress finishes), removes the run loop's reading, closes the descriptor
/// with `close` on its own thread (never while a wait may still use it), and ends.
final class StreamWatcher: Sendable {
  /// One end of the socket pair that wakes the watcher to end it; the other end is watched with
  /// the stream.
  private let wakeWrite: Int32
  private let cancelled = CancelFlag()

  private final class CancelFlag: Sendable {
    let value = Atomic<Bool>(false)
  }

  /// Starts watching; nil when the wake-up socket pair or the epoll instance cannot be made
  /// (descriptors exhausted), in which case `fd` is left open for the caller.
  /// - Parameters:
  ///   - fd: the descriptor (non-blocking), owned by the watcher from now on.
  ///   - runLoop: a run loop that reads while it waits (`RunLoopReading`), or nil.
  ///   - lead: the wake-up or spin before each epoch (`EpochLead`), nil for none.
  ///   - readable: called when `fd` has new bytes, on the watcher's thread or on `runLoop`'s, one
  ///     at a time as the caller arranges (a stream's queue); its argument says the peer hung up
  ///     (or the descriptor failed): read to the end. It returns whether the bytes completed an
  ///     epoch (a fix went out), which times the spin.
  ///   - close: called on the watcher's thread once, after cancellation, to close `fd`.
  init?(
    fd: Int32, runLoop: ReadingRunLoop? = nil, lead: EpochLead? = EpochLead.configured,
    readable: @escaping @Sendable (Bool) -> Bool, close: @escaping @Sendable () -> Void
  ) {
    var pair: [Int32] = [-1, -1]
    let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
    guard socketpair(AF_UNIX, type, 0, &pair) == 0 else { return nil }
    let wakeRead = pair[0]
    let edges = cepoll_watching(fd, 1)
    guard edges >= 0, cepoll_add_input(edges, wakeRead) == 0 else {
      let code = errno
      if edges >= 0 { _ = Glibc.close(edges) }
      _ = Glibc.close(pair[0])
      _ = Glibc.close(pair[1])
      errno = code
      return nil
    }
    wakeWrite = pair[1]
    let reading = runLoop.flatMap {
      // The run loop's port is level-triggered: an end is seen there at any read.
      RunLoopReading.install(fd: fd, threadInstance: edges, on: $0, lead: lead) {
        _ = readable(false)
      }
    }
    let cancelled = cancelled
    let thread = Thread {
      // While the run loop reads, its reading wakes up or spins before the epoch, not this thread.
      Self.watch(
        edges, cancelled: cancelled, lead: lead, reads: { reading?.threadIsReading ?? true },
        readable: readable)
      if let reading {
        reading.uninstall()
        reading.closeThreadInstance()
      } else {
        _ = Glibc.close(edges)
      }
      close()
      _ = Glibc.close(wakeRead)
    }
    thread.start()
  }

  deinit {
    // A dropped watcher ends too.
    cancel()
    _ = Glibc.close(wakeWrite)
  }

  /// Ends the watch: once the watcher's thread sees it (at the latest when a `readable` call in
  /// progress returns), no further `readable` call starts, and the descriptor is closed there.
  func cancel() {
    cancelled.value.store(true, ordering: .releasing)
    var byte: UInt8 = 1
    _ = send(wakeWrite, &byte, 1, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
  }

  private static func watch(
    _ edges: Int32, cancelled: CancelFlag, lead: EpochLead?, reads: () -> Bool,
    readable: (Bool) -> Bool
  ) {
    var cadence = EpochCadence()
    while !cancelled.value.load(ordering: .acquiring) {
      let window = lead.flatMap { cadence.window(lead: $0) }
      let events = EpochLead.wait(edges, window: window, reads: reads)
      if events < 0 { return }
      // Cancellation first: a stream that was torn down is not read again.
      if cancelled.value.load(ordering: .acquiring) { return }
      let arrival = lead == nil ? 0 : LiveClock.monotonicSeconds()
      if readable(cepoll_hung_up(events) != 0) && lead != nil { cadence.note(arrival) }
    }
  }
}
