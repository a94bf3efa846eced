import Foundation
import Synchronization
import TestSupport
import Testing

@testable import LocationSources

#if canImport(Glibc)
  import Glibc
#endif

/// `StreamWatcher`: the thread that reads a stream where the kernel wakes it (issue 19).
@Suite struct StreamWatcherTests {
  /// A socket pair: the watcher gets one end, the test writes the other.
  private static func pair() throws -> (watched: Int32, feed: Int32) {
    var fds: [Int32] = [-1, -1]
    let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
    try #require(socketpair(AF_UNIX, type, 0, &fds) == 0)
    return (fds[0], fds[1])
  }

  @Test func readsOnItsOwnThreadThenClosesOnceWhenCancelled() async throws {
    let (watched, feed) = try Self.pair()
    defer { close(feed) }
    let seen = Mutex<(bytes: [UInt8], onMain: Bool, closes: Int)>(([], false, 0))
    let made = StreamWatcher(
      fd: watched,
      readable: { _ in
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = read(watched, &buffer, buffer.count)
        seen.withLock {
          if count > 0 { $0.bytes += buffer[0..<count] }
          $0.onMain = $0.onMain || Thread.isMainThread
        }
      },
      close: {
        seen.withLock { $0.closes += 1 }
        close(watched)
      })
    let watcher = try #require(made)
    _ = send(feed, "$GP", 3, 0)
    #expect(await eventually { seen.withLock { $0.bytes.count == 3 } })
    watcher.cancel()
    watcher.cancel()
    #expect(await eventually { seen.withLock { $0.closes == 1 } })
    // The watched end is closed: the feed's peer is gone.
    var byte: UInt8 = 0
    #expect(await eventually { recv(feed, &byte, 1, Int32(MSG_DONTWAIT)) == 0 })
    #expect(seen.withLock { $0.closes == 1 && !$0.onMain && $0.bytes == Array("$GP".utf8) })
  }

  @Test func aHangUpIsReportedAsReadableSoThatTheReaderSeesTheEnd() async throws {
    let (watched, feed) = try Self.pair()
    let ended = Mutex(false)
    let made = StreamWatcher(
      fd: watched,
      readable: { _ in
        var byte: UInt8 = 0
        if read(watched, &byte, 1) == 0 { ended.withLock { $0 = true } }
      },
      close: { close(watched) })
    let watcher = try #require(made)
    close(feed)
    #expect(await eventually { ended.withLock { $0 } })
    watcher.cancel()
  }

  @Test func droppingTheWatcherEndsItsThreadAndClosesTheStream() async throws {
    let (watched, feed) = try Self.pair()
    defer { close(feed) }
    let closed = Mutex(false)
    do {
      let watcher = StreamWatcher(
        fd: watched, readable: { _ in },
        close: {
          closed.withLock { $0 = true }
          close(watched)
        })
      #expect(watcher != nil)
    }
    #expect(await eventually { closed.withLock { $0 } })
  }
}
