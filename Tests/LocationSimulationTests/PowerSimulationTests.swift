import LocationServices
import LocationSimulation
import Testing

/// Issue 7's power figures as bounds on short synthetic traces: counts and simulated seconds on the
/// manual clock (a real hub, a simulated receiver with a 5 s hot start), never wall time.
@Suite struct PowerSimulationTests {
  /// 12 minutes at home, a 3 km drive at 50 km/h, 12 minutes at work, a 300 m walk.
  static let trace = PowerTrace(
    name: "short day", latitude: 52.0, longitude: 5.0,
    legs: [
      .stay(seconds: 720), .travel(metres: 3000, speed: 13.9, bearing: 45), .stay(seconds: 720),
      .travel(metres: 300, speed: 1.4, bearing: 90),
    ])

  @Test func continuousKeepsTheReceiverOnAndDeliversEverySecond() {
    let report = PowerSimulation.run(Self.trace, mode: .continuous)
    #expect(report.starts == 1)
    #expect(abs(report.onSeconds - Self.trace.duration) <= 1)
    #expect(report.deliveries >= Int(Self.trace.duration) - 6)
    #expect(report.worstDelay500m <= 1)
  }

  @Test func significantChangeDutyCyclesTheReceiverAndIsNeverMoreThanOneWakeLate() {
    let report = PowerSimulation.run(Self.trace, mode: .significantChange)
    // On for about 5 s in every 5 minutes: well under 10 %.
    #expect(report.onFraction <= 0.05)
    #expect(report.starts >= 5)
    // The first fix, then the drive (3 km in 216 s: one more after the 5-minute floor).
    #expect(report.deliveries >= 2)
    #expect(report.deliveries <= 4)
    // Never more than 5 minutes plus one fix interval (time to fix + 1 s) late.
    #expect(report.worstDelay500m <= 300 + 5 + 1)
  }

  @Test func autoPauseHalvesOnTimeAndResumesWithinTwoMinutes() {
    let continuous = PowerSimulation.run(Self.trace, mode: .continuous)
    let report = PowerSimulation.run(Self.trace, mode: .autoPause)
    // Paused at home after 5 minutes, and again at work.
    #expect(report.pauses == 2)
    #expect(report.resumes == 2)
    #expect(report.worstResumeDelay <= 120)
    #expect(report.onSeconds <= 0.6 * continuous.onSeconds)
    #expect(report.onSeconds >= 0.2 * continuous.onSeconds)
  }

  @Test func referenceTracesHaveTheirNamedLengths() {
    #expect(abs(PowerSimulation.commute.duration - 7200) < 1)
    #expect(abs(PowerSimulation.stationaryDay.duration - 21600) < 1)
    #expect(abs(PowerSimulation.walk.duration - 3600) < 1)
  }

  @Test func traceInterpolatesAlongTheGeodesic() {
    let trace = PowerTrace(
      name: "line", latitude: 0, longitude: 0,
      legs: [.stay(seconds: 10), .travel(metres: 1000, speed: 10, bearing: 90), .stay(seconds: 5)])
    #expect(trace.duration == 115)
    #expect(trace.position(at: 5).speed == 0)
    let moving = trace.position(at: 60)
    #expect(moving.speed == 10)
    #expect(abs(moving.course - 90) < 1e-6)
    #expect(abs(moving.latitude) < 1e-9)
    // 500 m east on the equator: 500 / (a · π / 180) degrees.
    #expect(abs(moving.longitude - 500 / 111_319.490_793_273_6) < 1e-9)
    #expect(trace.position(at: 1000).speed == 0)
  }

  @Test func badLegsAreSkipped() {
    let trace = PowerTrace(
      name: "bad", latitude: 10, longitude: 10,
      legs: [
        .stay(seconds: -5), .stay(seconds: .nan), .travel(metres: 100, speed: 0, bearing: 0),
        .travel(metres: .infinity, speed: 1, bearing: 0),
      ])
    #expect(trace.duration == 0)
    #expect(trace.position(at: 3).latitude == 10)
  }
}
