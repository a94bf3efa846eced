import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Watches one open stream's descriptor on a thread of its own, blocked in `poll(2)`, and calls
/// `readable` on that thread each time the descriptor is readable (or hung up, or in error).
///
/// Why not a `DispatchSourceRead`: on Linux, libdispatch's event thread (blocked in `epoll_wait`)
/// is woken first and then wakes a worker thread to run the handler; a receiver's epoch paid for
/// two thread wake-ups before its first byte was decoded (`locbench latency --breakdown`). Here
/// the thread that the kernel wakes is the one that reads and decodes, as gpsd's own loop does.
/// One thread per open stream: a device, a TCP feed, not one per client.
///
/// `cancel()` may be called from any thread, once or more; the watcher then stops calling
/// `readable` (a call in progress finishes), closes the descriptor with `close` on its own thread
/// (never while `poll` may still use it), and ends.
final class StreamWatcher: Sendable {
  /// One end of the socket pair that wakes the watcher to end it; the other end is watched with
  /// the stream (and hangs up when this one is closed, so a dropped watcher ends too).
  private let wakeWrite: Int32

  /// Starts watching; nil when the wake-up socket pair cannot be made (descriptors exhausted), in
  /// which case `fd` is left open for the caller.
  /// - Parameters:
  ///   - fd: the descriptor, owned by the watcher from now on.
  ///   - readable: called on the watcher's thread when `fd` is readable.
  ///   - close: called on the watcher's thread once, after cancellation, to close `fd`.
  init?(
    fd: Int32, readable: @escaping @Sendable () -> Void, close: @escaping @Sendable () -> Void
  ) {
    var pair: [Int32] = [-1, -1]
    let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
    guard socketpair(AF_UNIX, type, 0, &pair) == 0 else { return nil }
    wakeWrite = pair[1]
    let wakeRead = pair[0]
    let thread = Thread {
      Self.watch(fd: fd, wake: wakeRead, readable: readable)
      close()
      _ = Glibc.close(wakeRead)
    }
    thread.start()
  }

  deinit { _ = Glibc.close(wakeWrite) }

  /// Ends the watch: once the watcher's thread sees it (at the latest when a `readable` call in
  /// progress returns), no further `readable` call starts, and the descriptor is closed there.
  func cancel() {
    var byte: UInt8 = 1
    _ = send(wakeWrite, &byte, 1, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
  }

  private static func watch(fd: Int32, wake: Int32, readable: () -> Void) {
    var watched = [
      pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
      pollfd(fd: wake, events: Int16(POLLIN), revents: 0),
    ]
    while true {
      watched[0].revents = 0
      watched[1].revents = 0
      let count = poll(&watched, 2, -1)
      if count < 0 {
        if errno == EINTR { continue }
        return
      }
      // Cancellation first: a stream that was torn down is not read again.
      if watched[1].revents != 0 { return }
      let events = Int32(watched[0].revents)
      if events & Int32(POLLNVAL) != 0 { return }
      if events & Int32(POLLIN | POLLHUP | POLLERR) != 0 { readable() }
    }
  }
}
