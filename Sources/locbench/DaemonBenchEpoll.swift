import Foundation

/// A minimal `epoll(7)` instance for the bench's client loop: readiness in O(ready) instead of
/// `poll()`'s O(connections) per call, which matters with 500 connections and many wake-ups per
/// fix (`poll` was a third of the bench's own CPU).
///
/// Swift's Glibc module does not import `<sys/epoll.h>`, and the package has no C shim for it, so
/// the three calls are looked up with `dlsym` and called through `@convention(c)` pointers (the C
/// ABI, not a guess at Swift's), and `struct epoll_event` is laid out by hand: `uint32_t events`
/// then the 8-byte `data` union, packed (12 bytes) on x86-64, naturally aligned (16 bytes)
/// elsewhere (`<bits/epoll.h>`). The constants are the kernel's (`<linux/eventpoll.h>`).
final class DaemonBenchEpoll {
  /// Readable (`EPOLLIN`).
  static let readable: UInt32 = 0x001
  /// Writable (`EPOLLOUT`).
  static let writable: UInt32 = 0x004
  /// Error (`EPOLLERR`).
  static let error: UInt32 = 0x008
  /// Hang-up (`EPOLLHUP`).
  static let hangUp: UInt32 = 0x010

  private typealias Create = @convention(c) (Int32) -> Int32
  private typealias Control =
    @convention(c) (Int32, Int32, Int32, UnsafeMutableRawPointer?) ->
    Int32
  private typealias Wait = @convention(c) (Int32, UnsafeMutableRawPointer?, Int32, Int32) -> Int32

  #if arch(x86_64)
    private static let eventSize = 12
    private static let dataOffset = 4
  #else
    private static let eventSize = 16
    private static let dataOffset = 8
  #endif

  private let fd: Int32
  private let control: Control
  private let wait: Wait
  private var buffer: UnsafeMutableRawPointer
  private let capacity = 512

  /// Opens an epoll instance; nil when the calls cannot be found.
  init?() {
    let handle = dlopen(nil, RTLD_NOW)
    guard let create = dlsym(handle, "epoll_create1"),
      let control = dlsym(handle, "epoll_ctl"),
      let wait = dlsym(handle, "epoll_wait")
    else { return nil }
    let fd = unsafeBitCast(create, to: Create.self)(O_CLOEXEC)
    guard fd >= 0 else { return nil }
    self.fd = fd
    self.control = unsafeBitCast(control, to: Control.self)
    self.wait = unsafeBitCast(wait, to: Wait.self)
    buffer = UnsafeMutableRawPointer.allocate(
      byteCount: capacity * Self.eventSize, alignment: 8)
  }

  deinit {
    close(fd)
    buffer.deallocate()
  }

  /// Registers (`add`) or changes (`!add`) interest in `events` on `socket`, tagged `token`.
  @discardableResult
  func watch(_ socket: Int32, token: Int, events: UInt32, add: Bool) -> Bool {
    var event = [UInt8](repeating: 0, count: Self.eventSize)
    event.withUnsafeMutableBytes { raw in
      raw.storeBytes(of: events, toByteOffset: 0, as: UInt32.self)
      raw.storeBytes(of: UInt64(token), toByteOffset: Self.dataOffset, as: UInt64.self)
    }
    // EPOLL_CTL_ADD is 1, EPOLL_CTL_MOD is 3.
    return event.withUnsafeMutableBytes { control(fd, add ? 1 : 3, socket, $0.baseAddress) } == 0
  }

  /// Stops watching `socket` (`EPOLL_CTL_DEL`, 2).
  func remove(_ socket: Int32) {
    _ = control(fd, 2, socket, nil)
  }

  /// Waits up to `timeoutMilliseconds` and calls `body` with each ready token and its events.
  func wait(timeoutMilliseconds: Int32, _ body: (Int, UInt32) -> Void) -> Int {
    let count = wait(fd, buffer, Int32(capacity), timeoutMilliseconds)
    guard count > 0 else { return 0 }
    for index in 0..<Int(count) {
      let base = buffer + index * Self.eventSize
      let events = base.loadUnaligned(as: UInt32.self)
      let token = base.loadUnaligned(fromByteOffset: Self.dataOffset, as: UInt64.self)
      body(Int(token), events)
    }
    return Int(count)
  }
}
