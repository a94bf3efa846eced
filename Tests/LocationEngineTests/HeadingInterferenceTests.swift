import Geodesy
import LocationModel
import Testing

@testable import LocationEngine

/// Magnetic interference: the measured field against the World Magnetic Model, once per episode.
@Suite struct HeadingInterferenceTests {
  typealias Data = HeadingTestData

  /// Amsterdam, mid-2025.
  let location = HeadingTestData.fix(52.37, 4.9, height: 0)

  func expectedIntensity() throws -> Double {
    try MagneticModel.field(
      latitude: 52.37, longitude: 4.9, height: 0, unixTime: Data.mid2025
    ).totalIntensity / 1_000
  }

  /// A sample whose field has the given magnitude (microtesla), in a fixed direction.
  func sample(heading: Double, magnitude: Double) -> HeadingSample {
    let direction = (x: 0.3, y: -0.4, z: -0.866_025_403_784_438_6)
    let norm = (direction.x * direction.x + direction.y * direction.y + direction.z * direction.z)
      .squareRoot()
    return HeadingSample(
      time: Data.mid2025, magneticHeading: heading, accuracy: 3,
      x: magnitude * direction.x / norm, y: magnitude * direction.y / norm,
      z: magnitude * direction.z / norm)
  }

  /// Whether the action reports interference with these magnitudes (to rounding).
  func isInterference(_ action: HeadingPipeline.Action, measured: Double, expected: Double?)
    -> Bool
  {
    guard case .interference(let report) = action else { return false }
    return abs(report.measured - measured) < 1e-9 && report.expected == expected
  }

  @Test func fieldLikeTheModelsIsDelivered() throws {
    let expected = try expectedIntensity()
    #expect(expected > 45 && expected < 55)
    var pipeline = HeadingPipeline(headingFilter: -1)
    for scale in [1.0, 0.8, 1.2, 0.76, 1.24] {
      let out = try #require(
        Data.delivered(
          pipeline.receive(
            sample(heading: 10, magnitude: scale * expected), location: location,
            locationUpdatesRunning: true)))
      #expect(out.accuracy == 3)
    }
    #expect(pipeline.interference.state == .clear)
  }

  @Test func interferenceIsReportedOncePerEpisode() throws {
    let expected = try expectedIntensity()
    var pipeline = HeadingPipeline(headingFilter: -1)
    var interferences = 0
    var accuracies: [Double] = []
    // Scale of the field per sample: clear, an episode (with a dip to 1.2, inside the
    // hysteresis, which does not end it), clear again at 1.1, then a second episode.
    let scales = [1.0, 1.0, 2.0, 2.5, 1.2, 1.8, 1.1, 1.0, 0.5, 0.4, 1.0]
    for scale in scales {
      let action = pipeline.receive(
        sample(heading: 10, magnitude: scale * expected), location: location,
        locationUpdatesRunning: true)
      switch action {
      case .interference(let report):
        interferences += 1
        #expect(abs(report.measured - scale * expected) < 1e-9)
        #expect(report.expected == expected)
        accuracies.append(.nan)
      case .deliver(let heading):
        accuracies.append(heading.accuracy)
      case .none:
        Issue.record("unexpected skip")
      }
    }
    #expect(interferences == 2)
    let shown = accuracies.map { $0.isNaN ? "I" : ($0 < 0 ? "-" : "+") }.joined()
    #expect(shown == "++I---++I-+")
  }

  @Test func withoutALocationTheFixedBandApplies() {
    var pipeline = HeadingPipeline(headingFilter: -1)
    var shown = ""
    for magnitude in [50.0, 99, 101, 90, 79, 60, 14, 16, 25, 110] {
      switch pipeline.receive(
        sample(heading: 10, magnitude: magnitude), location: nil, locationUpdatesRunning: true)
      {
      case .interference(let report):
        #expect(report.expected == nil)
        shown += "I"
      case .deliver(let heading):
        shown += heading.accuracy < 0 ? "-" : "+"
      case .none:
        shown += "?"
      }
    }
    #expect(shown == "++I-++I-+I")
  }

  @Test func outsideTheModelsDatesTheFixedBandApplies() {
    var pipeline = HeadingPipeline(headingFilter: -1)
    var early = sample(heading: 10, magnitude: 120)
    early.time = Data.mid2009
    let action = pipeline.receive(early, location: location, locationUpdatesRunning: true)
    guard case .interference(let report) = action else {
      Issue.record("expected interference, got \(action)")
      return
    }
    #expect(abs(report.measured - 120) < 1e-9 && report.expected == nil)
  }

  @Test func samplesWithoutComponentsLeaveTheStateAlone() throws {
    let expected = try expectedIntensity()
    var pipeline = HeadingPipeline(headingFilter: -1)
    let first = pipeline.receive(
      sample(heading: 10, magnitude: 3 * expected), location: location,
      locationUpdatesRunning: true)
    #expect(isInterference(first, measured: 3 * expected, expected: expected))
    var partial = Data.magnetic(20, accuracy: 3)
    partial.x = 1
    let out = try #require(
      Data.delivered(pipeline.receive(partial, location: location, locationUpdatesRunning: true)))
    #expect(out.accuracy == -1)
    #expect(pipeline.interference.state == .disturbed)
  }

  @Test func restartEndsTheEpisode() throws {
    let expected = try expectedIntensity()
    var pipeline = HeadingPipeline(headingFilter: -1)
    let disturbed = sample(heading: 10, magnitude: 3 * expected)
    let first = pipeline.receive(disturbed, location: location, locationUpdatesRunning: true)
    #expect(isInterference(first, measured: 3 * expected, expected: expected))
    pipeline.restart()
    #expect(pipeline.interference.state == .clear)
    let again = pipeline.receive(disturbed, location: location, locationUpdatesRunning: true)
    #expect(isInterference(again, measured: 3 * expected, expected: expected))
  }

  @Test func monitorThresholds() {
    var monitor = InterferenceMonitor()
    #expect(monitor.observe(magnitude: nil, expected: 50) == .none)
    #expect(monitor.observe(magnitude: 62.5, expected: 50) == .none)  // exactly 25 %: not beyond
    #expect(monitor.observe(magnitude: 62.6, expected: 50) != .none)
    #expect(monitor.state == .disturbed)
    #expect(monitor.observe(magnitude: 57.6, expected: 50) == .none)  // 15.2 %: still disturbed
    #expect(monitor.observe(magnitude: 57.5, expected: 50) == .ended)  // 15 %
    #expect(monitor.observe(magnitude: .infinity, expected: nil) != .none)
  }
}
