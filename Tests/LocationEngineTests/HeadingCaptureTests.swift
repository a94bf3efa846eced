import LocationModel
import TestSupport

// The capture is decoded with `LocationFormats.NMEADecoder`, so this test needs `LocationFormats`
// among LocationEngineTests' dependencies in Package.swift. Without it the module may still be
// found (SwiftPM puts every module in one folder) but not its C dependency, hence the second test.
#if canImport(LocationFormats) && canImport(CLibXML2)
  import Foundation
  import Geodesy
  import LocationFormats
  import Testing

  @testable import LocationEngine

  /// A real capture through the heading pipeline: gpsd's regression log `bundg_zeus_9.log`, a B&G
  /// Zeus² 9 chartplotter on the IJsselmeer (NL) on 2018-08-20, with 1,457 `$SDHDG` sentences
  /// (sensor heading, no deviation, variation 1.3° E) among GPS fixes.
  @Suite struct HeadingCaptureTests {
    static let logURL = Paths.fixtureFolder("gpsd-regress")
      .appendingPathComponent("bundg_zeus_9.log")

    struct Result {
      var headings = 0
      var withoutLocation = 0
      var withTrueHeading = 0
      var delivered = 0
    }

    /// Decodes the log and runs every HDG through a pipeline with the log's own positions.
    func run(filter: Double, check: (NMEAHeading, Fix?, DeliveredHeading?) throws -> Void) throws
      -> Result
    {
      let bytes = try [UInt8](Data(contentsOf: Self.logURL))
      let outputs = NMEADecoder.decodeLog(bytes).outputs
      var pipeline = HeadingPipeline(headingFilter: filter)
      var location: Fix?
      var result = Result()
      for output in outputs {
        switch output {
        case .fix(let fix):
          location = fix
        case .heading(let heading):
          guard heading.kind == .hdg else { continue }
          result.headings += 1
          let time = heading.time ?? location?.time ?? 1_534_723_200
          // As the NMEA source maps it (`HeadingSample(nmea:...)` in LocationSources): the
          // decoder's magnetic heading, sensor plus deviation.
          let sample = HeadingSample(
            time: time, magneticHeading: heading.magneticHeading, accuracy: -1,
            source: "bundg_zeus_9", isSimulated: true)
          let action = pipeline.receive(sample, location: location, locationUpdatesRunning: true)
          let delivered: DeliveredHeading?
          switch action {
          case .deliver(let out):
            delivered = out
            result.delivered += 1
            if location == nil { result.withoutLocation += 1 }
            if out.trueHeading >= 0 { result.withTrueHeading += 1 }
          case .none(.filtered):
            delivered = nil
          case .none(.noHeading), .interference:
            Issue.record("unexpected \(action)")
            delivered = nil
          }
          try check(heading, location, delivered)
        case .undatedFix, .noFix, .satellites:
          break
        }
      }
      return result
    }

    @Test func everyHDGGivesSensorPlusDeviationAndTheWMMTrueHeading() throws {
      var declinations: [Double] = []
      let result = try run(filter: -1) { heading, location, delivered in
        let out = try #require(delivered)
        let sensor = try #require(heading.sensorHeading)
        let magnetic = HeadingPipeline.reduce(sensor + (heading.deviation ?? 0))
        #expect(abs(out.magneticHeading - magnetic) < 1e-9)
        #expect(out.accuracy == -1)  // NMEA says nothing about calibration.
        guard let location else {
          #expect(out.trueHeading == -1)
          #expect(out.limitation == .noLocation)
          return
        }
        let field = try MagneticModel.field(
          latitude: location.latitude, longitude: location.longitude,
          height: location.ellipsoidalAltitude ?? location.altitude ?? 0, unixTime: out.time)
        #expect(field.modelName == "WMM-2015v2")
        let declination = try #require(out.declination)
        #expect(declination.modelName == "WMM-2015v2")
        #expect(declination.degrees == field.declination)
        #expect(abs(out.trueHeading - HeadingPipeline.reduce(magnetic + field.declination)) < 1e-9)
        if let variation = heading.variation {
          #expect(abs(declination.degrees - variation) < 0.5)
        }
        declinations.append(declination.degrees)
      }
      #expect(result.headings == 1_457)
      #expect(result.delivered == 1_457)
      #expect(result.withTrueHeading + result.withoutLocation == 1_457)
      #expect(result.withTrueHeading > 1_400)
      let low = try #require(declinations.min())
      let high = try #require(declinations.max())
      #expect(low > 1.2 && high < 1.7)
    }

    @Test func theDefaultFilterThinsTheCapture() throws {
      var last: DeliveredHeading?
      let result = try run(filter: 1) { _, _, delivered in
        guard let out = delivered else { return }
        // The first fix makes the true heading valid: that heading passes whatever the filter.
        if let last, (last.trueHeading < 0) == (out.trueHeading < 0) {
          #expect(HeadingPipeline.angularDistance(last.magneticHeading, out.magneticHeading) >= 1)
        }
        last = out
      }
      #expect(result.headings == 1_457)
      #expect(result.delivered > 0 && result.delivered < 1_457)
    }
  }
#else
  import Testing

  @Suite struct HeadingCaptureTests {
    @Test func needsLocationFormats() {
      Issue.record(
        "LocationEngineTests must depend on LocationFormats (Package.swift) for the capture test")
    }
  }
#endif
