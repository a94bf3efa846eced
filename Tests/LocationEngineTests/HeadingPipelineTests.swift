import Geodesy
import LocationModel
import TestSupport
import Testing

@testable import LocationEngine

/// Dates and places shared by the heading tests.
enum HeadingTestData {
  /// 2025-07-01T00:00:00Z.
  static let mid2025 = 1_751_328_000.0
  /// 2018-07-01T00:00:00Z.
  static let mid2018 = 1_530_403_200.0
  /// 2009-07-01T00:00:00Z: before the model.
  static let mid2009 = 1_246_406_400.0
  /// 2031-07-01T00:00:00Z: after the model.
  static let mid2031 = 1_940_630_400.0

  static func fix(
    _ latitude: Double, _ longitude: Double, height: Double? = nil, time: Double = mid2025
  ) -> Fix {
    Fix(
      latitude: latitude, longitude: longitude, ellipsoidalAltitude: height,
      horizontalAccuracy: 10, time: time)
  }

  static func magnetic(_ heading: Double, at time: Double = mid2025, accuracy: Double = 5)
    -> HeadingSample
  {
    HeadingSample(time: time, magneticHeading: heading, accuracy: accuracy, source: "test")
  }

  static func delivered(_ action: HeadingPipeline.Action) -> DeliveredHeading? {
    switch action {
    case .deliver(let heading): return heading
    case .none, .interference: return nil
    }
  }
}

@Suite struct HeadingPipelineTests {
  typealias Data = HeadingTestData

  // MARK: Orientation

  struct OrientationCase: Sendable, CustomTestStringConvertible {
    var settings: [HeadingOrientation]
    var expectedRotation: Double
    var testDescription: String { "\(settings) -> \(expectedRotation)" }
  }

  @Test(arguments: [
    OrientationCase(settings: [], expectedRotation: 0),
    OrientationCase(settings: [.portrait], expectedRotation: 0),
    OrientationCase(settings: [.landscapeLeft], expectedRotation: 90),
    OrientationCase(settings: [.landscapeRight], expectedRotation: 270),
    OrientationCase(settings: [.portraitUpsideDown], expectedRotation: 180),
    // unknown, faceUp and faceDown keep the previous rotation.
    OrientationCase(settings: [.unknown], expectedRotation: 0),
    OrientationCase(settings: [.faceUp], expectedRotation: 0),
    OrientationCase(settings: [.landscapeLeft, .faceUp], expectedRotation: 90),
    OrientationCase(settings: [.landscapeRight, .faceDown], expectedRotation: 270),
    OrientationCase(settings: [.portraitUpsideDown, .unknown], expectedRotation: 180),
    OrientationCase(
      settings: [.landscapeLeft, .faceUp, .faceDown, .unknown], expectedRotation: 90),
    OrientationCase(settings: [.landscapeLeft, .faceUp, .portrait], expectedRotation: 0),
    OrientationCase(settings: [.landscapeRight, .landscapeLeft], expectedRotation: 90),
  ])
  func orientationRotatesTheReference(_ orientationCase: OrientationCase) throws {
    var pipeline = HeadingPipeline(headingFilter: -1)
    for orientation in orientationCase.settings { pipeline.setOrientation(orientation) }
    #expect(pipeline.orientation == orientationCase.settings.last ?? .portrait)
    for heading in [0.0, 10, 95, 185, 275, 359.5] {
      let out = try #require(
        Data.delivered(
          pipeline.receive(
            Data.magnetic(heading), location: Data.fix(45, 7), locationUpdatesRunning: true)))
      let expected = HeadingPipeline.reduce(heading + orientationCase.expectedRotation)
      #expect(abs(out.magneticHeading - expected) < 1e-9)
      #expect((0..<360).contains(out.magneticHeading))
      #expect((0..<360).contains(out.trueHeading))
      let declination = try #require(out.declination).degrees
      #expect(abs(HeadingPipeline.angularDistance(out.trueHeading, expected + declination)) < 1e-9)
    }
  }

  @Test(arguments: [
    (Int32(0), 90.0), (1, 0), (2, 180), (3, 90), (4, 270), (5, 90), (6, 90), (7, 90), (-1, 90),
  ])
  func orientationFromRawValues(rawValue: Int32, expectedRotation: Double) throws {
    var pipeline = HeadingPipeline(headingFilter: -1)
    pipeline.setOrientation(.landscapeLeft)
    pipeline.setOrientation(HeadingOrientation(rawValue: rawValue) ?? .unknown)
    let out = try #require(
      Data.delivered(
        pipeline.receive(Data.magnetic(20), location: nil, locationUpdatesRunning: false)))
    #expect(out.magneticHeading == HeadingPipeline.reduce(20 + expectedRotation))
  }

  @Test func rawValuesMatchApple() {
    let raw = HeadingOrientation.allCases.map(\.rawValue)
    #expect(raw == [0, 1, 2, 3, 4, 5, 6])
    #expect(HeadingOrientation.landscapeLeft.rotation == 90)
    #expect(HeadingOrientation.landscapeRight.rotation == -90)
  }

  @Test func rawComponentsAreNotRotated() throws {
    var pipeline = HeadingPipeline(orientation: .landscapeLeft)
    var sample = Data.magnetic(10)
    sample.x = 20
    sample.y = -5
    sample.z = -40
    let out = try #require(
      Data.delivered(pipeline.receive(sample, location: nil, locationUpdatesRunning: false)))
    #expect(out.x == 20 && out.y == -5 && out.z == -40)
    #expect(out.magneticHeading == 100)
  }

  // MARK: Filter

  @Test func filterMeasuresOnTheCircleFromTheLastDelivered() {
    var pipeline = HeadingPipeline(headingFilter: 5)
    let steps: [(Double, Bool)] = [
      (358, true),  // first: always
      (1, false),  // 3° from 358 across north
      (2.9, false),  // 4.9°
      (3, true),  // 5° (at least the filter)
      (359, false),  // 4° back across north
      (358, true),  // 5°
      (357, false), (356, false), (355, false), (354, false),  // slow drift: measured from 358
      (353, true),
    ]
    for (heading, delivered) in steps {
      let action = pipeline.receive(
        Data.magnetic(heading), location: nil, locationUpdatesRunning: false)
      #expect((Data.delivered(action) != nil) == delivered, "heading \(heading)")
      if !delivered { #expect(action == .none(.filtered)) }
    }
  }

  @Test(arguments: [-1.0, 0, -.infinity, .nan])
  func noFilterDeliversEverySample(filter: Double) {
    var pipeline = HeadingPipeline(headingFilter: filter)
    for _ in 0..<5 {
      let action = pipeline.receive(Data.magnetic(42), location: nil, locationUpdatesRunning: false)
      #expect(Data.delivered(action) != nil)
    }
  }

  @Test func defaultFilterIsOneDegree() {
    var pipeline = HeadingPipeline()
    #expect(pipeline.headingFilter == 1)
    let headings = [0.0, 0.6, 0.9, 1.0, 359.95, 0.05]
    let delivered = headings.map {
      Data.delivered(
        pipeline.receive(Data.magnetic($0), location: nil, locationUpdatesRunning: false)) != nil
    }
    #expect(delivered == [true, false, false, true, true, false])
  }

  @Test func filterAppliesAfterOrientation() {
    var pipeline = HeadingPipeline(headingFilter: 10)
    let first = pipeline.receive(Data.magnetic(50), location: nil, locationUpdatesRunning: false)
    #expect(Data.delivered(first)?.magneticHeading == 50)
    pipeline.setOrientation(.landscapeRight)
    // Same sensor heading, but the reference turned by 90°: delivered as 320°.
    let second = pipeline.receive(Data.magnetic(50), location: nil, locationUpdatesRunning: false)
    #expect(Data.delivered(second)?.magneticHeading == 320)
    let third = pipeline.receive(Data.magnetic(55), location: nil, locationUpdatesRunning: false)
    #expect(third == .none(.filtered))
  }

  @Test func restartDeliversTheNextHeadingWhateverTheFilter() {
    var pipeline = HeadingPipeline(headingFilter: 30)
    _ = pipeline.receive(Data.magnetic(10), location: nil, locationUpdatesRunning: false)
    #expect(
      pipeline.receive(Data.magnetic(11), location: nil, locationUpdatesRunning: false)
        == .none(.filtered))
    pipeline.restart()
    #expect(
      Data.delivered(
        pipeline.receive(Data.magnetic(11), location: nil, locationUpdatesRunning: false)) != nil)
  }

  @Test func trueHeadingBecomingAvailablePassesTheFilter() throws {
    var pipeline = HeadingPipeline(headingFilter: 10)
    let first = try #require(
      Data.delivered(
        pipeline.receive(Data.magnetic(10), location: nil, locationUpdatesRunning: true)))
    #expect(first.trueHeading == -1)
    let second = try #require(
      Data.delivered(
        pipeline.receive(
          Data.magnetic(10.5), location: Data.fix(45, 7), locationUpdatesRunning: true)))
    #expect(second.trueHeading >= 0)
    #expect(
      pipeline.receive(Data.magnetic(11), location: Data.fix(45, 7), locationUpdatesRunning: true)
        == .none(.filtered))
  }

  /// Seeded random walks: every delivered heading is at least the filter from the one before,
  /// every filtered one is closer than the filter to the last delivered.
  @Test(arguments: [UInt64(1), 2, 3, 42])
  func filterPropertyOnRandomWalks(seed: UInt64) {
    var rng = SplitMix64(seed: seed)
    let filter = Double.random(in: 0.5...20, using: &rng)
    var pipeline = HeadingPipeline(headingFilter: filter)
    var heading = Double.random(in: 0..<360, using: &rng)
    var last: Double?
    for _ in 0..<2_000 {
      heading += Double.random(in: -8...8, using: &rng)
      if Int.random(in: 0..<50, using: &rng) == 0 { heading += 180 }
      let action = pipeline.receive(
        Data.magnetic(heading), location: nil, locationUpdatesRunning: false)
      let expected = HeadingPipeline.reduce(heading)
      if let out = Data.delivered(action) {
        #expect(abs(out.magneticHeading - expected) < 1e-9)
        if let last { #expect(HeadingPipeline.angularDistance(last, expected) >= filter) }
        last = out.magneticHeading
      } else {
        #expect(action == .none(.filtered))
        if let last { #expect(HeadingPipeline.angularDistance(last, expected) < filter) }
      }
    }
  }

  @Test(arguments: [
    (0.0, 0.0), (360, 0), (-1, 359), (720.5, 0.5), (-360, 0), (-1e-17, 0), (359.999, 359.999),
  ])
  func reduceGivesZeroToThreeSixty(angle: Double, expected: Double) {
    #expect(abs(HeadingPipeline.reduce(angle) - expected) < 1e-9)
  }

  @Test(arguments: [(359.0, 1.0, 2.0), (1, 359, 2), (0, 180, 180), (90, 270, 180), (10, 10, 0)])
  func angularDistanceIsOnTheCircle(a: Double, b: Double, expected: Double) {
    #expect(abs(HeadingPipeline.angularDistance(a, b) - expected) < 1e-9)
  }

  /// Seeded random input, including poles, the antimeridian, NaN, huge angles and odd dates:
  /// nothing crashes and every delivered heading is in range.
  @Test(arguments: [UInt64(5), 6, 7])
  func randomInputGivesHeadingsInRange(seed: UInt64) {
    var rng = SplitMix64(seed: seed)
    let odd: [Double] = [.nan, .infinity, -.infinity, 1e300, -1e300, 360, -0.0, 720.25]
    func value(_ range: ClosedRange<Double>) -> Double {
      Int.random(in: 0..<10, using: &rng) == 0
        ? odd[Int.random(in: 0..<odd.count, using: &rng)] : Double.random(in: range, using: &rng)
    }
    var pipeline = HeadingPipeline(headingFilter: Double.random(in: -1...5, using: &rng))
    for _ in 0..<3_000 {
      if Int.random(in: 0..<20, using: &rng) == 0 {
        pipeline.setOrientation(
          HeadingOrientation(rawValue: Int32.random(in: -1...8, using: &rng)) ?? .unknown)
      }
      let time = value(1_200_000_000...2_000_000_000)
      let sample = HeadingSample(
        time: time,
        magneticHeading: Bool.random(using: &rng) ? value(-720...720) : nil,
        trueHeading: Bool.random(using: &rng) ? value(-720...720) : nil,
        accuracy: value(-1...30),
        x: Bool.random(using: &rng) ? value(-200...200) : nil,
        y: value(-200...200), z: value(-200...200))
      let location: Fix? =
        Bool.random(using: &rng)
        ? Fix(
          latitude: [90, -90, value(-90...90)][Int.random(in: 0..<3, using: &rng)],
          longitude: [180, -180, value(-180...180)][Int.random(in: 0..<3, using: &rng)],
          ellipsoidalAltitude: Bool.random(using: &rng) ? value(-2_000...900_000) : nil,
          horizontalAccuracy: value(-1...100), time: time) : nil
      switch pipeline.receive(
        sample, location: location, locationUpdatesRunning: Bool.random(using: &rng))
      {
      case .deliver(let out):
        #expect((0..<360).contains(out.magneticHeading))
        #expect(out.trueHeading == -1 || (0..<360).contains(out.trueHeading))
        #expect(!out.accuracy.isNaN)
        if let declination = out.declination { #expect(declination.degrees.isFinite) }
      case .none, .interference:
        break
      }
    }
  }

  // MARK: Input validity

  @Test func sampleWithoutAFiniteHeadingGivesNothing() {
    var pipeline = HeadingPipeline()
    let samples = [
      HeadingSample(time: Data.mid2025),
      HeadingSample(time: Data.mid2025, magneticHeading: .nan),
      HeadingSample(time: Data.mid2025, trueHeading: .infinity),
    ]
    for sample in samples {
      #expect(
        pipeline.receive(sample, location: Data.fix(45, 7), locationUpdatesRunning: true)
          == .none(.noHeading))
    }
  }

  @Test func nonFiniteAccuracyIsUnknown() throws {
    var pipeline = HeadingPipeline()
    let out = try #require(
      Data.delivered(
        pipeline.receive(
          Data.magnetic(10, accuracy: .nan), location: nil, locationUpdatesRunning: false)))
    #expect(out.accuracy == -1)
  }

  @Test func sampleWithBothHeadingsKeepsThem() throws {
    var pipeline = HeadingPipeline()
    let sample = HeadingSample(
      time: Data.mid2025, magneticHeading: 100, trueHeading: 103, accuracy: 2)
    let out = try #require(
      Data.delivered(pipeline.receive(sample, location: nil, locationUpdatesRunning: false)))
    #expect(out.magneticHeading == 100 && out.trueHeading == 103 && out.accuracy == 2)
    #expect(out.declination == nil && out.limitation == nil)
  }
}
