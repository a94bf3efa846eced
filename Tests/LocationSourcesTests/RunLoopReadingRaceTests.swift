import CoreFoundation
import Foundation
import TestSupport
import Testing

@testable import LocationSources

/// A reading run loop's reading is uninstalled by the client's reader thread while the run loop's
/// own thread may be calling its observer: Core Foundation lets go of an observer's `info` when
/// it is invalidated, so invalidating from the reader thread freed the reading in the middle of
/// that callout (a crash in CI, `RunLoopReading.install`'s observer closure). The
/// observer is now invalidated on the run loop's thread. This test drives that path 3,000 times
/// against a run loop that turns all the time, and checks that every reading is let go of; the
/// window is narrow, and three runs of it against the code before did not hit it.
@Suite struct RunLoopReadingRaceTests {
  @Test func uninstallingWhileTheRunLoopTurnsDoesNotFreeTheReadingUnderIt() async throws {
    let (watched, feed) = try localSocketPair()
    defer {
      close(watched)
      close(feed)
    }
    // A timer that fires all the time: the run loop waits and wakes (the observer's activities)
    // as often as it can.
    let turning = try #require(await TurningRunLoop.start(interval: 0.000_1))
    // Stopped only after the wait below (and on every way out of the test).
    defer { turning.stop() }
    let runLoop = turning.runLoop
    let alive = LiveCount()
    for _ in 0..<3_000 {
      // No reader thread here (-1: its interest is never turned on or off).
      let installed = RunLoopReading.install(
        fd: watched, threadInstance: -1, on: ReadingRunLoop(runLoop: runLoop),
        alive: alive, read: {})
      guard let reading = installed else {
        Issue.record("the reading could not be installed")
        break
      }
      sched_yield()
      reading.uninstall()
      reading.closeThreadInstance()
    }
    // Every reading is let go of once the run loop has turned past its observer's invalidation:
    // the run loop keeps turning until then. (Stopped first, it could end with the last
    // invalidations still queued as blocks it never ran, and the readings were never let go of:
    // a failure seen in CI.)
    #expect(await eventually(timeout: 60) { alive.value.load(ordering: .relaxed) == 0 })
  }
}
