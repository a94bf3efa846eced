import CEpoll
import Foundation
import Synchronization
import TestSupport
import Testing

@testable import LocationSources

#if canImport(Glibc)
  import Glibc
#endif

/// The opt-in spin before each epoch (`EpochSpin`, `EpochCadence`; issue 19): when it spins, for
/// how long, and that a spin that sees the bytes reads them at once.
@Suite struct EpochSpinTests {
  /// Nine arrivals `period` apart from `start`.
  private static func steady(from start: Double, period: Double) -> EpochCadence {
    var cadence = EpochCadence()
    for index in 0...8 { cadence.note(start + Double(index) * period) }
    return cadence
  }

  @Test func aWindowOpensOnlyAfterEightSteadyIntervals() throws {
    var cadence = EpochCadence()
    for index in 0..<8 {
      cadence.note(10 + Double(index) * 0.1)
      #expect(cadence.window(lead: 0.0005) == nil)
    }
    cadence.note(10.8)
    let window = try #require(cadence.window(lead: 0.0005))
    #expect(abs(window.start - (10.9 - 0.0005)) < 1e-9)
    #expect(abs(window.end - (10.9 + 0.0005)) < 1e-9)
    #expect(abs((cadence.period ?? 0) - 0.1) < 1e-9)
  }

  @Test func arrivalsThatJitterWithinATenthStillGiveTheMedianPeriod() throws {
    var cadence = EpochCadence()
    let offsets = [0.0, 0.004, -0.003, 0.002, 0.0, -0.004, 0.003, 0.001, 0.0]
    for (index, offset) in offsets.enumerated() { cadence.note(Double(index) + offset) }
    let period = try #require(cadence.period)
    #expect(abs(period - 1) < 0.005)
  }

  @Test func aPauseOrABurstClosesTheWindowUntilEightSteadyIntervalsAgain() {
    var cadence = Self.steady(from: 0, period: 0.1)
    #expect(cadence.window(lead: 0.0005) != nil)
    // The receiver paused for a second: the interval is far from the others.
    cadence.note(1.8)
    #expect(cadence.window(lead: 0.0005) == nil)
    for index in 1...7 {
      cadence.note(1.8 + Double(index) * 0.1)
      #expect(cadence.window(lead: 0.0005) == nil)
    }
    cadence.note(2.6)
    #expect(cadence.window(lead: 0.0005) != nil)
    // Two epochs in one period (a burst).
    cadence.note(2.61)
    #expect(cadence.window(lead: 0.0005) == nil)
  }

  @Test func timeGoingBackwardsStartsTheLearningAgain() {
    var cadence = Self.steady(from: 100, period: 0.1)
    #expect(cadence.window(lead: 0.0005) != nil)
    cadence.note(50)
    #expect(cadence.period == nil)
    #expect(cadence.window(lead: 0.0005) == nil)
  }

  @Test func noWindowWhenSpinningWouldTakeMoreThanATenthOfTheProcessor() {
    // 20 Hz: 20 leads of 2.5 ms fill the period.
    let cadence = Self.steady(from: 0, period: 0.05)
    #expect(cadence.window(lead: 0.0024) != nil)
    #expect(cadence.window(lead: 0.0026) == nil)
  }

  @Test func theSettingIsMicrosecondsCappedAtFiveMilliseconds() {
    #expect(EpochSpin.parse(nil) == nil)
    #expect(EpochSpin.parse("") == nil)
    #expect(EpochSpin.parse("0") == nil)
    #expect(EpochSpin.parse("-500") == nil)
    #expect(EpochSpin.parse("nan") == nil)
    #expect(EpochSpin.parse("inf") == nil)
    #expect(EpochSpin.parse("half a millisecond") == nil)
    #expect(EpochSpin.parse("500") == 0.0005)
    #expect(EpochSpin.parse("1000000") == EpochSpin.maximumLead)
  }

  @Test func theSpinStopsAtTheFirstReadyPollOrAtTheDeadline() {
    // Ready at once: the clock is not even read.
    var clockReads = 0
    #expect(
      EpochSpin.spin(
        until: 0,
        clock: {
          clockReads += 1
          return 0
        }, ready: { true }))
    #expect(clockReads == 0)
    // Ready at the third poll.
    var polls = 0
    #expect(
      EpochSpin.spin(
        until: 10, clock: { 0 },
        ready: {
          polls += 1
          return polls == 3
        }))
    #expect(polls == 3)
    // Never ready: it gives up once the clock passes the deadline.
    var now = 0.0
    polls = 0
    #expect(
      !EpochSpin.spin(
        until: 1,
        clock: {
          now += 0.25
          return now
        },
        ready: {
          polls += 1
          return false
        }))
    #expect(polls == 4)
  }

  @Test func theWaitReturnsBytesThatCameBeforeInsideOrAfterTheWindow() throws {
    let (watched, feed) = try localSocketPair()
    defer {
      close(watched)
      close(feed)
    }
    let edges = cepoll_watching(watched, 0)
    try #require(edges >= 0)
    defer { close(edges) }
    _ = send(feed, "$GP", 3, 0)
    let now = LiveClock.monotonicSeconds()
    // The window opens later: the timed wait up to it sees the bytes.
    #expect(EpochSpin.wait(edges, window: (now + 30, now + 31)) & Int32(EPOLLIN.rawValue) != 0)
    // The window is open: the spin sees them.
    #expect(EpochSpin.wait(edges, window: (now - 1, now + 30)) & Int32(EPOLLIN.rawValue) != 0)
    // The window has passed: the plain wait sees them.
    #expect(EpochSpin.wait(edges, window: (now - 2, now - 1)) & Int32(EPOLLIN.rawValue) != 0)
  }

  @Test func aWatcherWithASpinStillReadsEverything() async throws {
    let (watched, feed) = try localSocketPair()
    defer { close(feed) }
    let received = Mutex<[UInt8]>([])
    let made = StreamWatcher(
      fd: watched, spinLead: 0.000_5,
      readable: { _ in
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = read(watched, &buffer, buffer.count)
        guard count > 0 else { return false }
        received.withLock { $0 += buffer[0..<count] }
        return true
      },
      close: { close(watched) })
    let watcher = try #require(made)
    defer { watcher.cancel() }
    for index in 0..<20 {
      var byte = UInt8(index)
      _ = send(feed, &byte, 1, 0)
      #expect(await eventually { received.withLock { $0.count == index + 1 } })
    }
    #expect(received.withLock { $0 } == (0..<20).map { UInt8($0) })
  }

  @Test func aReadingRunLoopsSpinReadsUntilTheEpochGoesOutAndLeavesAnEmptySocketAlone()
    async throws
  {
    let (watched, feed) = try localSocketPair()
    defer {
      close(watched)
      close(feed)
    }
    let turning = try #require(await TurningRunLoop.start(interval: 0.05))
    defer { turning.stop() }
    let reads = Atomic(0)
    let delivered = Atomic(0)
    // The first read takes the epoch's first sentence and no fix goes out, and the rest arrives
    // meanwhile (the read sends it); the second read finishes the epoch: a delivery is taken.
    let installed = RunLoopReading.install(
      fd: watched, threadInstance: -1, on: ReadingRunLoop(runLoop: turning.runLoop),
      spinLead: 0.000_5,
      read: {
        var buffer = [UInt8](repeating: 0, count: 64)
        guard recv(watched, &buffer, buffer.count, Int32(MSG_DONTWAIT)) > 0 else { return }
        if reads.add(1, ordering: .relaxed).newValue == 1 {
          _ = send(feed, "RMC", 3, 0)
        } else {
          _ = RunLoopReadingDeliveries.take { delivered.add(1, ordering: .relaxed) }
        }
      })
    let reading = try #require(installed)
    defer {
      reading.uninstall()
      reading.closeThreadInstance()
    }
    // Nothing to read and the window already over: no read.
    reading.spinBeforeEpoch(until: LiveClock.monotonicSeconds() - 1)
    #expect(reads.load(ordering: .relaxed) == 0)
    // Bytes there: the spin reads them at once, and on until the epoch went out.
    _ = send(feed, "GGA", 3, 0)
    reading.spinBeforeEpoch(until: LiveClock.monotonicSeconds() + 30)
    #expect(reads.load(ordering: .relaxed) == 2)
    #expect(delivered.load(ordering: .relaxed) == 1)
  }
}
