import Geodesy
import LocationModel
import Testing

@testable import LocationEngine

@Suite struct AutoPauseTests {
  static func fix(north metres: Double, at time: Double) -> Fix {
    SignificantChangeTests.fix(north: metres, at: time)
  }

  /// Feeds one fix a second at the start while running; returns the instant of the pause.
  static func runUntilPause(_ machine: inout AutoPause, limit: Double) -> Double? {
    var time = 0.0
    while time <= limit {
      // Receiver noise of ±3 m around the spot.
      let action = machine.fix(fix(north: Double(Int(time) % 7) - 3, at: time), at: time)
      switch action {
      case .deliver:
        break
      case .deliverAndPause(let checkAt):
        #expect(checkAt == time + AutoPause.checkPeriod)
        return time
      case .none, .startCheck, .stayPaused, .resume:
        Issue.record("unexpected \(action) while running")
        return nil
      }
      time += 1
    }
    return nil
  }

  @Test(arguments: [
    (ActivityType.other, 300.0),
    (.fitness, 600),
    (.otherNavigation, 1800),
  ])
  func pausesAfterTheDetectorsDwell(activity: ActivityType, dwell: Double) throws {
    var machine = AutoPause(activity: activity)
    let paused = try #require(Self.runUntilPause(&machine, limit: 7200))
    #expect(paused == dwell)
    #expect(machine.isPaused)
  }

  @Test(arguments: [ActivityType.automotiveNavigation, .airborne])
  func navigationAndFlightNeverPause(activity: ActivityType) {
    var machine = AutoPause(activity: activity)
    #expect(Self.runUntilPause(&machine, limit: 7200) == nil)
    #expect(!machine.isPaused)
  }

  /// After the pause, the device starts walking north at 1.4 m/s at `pause + delay`; checks run
  /// every 60 s and the source needs 5 s to fix. Updates resume within 2 minutes.
  @Test(
    arguments: [ActivityType.other, .fitness, .otherNavigation],
    [
      0.0, 1, 17, 30, 44, 59, 60, 200, 3601,
    ])
  func resumesWithinTwoMinutesOfMoving(activity: ActivityType, delay: Double)
    throws
  {
    var machine = AutoPause(activity: activity)
    let pause = try #require(Self.runUntilPause(&machine, limit: 7200))
    let start = pause + delay
    func position(_ time: Double) -> Double { time < start ? 0 : (time - start) * 1.4 }
    var checkAt = pause + AutoPause.checkPeriod
    var resumed: Double?
    while resumed == nil, checkAt < start + 600 {
      let check = machine.check(at: checkAt)
      #expect(check == .startCheck(nextCheckAt: checkAt + AutoPause.checkPeriod))
      let fixTime = checkAt + 5
      switch machine.fix(Self.fix(north: position(fixTime), at: fixTime), at: fixTime) {
      case .resume:
        resumed = fixTime
      case .stayPaused(let next):
        #expect(next == fixTime + AutoPause.checkPeriod)
        #expect(position(fixTime) <= 60)
        checkAt = next
      case .none, .deliver, .deliverAndPause, .startCheck:
        Issue.record("unexpected action while paused")
        return
      }
    }
    let at = try #require(resumed)
    #expect(at - start <= 120, "resumed \(at - start) s after moving")
    #expect(!machine.isPaused)
  }

  @Test func aCheckWithoutAFixKeepsTheSourceOn() {
    var machine = AutoPause(activity: .other)
    _ = Self.runUntilPause(&machine, limit: 1000)
    let early = machine.check(at: 310)
    #expect(early == .none)
    let first = machine.check(at: 360)
    #expect(first == .startCheck(nextCheckAt: 420))
    let again = machine.check(at: 420)
    #expect(again == .startCheck(nextCheckAt: 480))
    let invalid = machine.fix(
      Fix(latitude: 45, longitude: 7, horizontalAccuracy: -1, time: 425), at: 425)
    #expect(invalid == .none)
    #expect(machine.state == .checking(anchor: Self.fix(north: 3, at: 300)))
  }

  @Test func fixesFromOtherSourcesWhilePausedCanResume() {
    var machine = AutoPause(activity: .other)
    _ = Self.runUntilPause(&machine, limit: 1000)
    let still = machine.fix(Self.fix(north: 40, at: 320), at: 320)
    #expect(still == .none)
    let moved = machine.fix(Self.fix(north: 60, at: 330), at: 330)
    #expect(moved == .resume)
    // Running again with a fresh detector: the next pause needs a full dwell.
    let next = machine.fix(Self.fix(north: 60, at: 340), at: 340)
    #expect(next == .deliver)
  }

  @Test func restartRunsAgain() {
    var machine = AutoPause(activity: .fitness)
    _ = Self.runUntilPause(&machine, limit: 1000)
    #expect(machine.isPaused)
    machine.restart()
    #expect(machine.state == .running)
    let check = machine.check(at: 2000)
    #expect(check == .none)
  }
}
