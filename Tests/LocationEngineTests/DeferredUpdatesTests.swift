import Geodesy
import LocationModel
import Testing

@testable import LocationEngine

@Suite struct DeferredUpdatesTests {
  typealias Conditions = DeferredUpdates.Conditions

  static let good = Conditions(
    isUpdating: true, hasGNSS: true, desiredAccuracy: -1, distanceFilter: -1)
  static let distanceMax = Double.greatestFiniteMagnitude
  static let timeIntervalMax = Double.greatestFiniteMagnitude

  static func fix(north metres: Double, at time: Double) -> Fix {
    SignificantChangeTests.fix(north: metres, at: time)
  }

  static let preconditions: [(Conditions, Int?)] = [
    (good, nil),
    (Conditions(isUpdating: true, hasGNSS: true, desiredAccuracy: -2, distanceFilter: 0), nil),
    (Conditions(isUpdating: false, hasGNSS: true, desiredAccuracy: -1, distanceFilter: -1), 12),
    (
      Conditions(
        isUpdating: true, isPaused: true, hasGNSS: true, desiredAccuracy: -1, distanceFilter: -1),
      12
    ),
    (Conditions(isUpdating: true, hasGNSS: false, desiredAccuracy: -1, distanceFilter: -1), 11),
    (Conditions(isUpdating: true, hasGNSS: true, desiredAccuracy: 10, distanceFilter: -1), 13),
    (Conditions(isUpdating: true, hasGNSS: true, desiredAccuracy: 0, distanceFilter: -1), 13),
    (Conditions(isUpdating: true, hasGNSS: true, desiredAccuracy: .nan, distanceFilter: -1), 13),
    (Conditions(isUpdating: true, hasGNSS: true, desiredAccuracy: -1, distanceFilter: 5), 14),
    // The order: not updating wins over everything else.
    (Conditions(isUpdating: false, hasGNSS: false, desiredAccuracy: 100, distanceFilter: 5), 12),
    (Conditions(isUpdating: true, hasGNSS: true, desiredAccuracy: 100, distanceFilter: 5), 13),
  ]

  @Test(arguments: preconditions)
  func preconditionsAndTheirCodes(conditions: Conditions, code: Int?) {
    var machine = DeferredUpdates()
    let action = machine.allow(untilTraveled: 100, timeout: 60, conditions: conditions, at: 0)
    if let code {
      #expect(action == .reject(DeferredUpdates.Failure(rawValue: code) ?? .deferredFailed))
      #expect(!machine.isDeferring)
    } else {
      #expect(action == .started(deadline: 60))
      #expect(machine.isDeferring)
    }
  }

  @Test func rawValuesMirrorCLError() {
    #expect(DeferredUpdates.Failure.allCases.map(\.rawValue) == [11, 12, 13, 14, 15])
  }

  @Test(arguments: [(-1.0, 60.0), (100, -1), (.nan, 60), (100, .nan)])
  func malformedRequestsFail(distance: Double, timeout: Double) {
    var machine = DeferredUpdates()
    let action = machine.allow(
      untilTraveled: distance, timeout: timeout, conditions: Self.good, at: 0)
    #expect(action == .reject(.deferredFailed))
  }

  @Test func fixesPassThroughWhenNotDeferring() {
    var machine = DeferredUpdates()
    let fix = Self.fix(north: 0, at: 0)
    let action = machine.fix(fix, at: 0)
    #expect(action == .deliver(fix))
  }

  @Test func batchByDistanceFromTheCurrentLocation() {
    var machine = DeferredUpdates()
    _ = machine.fix(Self.fix(north: 0, at: 0), at: 0)
    let started = machine.allow(
      untilTraveled: 1000, timeout: Self.timeIntervalMax, conditions: Self.good, at: 0)
    #expect(started == .started(deadline: nil))
    var expected: [Fix] = []
    // 10 m/s north: 99 fixes are held; the one at 1000 m ends the deferral.
    for second in 1...100 {
      let time = Double(second)
      let fix = Self.fix(north: 10 * time, at: time)
      expected.append(fix)
      let action = machine.fix(fix, at: time)
      if second < 100 {
        #expect(action == .hold)
      } else {
        #expect(action == .finish(batch: expected, error: nil))
      }
    }
    #expect(!machine.isDeferring)
    let after = Self.fix(north: 1010, at: 101)
    let passed = machine.fix(after, at: 101)
    #expect(passed == .deliver(after))
  }

  @Test func distanceIsStraightLineNotPathLength() {
    var machine = DeferredUpdates()
    _ = machine.fix(Self.fix(north: 0, at: 0), at: 0)
    _ = machine.allow(untilTraveled: 100, timeout: 3600, conditions: Self.good, at: 0)
    // Pacing back and forth 80 m for 10 minutes: 4.8 km of path, never 100 m away.
    for second in 1...600 {
      let time = Double(second)
      let action = machine.fix(Self.fix(north: second % 2 == 0 ? 0 : 80, at: time), at: time)
      #expect(action == .hold)
    }
  }

  @Test func withoutAPriorFixTheFirstHeldFixIsTheOrigin() {
    var machine = DeferredUpdates()
    _ = machine.allow(untilTraveled: 50, timeout: 3600, conditions: Self.good, at: 0)
    let first = machine.fix(Self.fix(north: 500, at: 1), at: 1)
    #expect(first == .hold)
    let second = machine.fix(Self.fix(north: 549, at: 2), at: 2)
    #expect(second == .hold)
    let third = machine.fix(Self.fix(north: 551, at: 3), at: 3)
    #expect(
      third
        == .finish(
          batch: [
            Self.fix(north: 500, at: 1), Self.fix(north: 549, at: 2), Self.fix(north: 551, at: 3),
          ], error: nil))
  }

  @Test func batchByTimeout() {
    var machine = DeferredUpdates()
    let started = machine.allow(
      untilTraveled: Self.distanceMax, timeout: 120, conditions: Self.good, at: 1000)
    #expect(started == .started(deadline: 1120))
    #expect(machine.deadline == 1120)
    var held: [Fix] = []
    for time in stride(from: 1010.0, through: 1110, by: 10) {
      let fix = Self.fix(north: 0, at: time)
      held.append(fix)
      let action = machine.fix(fix, at: time)
      #expect(action == .hold)
    }
    let early = machine.tick(at: 1119)
    #expect(early == .none)
    let due = machine.tick(at: 1120)
    #expect(due == .finish(batch: held, error: nil))
    let late = machine.tick(at: 1200)
    #expect(late == .none)
  }

  @Test func aFixAtTheDeadlineEndsTheBatch() {
    var machine = DeferredUpdates()
    _ = machine.allow(untilTraveled: Self.distanceMax, timeout: 60, conditions: Self.good, at: 0)
    let fix = Self.fix(north: 0, at: 60)
    let action = machine.fix(fix, at: 60)
    #expect(action == .finish(batch: [fix], error: nil))
  }

  @Test func timeoutWithNothingHeldFinishesWithAnEmptyBatch() {
    var machine = DeferredUpdates()
    _ = machine.allow(untilTraveled: 100, timeout: 30, conditions: Self.good, at: 0)
    let action = machine.tick(at: 30)
    #expect(action == .finish(batch: [], error: nil))
  }

  @Test func unlimitedBothWaysHoldsUntilCanceled() {
    var machine = DeferredUpdates()
    let started = machine.allow(
      untilTraveled: Self.distanceMax, timeout: .infinity, conditions: Self.good, at: 0)
    #expect(started == .started(deadline: nil))
    let far = machine.fix(Self.fix(north: 1_000_000, at: 1e9), at: 1e9)
    #expect(far == .hold)
    let tick = machine.tick(at: 1e12)
    #expect(tick == .none)
  }

  @Test func disallowDeliversTheBatchThenCancels() {
    var machine = DeferredUpdates()
    _ = machine.allow(untilTraveled: 1000, timeout: 600, conditions: Self.good, at: 0)
    let fixes = [Self.fix(north: 1, at: 1), Self.fix(north: 2, at: 2)]
    for fix in fixes { _ = machine.fix(fix, at: fix.time) }
    let action = machine.disallow()
    #expect(action == .finish(batch: fixes, error: .deferredCanceled))
    let again = machine.disallow()
    #expect(again == .none)
  }

  @Test func stoppingUpdatesCancels() {
    var machine = DeferredUpdates()
    _ = machine.allow(untilTraveled: 1000, timeout: 600, conditions: Self.good, at: 0)
    let fix = Self.fix(north: 1, at: 1)
    _ = machine.fix(fix, at: 1)
    let action = machine.stopUpdating()
    #expect(action == .finish(batch: [fix], error: .deferredCanceled))
  }

  @Test func allowingAgainCancelsThePreviousDeferral() {
    var machine = DeferredUpdates()
    _ = machine.allow(untilTraveled: 1000, timeout: 600, conditions: Self.good, at: 0)
    let fix = Self.fix(north: 1, at: 1)
    _ = machine.fix(fix, at: 1)
    let second = machine.allow(untilTraveled: 500, timeout: 60, conditions: Self.good, at: 2)
    #expect(second == .finish(batch: [fix], error: .deferredCanceled))
    #expect(machine.deadline == 62)
    // The new deferral measures from the last fix seen (1 m north).
    let near = machine.fix(Self.fix(north: 500, at: 3), at: 3)
    #expect(near == .hold)
    let reached = machine.fix(Self.fix(north: 501, at: 4), at: 4)
    #expect(
      reached
        == .finish(batch: [Self.fix(north: 500, at: 3), Self.fix(north: 501, at: 4)], error: nil))
  }

  @Test func aRejectedRequestLeavesTheRunningDeferral() {
    var machine = DeferredUpdates()
    _ = machine.allow(untilTraveled: 1000, timeout: 600, conditions: Self.good, at: 0)
    var bad = Self.good
    bad.distanceFilter = 10
    let rejected = machine.allow(untilTraveled: 10, timeout: 60, conditions: bad, at: 1)
    #expect(rejected == .reject(.deferredDistanceFiltered))
    #expect(machine.isDeferring)
    #expect(machine.deadline == 600)
  }
}
