import Geodesy
import LocationModel
import Testing

@testable import LocationEngine

/// A synthetic trace along the meridian through 7° E: segments of constant speed northwards.
struct SyntheticTrace {
  /// (duration in seconds, speed in m/s).
  var segments: [(duration: Double, speed: Double)]
  /// Receiver noise, metres, added along the track (a deterministic function of time).
  var noise = 0.0

  var duration: Double { segments.reduce(0) { $0 + $1.duration } }

  /// Distance travelled north by `time`, metres, and the speed then.
  func state(at time: Double) -> (distance: Double, speed: Double) {
    var start = 0.0
    var distance = 0.0
    for segment in segments {
      if time < start + segment.duration {
        return (distance + (time - start) * segment.speed, segment.speed)
      }
      distance += segment.duration * segment.speed
      start += segment.duration
    }
    return (distance, 0)
  }

  func fix(at time: Double) -> Fix {
    let (distance, speed) = state(at: time)
    let jitter = noise * ((time * 0.731).truncatingRemainder(dividingBy: 2) - 1)
    return SignificantChangeTests.fix(north: distance + jitter, at: time)
      .with(speed: speed)
  }
}

extension Fix {
  func with(speed: Double) -> Fix {
    var copy = self
    copy.speed = speed
    return copy
  }
}

@Suite struct DutyCycleTests {
  struct Run {
    var onTime = 0.0
    var deliveries: [(time: Double, distance: Double)] = []
    var wakes = 0
  }

  /// Runs the duty cycle over a trace; the source gives its fix `timeToFix` seconds after it is
  /// turned on.
  static func simulate(_ trace: SyntheticTrace, timeToFix: Double) -> Run {
    var cycle = DutyCycle()
    var run = Run()
    var onAt = 0.0
    let result1 = cycle.start(at: 0)
    #expect(result1)
    while true {
      let fixTime = onAt + timeToFix
      guard fixTime <= trace.duration else {
        run.onTime += trace.duration - onAt
        break
      }
      run.onTime += timeToFix
      let action = cycle.fix(trace.fix(at: fixTime), at: fixTime)
      if action.deliver {
        run.deliveries.append((fixTime, trace.state(at: fixTime).distance))
      }
      #expect(action.sourceOff)
      guard let next = action.nextWake, next <= trace.duration else { break }
      let result2 = cycle.wake(at: next)
      #expect(result2)
      run.wakes += 1
      onAt = next
    }
    return run
  }

  /// The worst delay between the ideal instant (first instant ≥ 300 s after a delivery at which
  /// the device is ≥ 500 m from it) and the next delivery, seconds (1 s resolution).
  static func worstLateness(_ run: Run, _ trace: SyntheticTrace) -> Double {
    var worst = 0.0
    for (index, delivery) in run.deliveries.enumerated() {
      var ideal: Double?
      var time = delivery.time + 300
      while time <= trace.duration {
        if abs(trace.state(at: time).distance - delivery.distance) >= 500 {
          ideal = time
          break
        }
        time += 1
      }
      guard let ideal else { continue }
      let next = index + 1 < run.deliveries.count ? run.deliveries[index + 1].time : trace.duration
      worst = max(worst, next - ideal)
    }
    return worst
  }

  static let commute = SyntheticTrace(
    segments: [(1200, 0), (600, 1.4)]
      + Array(repeating: [(120.0, 14.0), (60.0, 0.0)], count: 10).flatMap { $0 }
      + [(600, 1.4), (600, 0), (600, 5), (1800, 0)],
    noise: 8)

  static let stayAtHome = SyntheticTrace(
    segments: [(10_800, 0), (600, 1.4), (10_200, 0)], noise: 15)

  static let intervals: [(Double, Double)] = [
    (-1, 300), (0, 300), (0.5, 300), (1, 250), (1.4, 250 / 1.4), (4, 62.5), (14, 60),
    (.nan, 300),
  ]

  @Test(arguments: intervals)
  func intervalFormula(speed: Double, interval: Double) {
    #expect(abs(DutyCycle.interval(speed: speed) - interval) < 1e-9)
  }

  @Test(arguments: [1.0, 5.0])
  func commuteOnTimeAndLateness(timeToFix: Double) {
    let trace = Self.commute
    #expect(trace.duration == 7200)
    let run = Self.simulate(trace, timeToFix: timeToFix)
    let fraction = run.onTime / trace.duration
    #expect(fraction <= 0.10, "on-time \(fraction)")
    let lateness = Self.worstLateness(run, trace)
    #expect(lateness <= 300 + timeToFix + 1, "lateness \(lateness)")
    // The commute moves about 20 km: many deliveries, never two within 5 minutes.
    #expect(run.deliveries.count >= 10)
    for (a, b) in zip(run.deliveries, run.deliveries.dropFirst()) {
      #expect(b.time - a.time >= 300)
      #expect(abs(b.distance - a.distance) >= 500 - 3 * 8)
    }
  }

  @Test(arguments: [1.0, 5.0])
  func stationaryDayOnTime(timeToFix: Double) {
    let trace = Self.stayAtHome
    #expect(trace.duration == 6 * 3600)
    let run = Self.simulate(trace, timeToFix: timeToFix)
    let fraction = run.onTime / trace.duration
    #expect(fraction <= 0.03, "on-time \(fraction)")
    // The first fix, then the 840 m walk; the noise never counts as a move.
    #expect(run.deliveries.count == 2)
    #expect(Self.worstLateness(run, trace) <= 300 + timeToFix + 1)
  }

  @Test func stationaryWakesEveryFiveMinutes() {
    var cycle = DutyCycle()
    let result3 = cycle.start(at: 0)
    #expect(result3)
    let first = cycle.fix(SignificantChangeTests.fix(north: 0, at: 2).with(speed: 0), at: 2)
    #expect(first == DutyCycle.Action(deliver: true, sourceOff: true, nextWake: 302))
    let result4 = cycle.wake(at: 301)
    #expect(!result4)
    let result5 = cycle.wake(at: 302)
    #expect(result5)
    let second = cycle.fix(SignificantChangeTests.fix(north: 3, at: 304).with(speed: 0), at: 304)
    #expect(second == DutyCycle.Action(deliver: false, sourceOff: true, nextWake: 604))
  }

  @Test func speedIsEstimatedWhenTheFixHasNone() {
    var cycle = DutyCycle()
    _ = cycle.start(at: 0)
    _ = cycle.fix(SignificantChangeTests.fix(north: 0, at: 0), at: 0)
    _ = cycle.wake(at: 300)
    // 600 m in 300 s: 2 m/s, so the interval is 125 s; delivered (600 m, 300 s).
    let action = cycle.fix(SignificantChangeTests.fix(north: 600, at: 300), at: 300)
    #expect(action.deliver)
    #expect(action.nextWake == 600)
    _ = cycle.wake(at: 600)
    // 200 m in 300 s without speed: 0.667 m/s → 375 s → 300 s cap; not yet 500 m.
    let slow = cycle.fix(SignificantChangeTests.fix(north: 800, at: 600), at: 600)
    #expect(!slow.deliver)
    #expect(slow.nextWake == 900)
  }

  @Test func giveUpStopStart() {
    var cycle = DutyCycle()
    let result6 = cycle.start(at: 0)
    #expect(result6)
    let result7 = cycle.start(at: 1)
    #expect(!result7)
    let result8 = cycle.giveUp(at: 30)
    #expect(result8 == DutyCycle.Action(deliver: false, sourceOff: true, nextWake: 330))
    #expect(cycle.state == .off(wakeAt: 330))
    let result9 = cycle.stop()
    #expect(!result9)
    #expect(cycle.state == .stopped)
    let result10 = cycle.wake(at: 400)
    #expect(!result10)
    let ignored = cycle.fix(SignificantChangeTests.fix(north: 0, at: 400), at: 400)
    #expect(!ignored.deliver && !ignored.sourceOff && ignored.nextWake == nil)
  }

  @Test func fixesFromOtherSourcesWhileOffAreJudgedOnly() {
    var cycle = DutyCycle()
    _ = cycle.start(at: 0)
    _ = cycle.fix(SignificantChangeTests.fix(north: 0, at: 0).with(speed: 0), at: 0)
    let other = cycle.fix(SignificantChangeTests.fix(north: 900, at: 310), at: 310)
    #expect(other == DutyCycle.Action(deliver: true, sourceOff: false, nextWake: nil))
    #expect(cycle.state == .off(wakeAt: 300))
  }
}
