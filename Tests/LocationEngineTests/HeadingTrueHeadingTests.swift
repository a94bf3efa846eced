import Geodesy
import LocationModel
import Testing

@testable import LocationEngine

/// True heading from the World Magnetic Model, Apple's -1 rules, the model's limits, and sources
/// that give true heading only.
@Suite struct HeadingTrueHeadingTests {
  typealias Data = HeadingTestData

  struct Place: Sendable, CustomTestStringConvertible {
    var name: String
    var latitude: Double
    var longitude: Double
    /// An independent published figure: IGRF-14 (the International Geomagnetic Reference Field,
    /// a different model from the WMM) for 2025-07-01 at sea level, as printed by the `ppigrf`
    /// package's evaluation of it.
    var publishedDeclination: Double
    var testDescription: String { name }
  }

  @Test(arguments: [
    Place(name: "Resolute Bay", latitude: 74.7, longitude: -94.8, publishedDeclination: -15.7),
    Place(name: "McMurdo", latitude: -77.85, longitude: 166.67, publishedDeclination: 140.3),
  ])
  func trueHeadingAddsTheDeclinationWhereItIsLarge(_ place: Place) throws {
    let field = try MagneticModel.field(
      latitude: place.latitude, longitude: place.longitude, height: 0, unixTime: Data.mid2025)
    #expect(abs(field.declination - place.publishedDeclination) < 3)
    #expect(field.modelName == "WMM-2025")
    var pipeline = HeadingPipeline(headingFilter: -1)
    let location = Data.fix(place.latitude, place.longitude, height: 0)
    for magnetic in stride(from: 0.0, to: 360, by: 15) {
      let out = try #require(
        Data.delivered(
          pipeline.receive(
            Data.magnetic(magnetic), location: location, locationUpdatesRunning: true)))
      #expect(out.magneticHeading == magnetic)
      #expect((0..<360).contains(out.trueHeading))
      #expect(
        abs(out.trueHeading - HeadingPipeline.reduce(magnetic + field.declination)) < 1e-9)
      #expect(
        out.declination == MagneticDeclination(degrees: field.declination, modelName: "WMM-2025"))
      #expect(out.limitation == nil)
      #expect(out.accuracy == 5)
    }
  }

  @Test func heightComesFromTheEllipsoidThenSeaLevelThenZero() throws {
    func declination(_ location: Fix) throws -> Double {
      var pipeline = HeadingPipeline()
      let out = try #require(
        Data.delivered(
          pipeline.receive(Data.magnetic(0), location: location, locationUpdatesRunning: true)))
      return try #require(out.declination).degrees
    }
    let ground = try MagneticModel.field(
      latitude: 74.7, longitude: -94.8, height: 0, unixTime: Data.mid2025)
    let high = try MagneticModel.field(
      latitude: 74.7, longitude: -94.8, height: 400_000, unixTime: Data.mid2025)
    #expect(abs(ground.declination - high.declination) > 0.01)
    var location = Data.fix(74.7, -94.8)
    #expect(try declination(location) == ground.declination)
    location.altitude = 400_000
    #expect(try declination(location) == high.declination)
    location.altitude = 0
    location.ellipsoidalAltitude = 400_000
    #expect(try declination(location) == high.declination)
  }

  // MARK: Apple's -1 rules

  @Test func noLocationGivesMinusOne() throws {
    var pipeline = HeadingPipeline()
    let out = try #require(
      Data.delivered(
        pipeline.receive(Data.magnetic(80), location: nil, locationUpdatesRunning: true)))
    #expect(out.magneticHeading == 80)
    #expect(out.trueHeading == -1)
    #expect(out.limitation == .noLocation)
    #expect(out.accuracy == 5)
  }

  @Test func invalidLocationCountsAsNone() throws {
    var pipeline = HeadingPipeline()
    let invalid = Fix(latitude: 45, longitude: 7, horizontalAccuracy: -1, time: Data.mid2025)
    let out = try #require(
      Data.delivered(
        pipeline.receive(Data.magnetic(80), location: invalid, locationUpdatesRunning: true)))
    #expect(out.trueHeading == -1)
    #expect(out.limitation == .noLocation)
  }

  @Test func locationUpdatesOffGivesMinusOne() throws {
    var pipeline = HeadingPipeline()
    let out = try #require(
      Data.delivered(
        pipeline.receive(
          Data.magnetic(80), location: Data.fix(45, 7), locationUpdatesRunning: false)))
    #expect(out.magneticHeading == 80)
    #expect(out.trueHeading == -1)
    #expect(out.limitation == .locationUpdatesOff)
    #expect(out.declination == nil)
  }

  // MARK: The model's limits

  @Test(arguments: [HeadingTestData.mid2009, HeadingTestData.mid2031])
  func datesOutsideTheModelGiveMinusOneAndAReason(time: Double) throws {
    var pipeline = HeadingPipeline()
    let out = try #require(
      Data.delivered(
        pipeline.receive(
          Data.magnetic(80, at: time), location: Data.fix(45, 7, time: time),
          locationUpdatesRunning: true)))
    #expect(out.magneticHeading == 80)
    #expect(out.trueHeading == -1)
    #expect(out.declination == nil)
    guard case .magneticModelUnavailable(let error)? = out.limitation else {
      Issue.record("expected magneticModelUnavailable, got \(String(describing: out.limitation))")
      return
    }
    #expect(error.code == .outOfValidRange)
  }

  @Test(arguments: [-2_000.0, 900_000])
  func heightsOutsideTheModelGiveMinusOneAndAReason(height: Double) throws {
    var pipeline = HeadingPipeline()
    let out = try #require(
      Data.delivered(
        pipeline.receive(
          Data.magnetic(80), location: Data.fix(45, 7, height: height),
          locationUpdatesRunning: true)))
    #expect(out.trueHeading == -1)
    guard case .magneticModelUnavailable(let error)? = out.limitation else {
      Issue.record("expected magneticModelUnavailable, got \(String(describing: out.limitation))")
      return
    }
    #expect(error.code == .invalidInput)
  }

  @Test func theModelsEdgesStillAnswer() throws {
    // 2010-01-01T00:00:00Z and 2029-12-31T00:00:00Z are inside 2010.0...2030.0.
    for time in [1_262_304_000.0, 1_893_369_600] {
      var pipeline = HeadingPipeline()
      let out = try #require(
        Data.delivered(
          pipeline.receive(
            Data.magnetic(80, at: time), location: Data.fix(45, 7), locationUpdatesRunning: true)))
      #expect(out.trueHeading >= 0)
      #expect(out.limitation == nil)
    }
  }

  @Test func a2018SampleUsesWMM2015v2() throws {
    #expect(MagneticModel.modelName(decimalYear: 2018.5) == "WMM-2015v2")
    var pipeline = HeadingPipeline()
    // The location is from 2025; the sample's own date chooses the model.
    let out = try #require(
      Data.delivered(
        pipeline.receive(
          Data.magnetic(80, at: Data.mid2018), location: Data.fix(74.7, -94.8),
          locationUpdatesRunning: true)))
    let declination = try #require(out.declination)
    #expect(declination.modelName == "WMM-2015v2")
    let field = try MagneticModel.field(
      latitude: 74.7, longitude: -94.8, height: 0, unixTime: Data.mid2018)
    #expect(declination.degrees == field.declination)
    // The declination at Resolute Bay moved by several degrees between 2018 and 2025.
    let field2025 = try MagneticModel.field(
      latitude: 74.7, longitude: -94.8, height: 0, unixTime: Data.mid2025)
    #expect(abs(field.declination - field2025.declination) > 2)
    // IGRF-14 (ppigrf) gives -21.3° there on 2018-07-01.
    #expect(abs(declination.degrees - -21.3) < 3)
  }

  // MARK: True-heading sources

  @Test func trueOnlyWithALocationDerivesTheMagneticHeading() throws {
    let field = try MagneticModel.field(
      latitude: -77.85, longitude: 166.67, height: 0, unixTime: Data.mid2025)
    for running in [true, false] {
      var pipeline = HeadingPipeline()
      let sample = HeadingSample(time: Data.mid2025, trueHeading: 200, accuracy: 0.5)
      let out = try #require(
        Data.delivered(
          pipeline.receive(
            sample, location: Data.fix(-77.85, 166.67), locationUpdatesRunning: running)))
      #expect(out.trueHeading == 200)
      #expect(abs(out.magneticHeading - HeadingPipeline.reduce(200 - field.declination)) < 1e-9)
      #expect(out.accuracy == 0.5)
      #expect(out.limitation == nil)
      #expect(out.declination?.degrees == field.declination)
    }
  }

  @Test func trueOnlyWithoutALocationStandsInWithNegativeAccuracy() throws {
    var pipeline = HeadingPipeline()
    let sample = HeadingSample(time: Data.mid2025, trueHeading: 200, accuracy: 0.5)
    let out = try #require(
      Data.delivered(pipeline.receive(sample, location: nil, locationUpdatesRunning: true)))
    #expect(out.trueHeading == 200)
    #expect(out.magneticHeading == 200)
    #expect(out.accuracy == -1)
    #expect(out.limitation == .noLocation)
    #expect(out.declination == nil)
  }

  @Test func trueOnlyOutsideTheModelStandsInWithNegativeAccuracy() throws {
    var pipeline = HeadingPipeline()
    let sample = HeadingSample(time: Data.mid2031, trueHeading: 10, accuracy: 1)
    let out = try #require(
      Data.delivered(
        pipeline.receive(sample, location: Data.fix(45, 7), locationUpdatesRunning: true)))
    #expect(out.trueHeading == 10 && out.magneticHeading == 10 && out.accuracy == -1)
    guard case .magneticModelUnavailable? = out.limitation else {
      Issue.record("expected magneticModelUnavailable")
      return
    }
  }

  @Test func trueOnlyIsRotatedToo() throws {
    var pipeline = HeadingPipeline(orientation: .portraitUpsideDown)
    let sample = HeadingSample(time: Data.mid2025, trueHeading: 350, accuracy: -1)
    let out = try #require(
      Data.delivered(pipeline.receive(sample, location: nil, locationUpdatesRunning: true)))
    #expect(out.trueHeading == 170 && out.magneticHeading == 170)
  }
}
