import CoreFoundation
import Dispatch
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
  @Test func readsOnItsOwnThreadThenClosesOnceWhenCancelled() async throws {
    let (watched, feed) = try localSocketPair()
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
        return false
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
    let (watched, feed) = try localSocketPair()
    let ended = Mutex(false)
    let made = StreamWatcher(
      fd: watched,
      readable: { _ in
        var byte: UInt8 = 0
        if read(watched, &byte, 1) == 0 { ended.withLock { $0 = true } }
        return false
      },
      close: { close(watched) })
    let watcher = try #require(made)
    close(feed)
    #expect(await eventually { ended.withLock { $0 } })
    watcher.cancel()
  }

  @Test func droppingTheWatcherEndsItsThreadAndClosesTheStream() async throws {
    let (watched, feed) = try localSocketPair()
    defer { close(feed) }
    let closed = Mutex(false)
    do {
      let watcher = StreamWatcher(
        fd: watched, readable: { _ in false },
        close: {
          closed.withLock { $0 = true }
          close(watched)
        })
      #expect(watcher != nil)
    }
    #expect(await eventually { closed.withLock { $0 } })
  }

  @Test func aHangUpThatCameWithTheLastBytesIsReportedWithThem() async throws {
    // Bytes and the end arrive before the watcher first waits: one edge reports both, and no
    // later edge will announce the end, so `readable` is told to read on to it.
    let (watched, feed) = try localSocketPair()
    _ = send(feed, "$GP", 3, 0)
    close(feed)
    let calls = Mutex<[Bool]>([])
    let made = StreamWatcher(
      fd: watched,
      readable: { hungUp in
        var buffer = [UInt8](repeating: 0, count: 64)
        while read(watched, &buffer, buffer.count) > 0 {}
        calls.withLock { $0.append(hungUp) }
        return false
      },
      close: { close(watched) })
    let watcher = try #require(made)
    #expect(await eventually { !calls.withLock { $0 }.isEmpty })
    #expect(calls.withLock { $0.first } == true)
    watcher.cancel()
  }

  /// A thread running its run loop until told to stop, as a reading run loop.
  final class LoopThread: @unchecked Sendable {
    // @unchecked: `runLoop` and `thread` are written once on the thread before `made` is set,
    // and read by the test only after it.
    let made = Atomic(false)
    let finish = Atomic(false)
    var runLoop: ReadingRunLoop?
    var thread: pthread_t?

    init() async {
      Thread { [self] in
        thread = pthread_self()
        runLoop = .current
        made.store(true, ordering: .releasing)
        runCurrentRunLoop { finish.load(ordering: .acquiring) }
      }.start()
      _ = await eventually { made.load(ordering: .acquiring) }
    }

    func isLoopThread(_ other: pthread_t) -> Bool {
      thread.map { pthread_equal($0, other) != 0 } ?? false
    }

    /// Holds the thread in a run loop callout until the returned semaphore is signalled.
    func hold() async -> DispatchSemaphore {
      let gate = DispatchSemaphore(value: 0)
      let held = Atomic(false)
      if let runLoop = runLoop?.runLoop {
        CFRunLoopPerformBlock(runLoop, kCFRunLoopCommonModes) {
          held.store(true, ordering: .releasing)
          gate.wait()
        }
        CFRunLoopWakeUp(runLoop)
      }
      _ = await eventually { held.load(ordering: .acquiring) }
      return gate
    }
  }

  @Test func aReadingRunLoopReadsWhileItWaitsAndTheThreadWhileItIsBusy() async throws {
    let (watched, feed) = try localSocketPair()
    defer { close(feed) }
    let loop = await LoopThread()
    defer { loop.finish.store(true, ordering: .releasing) }
    let reads = Mutex<[(bytes: [UInt8], onLoop: Bool)]>([])
    let made = StreamWatcher(
      fd: watched, runLoop: loop.runLoop,
      readable: { _ in
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = read(watched, &buffer, buffer.count)
        guard count > 0 else { return false }
        let onLoop = loop.isLoopThread(pthread_self())
        reads.withLock { $0.append((Array(buffer[0..<count]), onLoop)) }
        return false
      },
      close: { close(watched) })
    let watcher = try #require(made)
    defer { watcher.cancel() }
    // Once the run loop waits, it reads what arrives itself (a byte at a time until it does: the
    // first bytes may come before it turned to wait).
    var sent: [UInt8] = []
    var loopRead = false
    for _ in 0..<500 where !loopRead {
      var byte = UInt8(ascii: "a") + UInt8(sent.count % 26)
      sent.append(byte)
      _ = send(feed, &byte, 1, 0)
      let target = sent.count
      // A byte nobody reads ends the attempts (and fails below) instead of waiting 500 times.
      guard await eventually({ reads.withLock { $0.flatMap(\.bytes).count } == target }) else {
        break
      }
      loopRead = reads.withLock { $0.last?.onLoop == true }
    }
    #expect(loopRead, "the run loop read while it waited")
    // Held busy, the run loop leaves the bytes to the watcher's thread.
    let gate = await loop.hold()
    let before = reads.withLock { $0.count }
    _ = send(feed, "$GP", 3, 0)
    sent += Array("$GP".utf8)
    #expect(await eventually { reads.withLock { $0.count > before } })
    #expect(reads.withLock { $0[before...].allSatisfy { !$0.onLoop } }, "the thread read")
    gate.signal()
    // Every byte read once, in order, whoever read it.
    #expect(await eventually { reads.withLock { $0.flatMap(\.bytes) } == sent })
  }
}
