import CoreLocation
import Testing

@testable import LocationCLI

@Suite struct WhereAmIOptionsTests {
  @Test func defaultsAreCoreLocationCLIs() throws {
    let options = try WhereAmIOptions.parse([])
    #expect(!options.watch && !options.verbose)
    #expect(options.output == .format("%latitude %longitude"))
    #expect(options.accuracy == kCLLocationAccuracyBest)
    #expect(options.distanceFilter == kCLDistanceFilterNone)
  }

  @Test func everyOption() throws {
    let options = try WhereAmIOptions.parse([
      "-w", "-v", "-f", "%time", "--source", "replay:///t.gpx", "--accuracy", "100m",
      "--distance-filter=25", "--timeout", "5", "--speed", "10", "--instant", "--count", "3",
      "--regions", "r.geojson",
    ])
    #expect(options.watch && options.verbose && options.instant)
    #expect(options.output == .format("%time"))
    #expect(options.source == "replay:///t.gpx")
    #expect(options.accuracy == kCLLocationAccuracyHundredMeters)
    #expect(options.distanceFilter == 25 && options.timeout == 5 && options.speed == 10)
    #expect(options.count == 3 && options.regions == "r.geojson")
    #expect(try WhereAmIOptions.parse(["--json"]).output == .json)
    // CoreLocationCLI's old spellings.
    #expect(try WhereAmIOptions.parse(["-json", "-follow"]).watch)
  }

  @Test(arguments: [
    (["--bogus"], "unknown option '--bogus'"),
    (["-f"], "-f needs a value"),
    (["--accuracy", "fast"], "--accuracy takes"),
    (["--distance-filter", "-5"], "--distance-filter needs metres >= 0"),
    (["--timeout", "0"], "--timeout needs seconds > 0"),
    (["--speed", "nan"], "--speed needs a number"),
    (["--count", "0"], "--count needs a whole number > 0"),
  ])
  func usageErrors(_ arguments: [String], _ message: String) {
    #expect {
      try WhereAmIOptions.parse(arguments)
    } throws: { error in
      (error as? WhereAmIOptions.UsageError)?.message.contains(message) == true
    }
  }

  @Test func replayOptionsJoinTheSourceURL() throws {
    var options = try WhereAmIOptions.parse(["--source", "/tmp/t.gpx", "--speed", "4", "--instant"])
    #expect(
      try options.effectiveSource(environment: [:]) == "replay:///tmp/t.gpx?speed=4.0&instant=1")
    options.source = nil
    #expect(
      try options.effectiveSource(environment: ["CORELOCATION_SOURCE": "replay:///a.nmea?loop=1"])
        == "replay:///a.nmea?loop=1&speed=4.0&instant=1")
    options.source = "static:///etc/geolocation"
    #expect(throws: WhereAmIOptions.UsageError.self) {
      try options.effectiveSource(environment: [:])
    }
  }
}
