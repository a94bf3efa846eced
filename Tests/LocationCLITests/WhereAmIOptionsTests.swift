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

  /// `--record FILE`: with or without `--watch`; not with the modes that print no locations.
  @Test func record() throws {
    #expect(try WhereAmIOptions.parse([]).record == nil)
    #expect(try WhereAmIOptions.parse(["--record", "run.gpx"]).record == "run.gpx")
    let options = try WhereAmIOptions.parse(["-w", "--record=/tmp/a b.gpx", "--json"])
    #expect(options.watch && options.record == "/tmp/a b.gpx" && options.output == .json)
  }

  @Test(arguments: [
    (["--record"], "--record needs a value"),
    (["--record", ""], "--record needs a file name"),
    (["--record", "a.gpx", "--geocode", "Bern"], "--record cannot be combined with --geocode"),
    (
      ["--regions", "r.geojson", "--record", "a.gpx"], "--record cannot be combined with --regions"
    ),
    (
      ["--record", "a.gpx", "--beacons", "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"],
      "--record cannot be combined with --beacons"
    ),
  ])
  func recordUsageErrors(_ arguments: [String], _ message: String) {
    #expect {
      try WhereAmIOptions.parse(arguments)
    } throws: { error in
      (error as? WhereAmIOptions.UsageError)?.message.contains(message) == true
    }
  }

  /// `--beacons UUID` may repeat; a UUID given twice is ranged once, in either case.
  @Test func beaconsTakeRepeatedUUIDs() throws {
    let options = try WhereAmIOptions.parse([
      "--beacons", "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0",
      "--beacons=b9407f30-f5f8-466e-aff9-25556b57fe6d",
      "--beacons", "e2c56db5-dffb-48d2-b060-d0f5a71096e0", "--watch", "--json",
    ])
    #expect(
      options.beacons.map(\.uuidString) == [
        "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "B9407F30-F5F8-466E-AFF9-25556B57FE6D",
      ])
    #expect(options.watch && options.output == .json)
    #expect(try WhereAmIOptions.parse([]).beacons.isEmpty)
  }

  /// A bad UUID, a missing one, and options that do not go with `--beacons` are usage errors.
  @Test(arguments: [
    (["--beacons", "lobby"], "--beacons needs a beacon proximity UUID"),
    (["--beacons"], "--beacons needs a value"),
    (
      ["--beacons", "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "-f", "%time"],
      "--format does not apply"
    ),
    (["--regions", "r.geojson", "--beacons", "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"], "--regions"),
    (["--beacons", "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "--geocode", "Bern"], "--geocode"),
  ])
  func beaconUsageErrors(_ arguments: [String], _ message: String) {
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
    options.source = "beacons+replay:///tmp/site.jsonl"
    #expect(
      try options.effectiveSource(environment: [:])
        == "beacons+replay:///tmp/site.jsonl?speed=4.0&instant=1")
    options.source = "static:///etc/geolocation"
    #expect(throws: WhereAmIOptions.UsageError.self) {
      try options.effectiveSource(environment: [:])
    }
  }
}
