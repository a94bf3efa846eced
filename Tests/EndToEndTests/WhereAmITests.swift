import Foundation
import TestSupport
import Testing

/// The built `whereami`, run as a child process: its interface, its output formats and its exit
/// statuses (README, "whereami": 0 success, 1 no location, 2 usage, 3 denied, 4 timed out).
///
/// Skipped when the program is not built, except under `CI=true`, where that is a failure.
@Suite(
  .enabled(
    if: BuiltPrograms.whereami != nil || RealComponents.isCI,
    "whereami is not built: run `swift build --product whereami`")
)
struct WhereAmITests {
  typealias Runner = WhereAmIRunner

  static let north = Paths.fixture("replay", "north.gpx")

  /// Whether `line` is the default output: "latitude longitude" with 6 decimals.
  static func isOneShot(_ line: String) -> Bool {
    line.wholeMatch(of: #/-?\d{1,2}\.\d{6} -?\d{1,3}\.\d{6}/#) != nil
  }

  func run(_ arguments: [String], _ environment: [String: String] = [:]) async throws
    -> Runner.Result
  {
    let result = try await Runner.run(arguments, environment: environment)
    #expect(!result.killed, "whereami had to be killed: \(arguments)")
    return result
  }

  @Test func binaryIsBuilt() async throws {
    try #require(BuiltPrograms.whereami != nil, "\(Runner.NotBuilt())")
  }

  // MARK: Interface

  @Test(arguments: ["--help", "-h", "-help"])
  func help(_ flag: String) async throws {
    let result = try await run([flag])
    #expect(result.status == 0)
    #expect(result.stdout.hasPrefix("USAGE: whereami"))
    for text in ["--watch", "--json", "--source URL", "EXIT STATUS", "4 timed out"] {
      #expect(result.stdout.contains(text))
    }
    #expect(result.stderr.isEmpty)
  }

  @Test func version() async throws {
    let result = try await run(["--version"])
    #expect(result.status == 0)
    #expect(
      result.stdout.wholeMatch(of: #/whereami \d+\.\d+\.\d+ \(CoreLocation for Linux\)\n/#) != nil)
    #expect(result.stderr.isEmpty)
  }

  @Test(arguments: [
    (["--bogus"], "unknown option '--bogus' (see whereami --help)"),
    (["-x"], "unknown option '-x'"),
    (["--format"], "--format needs a value"),
    (["--count", "0"], "--count needs a whole number > 0, not '0'"),
    (["--count=many"], "--count needs a whole number > 0, not 'many'"),
    (["--timeout", "0"], "--timeout needs seconds > 0"),
    (["--timeout", "soon"], "--timeout needs a number, not 'soon'"),
    (["--distance-filter", "-5"], "--distance-filter needs metres >= 0"),
    (["--accuracy", "perfect"], "--accuracy takes best, navigation"),
    (["--speed", "-1"], "--speed needs a factor > 0"),
  ])
  func usageError(_ arguments: [String], _ message: String) async throws {
    let result = try await run(arguments)
    #expect(result.status == 2)
    #expect(result.stdout.isEmpty)
    #expect(result.stderr.hasPrefix("whereami: "))
    #expect(result.stderr.contains(message), "stderr: \(result.stderr)")
  }

  @Test func speedWithAStaticSourceIsAUsageError() async throws {
    let result = try await run(["--source", "static:///etc/geolocation", "--speed", "2"])
    #expect(result.status == 2)
    #expect(result.stdout.isEmpty)
    #expect(
      result.stderr.contains(
        "--speed and --instant apply to replay:// and beacons+replay:// sources only"))
  }

  @Test func instantWithASourceListIsAUsageError() async throws {
    let result = try await run(["--instant"], ["CORELOCATION_SOURCE": "/a.gpx,/b.gpx"])
    #expect(result.status == 2)
    #expect(result.stderr.contains("--speed and --instant need one replay source"))
  }

  // MARK: Locations

  @Test func oneShotOnTheBundledTrack() async throws {
    let result = try await run(["--source", "replay://" + Paths.ijsselmeer])
    #expect(result.status == 0, "stderr: \(result.stderr)")
    #expect(result.lines.count == 1)
    let line = try #require(result.lines.first)
    #expect(Self.isOneShot(line), "line: \(line)")
    let values = line.split(separator: " ").compactMap { Double($0) }
    // On the IJsselmeer, off Lemmer.
    #expect(values.count == 2)
    #expect(abs((values.first ?? 0) - 52.85) < 0.01)
    #expect(abs((values.last ?? 0) - 5.31) < 0.01)
    #expect(result.stderr.isEmpty)
  }

  @Test(arguments: ["replay://", ""])
  func sourceFromTheEnvironment(_ prefix: String) async throws {
    let result = try await run([], ["CORELOCATION_SOURCE": prefix + Paths.ijsselmeer])
    #expect(result.status == 0, "stderr: \(result.stderr)")
    #expect(result.lines.count == 1)
    #expect(result.lines.first.map(Self.isOneShot) == true)
  }

  @Test func watchInstantCountWithAFormat() async throws {
    let result = try await run([
      "--source", "replay://" + Paths.ijsselmeer, "--watch", "--instant", "--count", "5", "-f",
      "%latitude,%longitude\\n",
    ])
    #expect(result.status == 0, "stderr: \(result.stderr)")
    let records = result.lines.filter { !$0.isEmpty }
    #expect(records.count == 5)
    for record in records {
      #expect(record.wholeMatch(of: #/52\.\d{6},5\.\d{6}/#) != nil, "record: \(record)")
    }
  }

  @Test func formatTokensAndEscapes() async throws {
    let result = try await run([
      "--source", Self.north, "--format=%time|%altitude|%h_accuracy|%simulated|100%%|%locality\\t.",
    ])
    #expect(result.status == 0)
    #expect(result.stdout == "2024-05-01 12:00:00 +0000|1.00|5|1|100%|IJsselstein\t.\n")
  }

  @Test func jsonOverAGPXTrack() async throws {
    let result = try await run([
      "--source", "replay://" + Self.north, "--watch", "--instant", "--json",
    ])
    #expect(result.status == 0, "exit 0 at the end of the track; stderr: \(result.stderr)")
    #expect(result.stderr.isEmpty)
    let keys = [
      "latitude", "longitude", "altitude", "ellipsoidal_altitude", "h_accuracy", "v_accuracy",
      "direction", "course_accuracy", "speed", "speed_accuracy", "floor", "time", "simulated",
      // The reverse-geocoding fields (issue 16), from the offline gazetteer.
      "name", "address", "thoroughfare", "subThoroughfare", "locality", "subLocality",
      "administrativeArea", "subAdministrativeArea", "postalCode", "isoCountryCode", "country",
      "ocean", "inlandWater", "region", "timeZone", "time_local",
    ]
    #expect(result.lines.count == 10)
    for (index, line) in result.lines.enumerated() {
      let object = try #require(
        try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "line: \(line)")
      #expect(Set(object.keys) == Set(keys))
      // Numbers are numbers (not strings), unknowns are null.
      let latitude = try #require(object["latitude"] as? NSNumber)
      #expect(abs(latitude.doubleValue - (52 + Double(index) * 0.0001)) < 1e-9)
      #expect(object["longitude"] as? NSNumber == 5)
      #expect(object["h_accuracy"] is NSNumber)
      #expect(object["floor"] is NSNull)
      #expect(object["time"] as? String == String(format: "2024-05-01T12:00:%02dZ", index))
      #expect(object["simulated"] as? Bool == true)
      if index > 0 {
        let speed = try #require(object["speed"] as? NSNumber)
        #expect(abs(speed.doubleValue - 11.127) < 0.001)
        #expect(object["direction"] as? NSNumber == 0)
      } else {
        #expect(object["speed"] is NSNull)
      }
      // A stable key order: the keys appear in the documented order.
      let positions = keys.compactMap { line.range(of: "\"\($0)\":")?.lowerBound }
      #expect(positions.count == keys.count)
      #expect(positions == positions.sorted(), "line: \(line)")
    }
    // And the whole output is the recorded expectation beside the fixture.
    let expected = try String(contentsOfFile: Self.north + ".json.chk", encoding: .utf8)
    #expect(result.stdout == expected)
  }

  // MARK: GPX files from other tools (issue 21)

  /// The hike with seven points of interest: whereami says on standard error that they are not
  /// played, and plays the walk from its first track point, with full-precision JSON coordinates.
  @Test func hikeWithWaypointsPlaysItsTrackAndSaysSo() async throws {
    let hike = Paths.fixture("gpx", "gpxpy-cerknicko-jezero.gpx")
    let result = try await run(["--source", "replay://" + hike, "--watch", "--instant", "--json"])
    #expect(result.status == 0, "stderr: \(result.stderr)")
    #expect(result.stderr == "whereami: \(hike): 7 waypoints not replayed: a track is present\n")
    #expect(result.lines.count == 296)
    let first = try #require(
      try JSONSerialization.jsonObject(with: Data((result.lines.first ?? "").utf8))
        as? [String: Any])
    #expect((first["latitude"] as? NSNumber)?.doubleValue == 45.772175035)
    #expect((first["longitude"] as? NSNumber)?.doubleValue == 14.357659249)
    #expect(first["time"] as? String == "2010-08-05T14:23:59Z")
    #expect(first["speed"] is NSNull)
    #expect(
      result.lines.first?.contains(#""latitude":45.772175035,"longitude":14.357659249,"#) == true)
    for line in result.lines {
      let object = try #require(
        try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
      #expect(((object["speed"] as? NSNumber)?.doubleValue ?? 0) <= 340, "line: \(line)")
    }
  }

  /// The text format keeps six decimals; the notice names what is left out for each kind of file.
  @Test(arguments: [
    ("gpxpy-gpx1.0_with_all_fields.gpx", "10.100000 -20.200000", "2 waypoints and 5 route points"),
    ("gpxpy-gpx1.1_with_all_fields.gpx", "10.100000 -20.200000", "2 waypoints and 5 route points"),
    ("gpxpy-route.gpx", "45.278764 13.726695", nil),
    ("gpxpy-unicode_with_bom.gpx", "43.309634 3.515386", nil),
    ("gpxgo-iso8859-1encoded.gpx", "44.280548 20.540280", nil),
  ])
  func firstLocationOfARealFile(_ name: String, _ first: String, _ leftOut: String?) async throws {
    let path = Paths.fixture("gpx", name)
    let result = try await run(["--source", "replay://" + path + "?instant=1"])
    #expect(result.status == 0, "stderr: \(result.stderr)")
    #expect(result.lines == [first])
    let notice = leftOut.map { "whereami: \(path): \($0) not replayed: a track is present\n" }
    #expect(result.stderr == (notice ?? ""))
  }

  @Test func watchOverTheWholeBundledTrackEndsWithSuccess() async throws {
    let result = try await run([
      "--source", "replay://" + Paths.ijsselmeer + "?instant=1", "--watch", "-f", "%time",
    ])
    #expect(result.status == 0)
    #expect((140...160).contains(result.lines.count))
    #expect(result.lines.first?.hasPrefix("2018-08-20 09:4") == true)
    #expect(result.lines == result.lines.sorted(), "the recording's times, in order")
  }

  @Test func loopedInstantReplayStopsAtTheCount() async throws {
    let result = try await run([
      "--source", "replay://" + Self.north + "?loop=1&instant=1", "--count", "25", "-f",
      "%latitude",
    ])
    #expect(result.status == 0)
    let once = (0..<10).map { String(format: "52.%06d", $0 * 100) }
    #expect(result.lines == once + once + once.prefix(5))
  }

  /// `make demo`'s command, cut to three locations: real-time pacing at 30x on the live clock.
  @Test func demoCommandAtThirtyTimesSpeed() async throws {
    let result = try await run([
      "--watch", "--source", "replay://" + Paths.ijsselmeer, "--speed", "30", "--count", "3",
      "--format", "%time  %latitude %longitude  %speed m/s  course %direction",
    ])
    #expect(result.status == 0, "stderr: \(result.stderr)")
    #expect(result.lines.count == 3)
    for line in result.lines {
      let pattern =
        #/2018-08-20 09:\d\d:\d\d \+0000  52\.\d{6} 5\.\d{6}  -?\d+\.\d\d m/s  course -?\d+\.\d/#
      #expect(line.wholeMatch(of: pattern) != nil, "line: \(line)")
    }
  }

  @Test func addressTokensPrintTheReverseGeocodedPlace() async throws {
    let result = try await run([
      "--source", Self.north, "-v", "-f",
      "%address|%latitude|%locality|%isoCountryCode|%timeZone|%time_local|%postalCode",
    ])
    #expect(result.status == 0)
    #expect(
      result.stdout
        == "IJsselstein, The Netherlands|52.000000|IJsselstein|NL|Europe/Amsterdam"
        + "|2024-05-01 14:00:00 +0200|\n")
    #expect(result.stderr.contains("whereami: authorization"))
  }

  @Test func geocodePrintsTheCandidatesBestFirst() async throws {
    let result = try await run(["--geocode", "Zürich"])
    #expect(result.status == 0, "stderr: \(result.stderr)")
    #expect(result.lines.first == "47.366670 8.550000  Zürich, Zurich, Switzerland")
    let texas = try await run([
      "--geocode", "Paris, Texas", "-f", "%locality %administrativeArea %timeZone",
    ])
    #expect(texas.lines.first == "Paris Texas America/Chicago")
    let json = try await run(["--geocode", "Munich", "--json"])
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data((json.lines.first ?? "").utf8)) as? [String: Any])
    #expect(object["isoCountryCode"] as? String == "DE")
    let none = try await run(["--geocode", "qqqxz zzqk"])
    #expect(none.status == 1)
    #expect(none.stdout.isEmpty)
    #expect(none.stderr.contains("no place matches"))
  }

  @Test func aMissingOrCorruptGazetteerIsNoResultNotACrash() async throws {
    let missing = try await run(
      ["--geocode", "Zürich"], ["CORELOCATION_GAZETTEER": "/nonexistent/gazetteer.clgz"])
    #expect(missing.status == 1)
    #expect(missing.stderr.contains("gazetteer"), "stderr: \(missing.stderr)")
    let corrupt = FileManager.default.temporaryDirectory.appendingPathComponent(
      "corrupt-\(getpid()).clgz")
    try Data("CLGAZ\0\0\u{1}garbage".utf8).write(to: corrupt)
    defer { try? FileManager.default.removeItem(at: corrupt) }
    let bad = try await run(["--geocode", "Zürich"], ["CORELOCATION_GAZETTEER": corrupt.path])
    #expect(bad.status == 1)
    // Locations still print; the address tokens are empty.
    let located = try await run(
      ["--source", Self.north, "-f", "%latitude|%locality|"],
      ["CORELOCATION_GAZETTEER": corrupt.path])
    #expect(located.status == 0)
    #expect(located.stdout == "52.000000||\n")
  }

  @Test func distanceFilter() async throws {
    // The points are 11.13 m apart: with 20 m, every second one.
    let result = try await run([
      "--source", Self.north, "--watch", "--instant", "--distance-filter", "20", "-f",
      "%latitude",
    ])
    #expect(result.status == 0)
    #expect(result.lines == ["52.000000", "52.000200", "52.000400", "52.000600", "52.000800"])
  }

  @Test func staticFile() async throws {
    let result = try await run(["--source", "static://" + Paths.fixture("static", "good")])
    #expect(result.status == 0, "stderr: \(result.stderr)")
    #expect(result.stdout == "48.858400 2.294500\n")
  }

  /// Issue 15: a location kept by an earlier run of another source (the static file's position)
  /// is not the first location of a replay: the replay's own first point is.
  @Test func cachedLocationOfAnotherSourceIsNotOffered() async throws {
    try await withTemporaryDirectoryAsync { directory in
      let store = ["CORELOCATION_STORE": directory + "/store.sqlite"]
      let first = try await run(["--source", "static://" + Paths.fixture("static", "good")], store)
      #expect(first.stdout == "48.858400 2.294500\n", "stderr: \(first.stderr)")
      let again = try await run(["--source", "static://" + Paths.fixture("static", "good")], store)
      #expect(again.status == 0 && again.stdout == first.stdout)
      let replay = try await run(["--source", Self.north, "--watch", "--instant"], store)
      #expect(replay.status == 0, "stderr: \(replay.stderr)")
      #expect(replay.lines.first == "52.000000 5.000000")
      #expect(!replay.stdout.contains("48.858400"))
      // The same static file again: its own kept location may come first.
      let watched = try await run(
        ["--source", "static://" + Paths.fixture("static", "good"), "--watch", "--count", "1"],
        store)
      #expect(watched.lines.first == "48.858400 2.294500")
    }
  }

  @Test func staticFileInATemporaryDirectory() async throws {
    let directory = NSTemporaryDirectory() + "whereami-static-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let path = directory + "/geolocation"
    try Data("# test\n-33.8568\n151.2153\n3\n100\n".utf8).write(to: URL(fileURLWithPath: path))
    let result = try await run(["--json"], ["CORELOCATION_SOURCE": "static://" + path])
    #expect(result.status == 0)
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    #expect(object["latitude"] as? NSNumber == -33.8568)
    #expect(object["h_accuracy"] as? NSNumber == 100)
    #expect(object["simulated"] as? Bool == false)
  }

  // MARK: Failures

  @Test func unknownSchemeFails() async throws {
    let result = try await run(["--source", "bogus://127.0.0.1:2947"])
    #expect(result.status == 1)
    #expect(result.stdout.isEmpty)
    #expect(result.stderr.contains("unknown source scheme 'bogus'"), "stderr: \(result.stderr)")
  }

  @Test func unknownSchemeFailsAWatchToo() async throws {
    let result = try await run(["--watch"], ["CORELOCATION_SOURCE": "bogus://system"])
    #expect(result.status == 1)
    #expect(result.stderr.contains("CORELOCATION_SOURCE: unknown source scheme 'bogus'"))
  }

  @Test func missingFileFailsNamingIt() async throws {
    let path = "/nonexistent/whereami-tests/ride.gpx"
    let result = try await run(["--source", "replay://" + path])
    #expect(result.status == 1)
    #expect(result.stdout.isEmpty)
    #expect(result.stderr.contains(path), "stderr: \(result.stderr)")
  }

  @Test func missingFileFailsAWatchNamingIt() async throws {
    let path = "/nonexistent/whereami-tests/ride.gpx"
    let result = try await run(["--source", path, "--watch", "--instant"])
    #expect(result.status == 1)
    #expect(result.stderr.contains(path), "stderr: \(result.stderr)")
    // One diagnostic: the file is missing for good, so nothing says "still trying".
    #expect(!result.stderr.contains("still trying"), "stderr: \(result.stderr)")
    #expect(result.stderr.split(separator: "\n").count == 1, "stderr: \(result.stderr)")
  }

  @Test func malformedGPXFailsNamingFileAndLine() async throws {
    let path = Paths.fixture("replay", "malformed.gpx")
    let result = try await run(["--source", "replay://" + path])
    #expect(result.status == 1)
    #expect(result.stdout.isEmpty)
    #expect(result.stderr.contains(path + ":8:"), "stderr: \(result.stderr)")
  }

  @Test(arguments: [("empty", nil), ("latitude91", 2), ("three_values", 4)] as [(String, Int?)])
  func badStaticFileFails(_ name: String, _ line: Int?) async throws {
    let path = Paths.fixture("static", name)
    let result = try await run([], ["CORELOCATION_SOURCE": "static://" + path])
    #expect(result.status == 1)
    #expect(result.stdout.isEmpty)
    let place = line.map { "\(path):\($0):" } ?? path
    #expect(result.stderr.contains(place), "stderr: \(result.stderr)")
  }

  /// Issue 15: a serial device that is not there. Without --watch, requestLocation's 10 s end
  /// the wait, and the message says how long and what failed; with --watch, the failure is said at
  /// once and the run goes on trying until its --timeout.
  @Test func missingSerialDeviceIsSaid() async throws {
    let device = "/nonexistent/whereami-tests/ttyUSB7"
    let once = try await run(["--source", "nmea://" + device])
    #expect(once.status == 1)
    #expect(once.stderr.contains("whereami: no location after 10 s: "), "\(once.stderr)")
    #expect(once.stderr.contains(device) && once.stderr.contains("no such file"), "\(once.stderr)")
    let watched = try await run(["--source", "nmea://" + device, "--watch", "--timeout", "2"])
    #expect(watched.status == 4)
    #expect(watched.stderr.contains(device + ": open: no such file or directory; still trying"))
  }

  @Test func deniedAuthorizationExitsThree() async throws {
    let result = try await run(
      ["--source", Self.north], ["CORELOCATION_AUTHORIZATION": "deny"])
    #expect(result.status == 3)
    #expect(result.stdout.isEmpty)
    #expect(result.stderr.contains("location access denied"))
  }

  /// The one test that waits in real time: `--timeout 1` of a real program, after its first
  /// location, with a replay so slow that the second never comes.
  @Test func timeoutAfterTheLastLocationExitsFour() async throws {
    let result = try await run([
      "--source", Self.north, "--watch", "--speed", "0.0001", "--timeout", "1",
    ])
    #expect(result.status == 4)
    #expect(result.lines == ["52.000000 5.000000"])
    #expect(result.stderr.contains("no location within 1 s of the last one"))
  }
}
