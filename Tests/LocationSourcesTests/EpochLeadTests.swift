import CEpoll
import CoreFoundation
import Foundation
import Synchronization
import TestSupport
import Testing

@testable import LocationSources

#if canImport(Glibc)
  import Glibc
#endif

/// The wake-up or spin before each epoch (`EpochLead`, `EpochCadence`; issue 19): when a reader
/// wakes up or spins, for how long, and that a reader that sees the bytes reads them at once.
@Suite struct EpochLeadTests {
  private static let spin = EpochLead.spin(0.000_5)
  private static let wake = EpochLead.wake(0.000_5)

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
      #expect(cadence.window(lead: Self.spin) == nil)
    }
    cadence.note(10.8)
    let window = try #require(cadence.window(lead: Self.spin))
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
    #expect(cadence.window(lead: Self.spin) != nil)
    // The receiver paused for a second: the interval is far from the others.
    cadence.note(1.8)
    #expect(cadence.window(lead: Self.spin) == nil)
    for index in 1...7 {
      cadence.note(1.8 + Double(index) * 0.1)
      #expect(cadence.window(lead: Self.spin) == nil)
    }
    cadence.note(2.6)
    #expect(cadence.window(lead: Self.spin) != nil)
    // Two epochs in one period (a burst).
    cadence.note(2.61)
    #expect(cadence.window(lead: Self.spin) == nil)
  }

  @Test func timeGoingBackwardsStartsTheLearningAgain() {
    var cadence = Self.steady(from: 100, period: 0.1)
    #expect(cadence.window(lead: Self.spin) != nil)
    cadence.note(50)
    #expect(cadence.period == nil)
    #expect(cadence.window(lead: Self.spin) == nil)
  }

  @Test func noWindowWhenSpinningWouldTakeMoreThanATenthOfTheProcessor() {
    // 20 Hz: 20 leads of 2.5 ms fill the period.
    let cadence = Self.steady(from: 0, period: 0.05)
    #expect(cadence.window(lead: .spin(0.0024)) != nil)
    #expect(cadence.window(lead: .spin(0.0026)) == nil)
  }

  @Test func aWakeUpComesOneLeadBeforeTheEpochWhenThePeriodHoldsFourLeads() throws {
    let cadence = Self.steady(from: 0, period: 0.05)
    let window = try #require(cadence.window(lead: Self.wake))
    #expect(!window.spins)
    #expect(abs(window.start - (0.45 - 0.000_5)) < 1e-9)
    #expect(abs(window.end - 0.45) < 1e-9)
    // 20 Hz: 4 leads of 12.5 ms fill the period.
    #expect(cadence.window(lead: .wake(0.0124)) != nil)
    #expect(cadence.window(lead: .wake(0.0126)) == nil)
    // A pause closes it as it closes a spin's.
    var paused = cadence
    paused.note(2)
    #expect(paused.window(lead: Self.wake) == nil)
  }

  @Test func theWaitsPlan() {
    let wake = EpochWindow(start: 10, end: 10.000_5, spins: false)
    let spin = EpochWindow(start: 10, end: 10.001, spins: true)
    // No window, or another reader has the descriptor: a plain wait.
    #expect(EpochLead.plan(window: nil, now: 9, reads: true) == .block)
    #expect(EpochLead.plan(window: wake, now: 9, reads: false) == .block)
    #expect(EpochLead.plan(window: spin, now: 9, reads: false) == .block)
    // A wake-up to come; once its moment has passed (the wait after it), a plain wait.
    #expect(EpochLead.plan(window: wake, now: 9, reads: true) == .wake(at: 10))
    #expect(EpochLead.plan(window: wake, now: 10, reads: true) == .block)
    #expect(EpochLead.plan(window: wake, now: 10.000_1, reads: true) == .block)
    // A spin to come or under way; once it closed, a plain wait.
    #expect(EpochLead.plan(window: spin, now: 9, reads: true) == .spin(from: 10, until: 10.001))
    #expect(
      EpochLead.plan(window: spin, now: 10.000_5, reads: true) == .spin(from: 10, until: 10.001))
    #expect(EpochLead.plan(window: spin, now: 10.001, reads: true) == .block)
  }

  @Test func theSettingsAreMicrosecondsCappedAtFiveMillisecondsAndTheWakeUpIsTheDefault() {
    // Neither set: the wake-up, 1 ms.
    #expect(EpochLead.parse(spin: nil, wake: nil) == .wake(0.001))
    #expect(EpochLead.defaultWake == 0.001)
    // A spin that is not a positive number is off, and the wake-up stands.
    for text in ["", "0", "-500", "nan", "inf", "half a millisecond"] {
      #expect(EpochLead.parse(spin: text, wake: nil) == .wake(0.001))
    }
    #expect(EpochLead.parse(spin: "500", wake: nil) == .spin(0.000_5))
    #expect(EpochLead.parse(spin: "1000000", wake: nil) == .spin(EpochLead.maximum))
    // The spin wins over the wake-up.
    #expect(EpochLead.parse(spin: "250", wake: "1000") == .spin(0.000_25))
    // The wake-up: 0 or less turns it off; not a number leaves the default.
    #expect(EpochLead.parse(spin: nil, wake: "0") == nil)
    #expect(EpochLead.parse(spin: "0", wake: "0") == nil)
    #expect(EpochLead.parse(spin: nil, wake: "-1") == nil)
    #expect(EpochLead.parse(spin: nil, wake: "500") == .wake(0.000_5))
    #expect(EpochLead.parse(spin: nil, wake: "1000000") == .wake(EpochLead.maximum))
    #expect(EpochLead.parse(spin: nil, wake: "soon") == .wake(0.001))
    #expect(EpochLead.parse(spin: nil, wake: "inf") == .wake(0.001))
  }

  @Test func theSpinStopsAtTheFirstReadyPollOrAtTheDeadline() {
    // Ready at once: the clock is not even read.
    var clockReads = 0
    #expect(
      EpochLead.spin(
        until: 0,
        clock: {
          clockReads += 1
          return 0
        }, ready: { true }))
    #expect(clockReads == 0)
    // Ready at the third poll.
    var polls = 0
    #expect(
      EpochLead.spin(
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
      !EpochLead.spin(
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

  @Test func theWaitReturnsBytesThatCameBeforeInsideOrAfterTheWindowAndAWakeUpWithoutThem() throws {
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
    let later = EpochWindow(start: now + 30, end: now + 31, spins: true)
    #expect(EpochLead.wait(edges, window: later) & Int32(EPOLLIN.rawValue) != 0)
    // The window is open: the spin sees them.
    let open = EpochWindow(start: now - 1, end: now + 30, spins: true)
    #expect(EpochLead.wait(edges, window: open) & Int32(EPOLLIN.rawValue) != 0)
    // The window has passed: the plain wait sees them.
    let passed = EpochWindow(start: now - 2, end: now - 1, spins: true)
    #expect(EpochLead.wait(edges, window: passed) & Int32(EPOLLIN.rawValue) != 0)
    // A wake-up to come: the timed wait up to it sees them too.
    let wake = EpochWindow(start: now + 30, end: now + 31, spins: false)
    #expect(EpochLead.wait(edges, window: wake) & Int32(EPOLLIN.rawValue) != 0)
    // Nothing to read and a wake-up due 0.1 ms from now: the wait ends then, and says so.
    var buffer = [UInt8](repeating: 0, count: 8)
    #expect(recv(watched, &buffer, buffer.count, Int32(MSG_DONTWAIT)) == 3)
    let start = LiveClock.monotonicSeconds() + 0.000_1
    let soon = EpochWindow(start: start, end: start + 0.000_5, spins: false)
    #expect(EpochLead.wait(edges, window: soon) == EpochLead.wakeUpEvents)
    #expect(LiveClock.monotonicSeconds() >= start)
  }

  @Test(arguments: [EpochLeadTests.spin, EpochLeadTests.wake])
  func aWatcherWithALeadStillReadsEverything(lead: EpochLead) async throws {
    let (watched, feed) = try localSocketPair()
    defer { close(feed) }
    let received = Mutex<[UInt8]>([])
    let made = StreamWatcher(
      fd: watched, lead: lead,
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

  @Test func aReadingRunLoopsSpinReadsUntilTheEpochGoesOutAndLeavesAnEmptySocketAlone() throws {
    let (watched, feed) = try localSocketPair()
    defer {
      close(watched)
      close(feed)
    }
    // A run loop that nobody runs: only the calls below read (a running one's source could take
    // the bytes first, and the spin would then poll to its end).
    let idle = ReadingRunLoop(runLoop: CFRunLoopGetCurrent())
    let reads = Atomic(0)
    let delivered = Atomic(0)
    // The first read takes the epoch's first sentence and no fix goes out, and the rest arrives
    // meanwhile (the read sends it); the second read finishes the epoch: a delivery is taken.
    let installed = RunLoopReading.install(
      fd: watched, threadInstance: -1, on: idle, lead: Self.spin,
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

  @Test func aReadingRunLoopsWakeUpTriesOneReadAndTheThreadKnowsWhoReads() throws {
    let (watched, feed) = try localSocketPair()
    defer {
      close(watched)
      close(feed)
    }
    let threadInstance = cepoll_watching(watched, 1)
    try #require(threadInstance >= 0)
    // A run loop that nobody runs: only the calls below read.
    let idle = ReadingRunLoop(runLoop: CFRunLoopGetCurrent())
    let reads = Atomic(0)
    let delivered = Atomic(0)
    let installed = RunLoopReading.install(
      fd: watched, threadInstance: threadInstance, on: idle, lead: Self.wake,
      read: {
        reads.add(1, ordering: .relaxed)
        var buffer = [UInt8](repeating: 0, count: 64)
        guard recv(watched, &buffer, buffer.count, Int32(MSG_DONTWAIT)) > 0 else { return }
        _ = RunLoopReadingDeliveries.take { delivered.add(1, ordering: .relaxed) }
      })
    let reading = try #require(installed)
    defer {
      reading.uninstall()
      reading.closeThreadInstance()
    }
    let window = EpochWindow(start: 0, end: 0, spins: false)
    // Nothing there: one read, which finds nothing and delivers nothing.
    reading.beforeEpoch(window)
    #expect(reads.load(ordering: .relaxed) == 1)
    #expect(delivered.load(ordering: .relaxed) == 0)
    // The epoch came already: the wake-up's read takes it.
    _ = send(feed, "GGA", 3, 0)
    reading.beforeEpoch(window)
    #expect(reads.load(ordering: .relaxed) == 2)
    #expect(delivered.load(ordering: .relaxed) == 1)
    // Whether the reader thread watches the input (and so wakes up before an epoch itself).
    reading.threadReads(false)
    #expect(!reading.threadIsReading)
    reading.threadReads(true)
    #expect(reading.threadIsReading)
  }
}
