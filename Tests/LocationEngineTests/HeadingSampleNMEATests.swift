import Geodesy
import LocationModel
import Testing

@testable import LocationEngine

/// Samples from decoded NMEA heading sentences.
@Suite struct HeadingSampleNMEATests {
  let time = HeadingTestData.mid2025

  @Test(
    arguments: [
      (229.8, nil, 229.8), (229.8, 1.5, 231.3), (10, -12.5, 357.5), (359, 2, 1), (0, nil, 0),
    ] as [(Double, Double?, Double)])
  func hdgIsSensorPlusDeviation(sensor: Double, deviation: Double?, magnetic: Double) throws {
    let sample = try #require(
      HeadingSample.fromHDG(sensorHeading: sensor, deviation: deviation, time: time, source: "s"))
    let heading = try #require(sample.magneticHeading)
    #expect(abs(heading - magnetic) < 1e-9)
    #expect(sample.trueHeading == nil)
    #expect(sample.accuracy == -1)
    #expect(sample.source == "s")
    #expect(sample.time == time)
  }

  @Test func hdgWithoutAHeadingGivesNoSample() {
    #expect(HeadingSample.fromHDG(sensorHeading: nil, deviation: 1, time: time) == nil)
    #expect(HeadingSample.fromHDG(sensorHeading: .nan, deviation: 1, time: time) == nil)
  }

  @Test func hdmAndHdt() throws {
    let hdm = try #require(HeadingSample.fromHDM(magneticHeading: 360, time: time, accuracy: 2))
    #expect(hdm.magneticHeading == 0 && hdm.trueHeading == nil && hdm.accuracy == 2)
    let hdt = try #require(HeadingSample.fromHDT(trueHeading: 12.5, time: time))
    #expect(hdt.trueHeading == 12.5 && hdt.magneticHeading == nil && hdt.accuracy == -1)
    #expect(HeadingSample.fromHDM(magneticHeading: nil, time: time) == nil)
    #expect(HeadingSample.fromHDT(trueHeading: nil, time: time) == nil)
  }

  @Test(arguments: [
    (HeadingSample.THSMode?.some(.autonomous), true, false),
    (.some(.estimated), true, false),
    (.some(.manual), true, false),
    (.some(.simulated), true, true),
    (.some(.invalid), false, false),
    (nil, true, false),
  ])
  func thsModes(mode: HeadingSample.THSMode?, gives: Bool, simulated: Bool) {
    let sample = HeadingSample.fromTHS(trueHeading: 45, mode: mode, time: time)
    #expect((sample != nil) == gives)
    if let sample {
      #expect(sample.trueHeading == 45)
      #expect(sample.isSimulated == simulated)
    }
  }

  @Test func fieldMagnitudeNeedsAllThreeComponents() {
    var sample = HeadingSample(time: time, magneticHeading: 0, x: 3, y: 4)
    #expect(sample.fieldMagnitude == nil)
    sample.z = 12
    #expect(sample.fieldMagnitude == 13)
    sample.z = .nan
    #expect(sample.fieldMagnitude == nil)
  }
}
