import CoreFoundation
import Foundation
import TestSupport
import Testing

@testable import LocationSources

/// A program whose main thread ends in `dispatchMain()` (`whereami`, which says
/// `ReadingRunLoop.mainThreadWillEnd()` first) gets no reading on the main run loop: Core
/// Foundation would complain for each thing added to a run loop whose thread has ended (a
/// failure seen in CI), and nothing would ever read there. Any other run loop still gets its
/// reading. The main thread's end is given to `install` here, so that the test does not end this
/// process's main run loop for the other suites.
@Suite struct RunLoopReadingMainThreadTests {
  @Test func aMainThreadThatHasEndedGetsNoReadingAndAnotherRunLoopStillDoes() async throws {
    let (watched, feed) = try localSocketPair()
    defer {
      close(watched)
      close(feed)
    }
    let alive = LiveCount()
    let onMain = RunLoopReading.install(
      fd: watched, threadInstance: -1, on: .main, alive: alive, mainThreadHasEnded: { true },
      read: {})
    #expect(onMain == nil)
    #expect(alive.value.load(ordering: .relaxed) == 0, "a reading was made for the main run loop")

    // A thread's own run loop, turning until the test is done.
    let turning = try #require(await TurningRunLoop.start(interval: 0.01))
    defer { turning.stop() }
    do {
      // In a scope of its own: the test lets go of the reading before it waits for the run loop
      // to.
      let reading = RunLoopReading.install(
        fd: watched, threadInstance: -1, on: ReadingRunLoop(runLoop: turning.runLoop),
        alive: alive, mainThreadHasEnded: { true }, read: {})
      #expect(reading != nil, "another thread's run loop got no reading")
      reading?.uninstall()
      reading?.closeThreadInstance()
    }
    #expect(await eventually(timeout: 60) { alive.value.load(ordering: .relaxed) == 0 })
  }
}
