import Foundation
import Geodesy
import LocationFormats
import LocationModel
import LocationSources
import TestSupport
import Testing

/// `ReplayTrack`: format detection, loading real recordings, errors with file and line, and the
/// speed and course derived from consecutive points.
@Suite struct ReplayTrackTests {
  static let bom: [UInt8] = [0xEF, 0xBB, 0xBF]

  static let detection: [(String, [UInt8], ReplayTrack.Format?)] = [
    ("xml declaration", Array("<?xml version=\"1.0\"?><gpx/>".utf8), .gpx),
    ("bare gpx", Array("<gpx>".utf8), .gpx),
    ("leading blank lines", Array("\n\r\n \t<gpx>".utf8), .gpx),
    ("bom then xml", bom + Array("<?xml?>".utf8), .gpx),
    ("nmea", Array("$GPGGA,1*00\r\n".utf8), .nmea),
    ("ais", Array("!AIVDM,1,1,,A,1*00\n".utf8), .nmea),
    ("comments then nmea", Array("# device: x\n# date\n$GPRMC".utf8), .nmea),
    ("bom, comment, nmea", bom + Array("# x\r\n$GPRMC".utf8), .nmea),
    ("comment then xml", Array("# x\n<gpx>".utf8), .gpx),
    ("csv", Array("lat,lon\n52,5\n".utf8), nil),
    ("json", Array("{\"class\":\"TPV\"}".utf8), nil),
    ("empty", [], nil),
    ("only whitespace", Array(" \n\t\r\n".utf8), nil),
    ("only comments", Array("# nothing\n# here".utf8), nil),
    ("only a bom", bom, nil),
    ("binary", [0x00, 0x01, 0xFF], nil),
  ]

  @Test(arguments: detection)
  func detectsFormat(_ name: String, _ bytes: [UInt8], _ expected: ReplayTrack.Format?) {
    #expect(ReplayTrack.detectFormat(bytes) == expected, "\(name)")
  }

  // MARK: Real recordings

  static func captureNames() -> [String] {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: Paths.gpsdRegress)) ?? []
    return names.filter { $0.hasSuffix(".log") }.sorted()
  }

  @Test func gpsdCapturesArePresent() {
    #expect(Self.captureNames().count >= 70, "expected gpsd's captures in \(Paths.gpsdRegress)")
  }

  /// Every gpsd capture for which gpsd reported a fix loads, with timestamps; warnings name the
  /// file and line. Captures without any fix fail as `.malformed`, naming the file.
  @Test(arguments: captureNames())
  func loadsGPSDCapture(_ name: String) throws {
    let path = Paths.gpsdRegress + "/" + name
    let check = try String(contentsOfFile: path + ".chk", encoding: .utf8)
    let gpsdHasFix = check.split(separator: "\n").contains {
      $0.contains("\"class\":\"TPV\"")
        && ($0.contains("\"mode\":2") || $0.contains("\"mode\":3"))
    }
    if gpsdHasFix {
      let track = try ReplayTrack.load(path: path)
      #expect(!track.fixes.isEmpty)
      #expect(track.hasTimes)
      #expect(track.warnings.allSatisfy { $0.file == path && $0.line != nil })
    } else {
      #expect {
        try ReplayTrack.load(path: path)
      } throws: { error in
        guard let error = error as? SourceError else { return false }
        return error.code == .malformed && error.message.contains(path)
      }
    }
  }

  @Test func loadsTheBundledTrack() throws {
    // About two and a half minutes of a B&G chartplotter at 1 Hz (09:47:36 to 09:50:04).
    let track = try ReplayTrack.load(path: Paths.ijsselmeer)
    #expect((140...160).contains(track.fixes.count))
    #expect(track.hasTimes)
    // The boat is on the IJsselmeer (52.5-53.1 N, 5.0-5.8 E).
    #expect(track.fixes.allSatisfy { (52.4...53.2).contains($0.latitude) })
    #expect(track.fixes.allSatisfy { (4.9...5.9).contains($0.longitude) })
    // 2018-08-20.
    #expect(track.fixes.allSatisfy { (1_534_723_200..<1_534_809_600).contains($0.time) })
  }

  static let gpxFixtures = [
    "garmin_connect_v1.gpx", "garmin_trackpointextension_v2.gpx", "gpx10_speed_course.gpx",
    "routes_waypoints.gpx", "bad_points.gpx",
  ]

  @Test(arguments: gpxFixtures)
  func loadsGPXFixture(_ name: String) throws {
    let path = Paths.fixture("gpx", name)
    let track = try ReplayTrack.load(path: path)
    #expect(!track.fixes.isEmpty)
    #expect(track.fixes.allSatisfy { $0.hasValidCoordinate })
  }

  @Test func loadsNMEAWithBOMAndComments() throws {
    let track = try ReplayTrack.load(path: Paths.fixture("replay", "bom_comments.nmea"))
    let fix = try #require(track.fixes.first)
    #expect(abs(fix.latitude - (48 + 7.038 / 60)) < 1e-9)
    #expect(abs(fix.longitude - (11 + 31.0 / 60)) < 1e-9)
  }

  /// A GPX with damaged points in the middle: the good points survive, and each bad one is a
  /// warning naming the file and its line.
  @Test func badPointsBecomeWarnings() throws {
    let path = Paths.fixture("gpx", "bad_points.gpx")
    let track = try ReplayTrack.load(path: path)
    #expect(track.fixes.map(\.latitude) == [51.5007292, 51.50076, 51.50077])
    #expect(!track.warnings.isEmpty)
    let lines = Set(track.warnings.compactMap(\.line))
    #expect(lines.isSuperset(of: [8, 9, 10]), "warnings: \(track.warnings)")
    #expect(track.warnings.allSatisfy { $0.file == path })
    #expect(track.warnings.allSatisfy { $0.description.hasPrefix(path + ":") })
  }

  // MARK: Errors

  @Test func missingFileIsUnavailableAndNamesThePath() {
    let path = "/nonexistent/corelocation-tests/track.gpx"
    #expect {
      try ReplayTrack.load(path: path)
    } throws: { error in
      guard let error = error as? SourceError else { return false }
      return error.code == .unavailable && error.isPermanent
        && error.message.contains(path) && error.message.contains("No such file")
    }
  }

  @Test func directoryIsUnavailable() {
    let path = Paths.root.appendingPathComponent("Tests").path
    #expect {
      try ReplayTrack.load(path: path)
    } throws: { error in
      guard let error = error as? SourceError else { return false }
      return error.code == .unavailable && error.message.contains(path)
    }
  }

  @Test func neitherGPXNorNMEA() {
    let path = Paths.fixture("replay", "positions.csv")
    #expect {
      try ReplayTrack.load(path: path)
    } throws: { error in
      guard let error = error as? SourceError else { return false }
      return error.code == .malformed && error.message.contains(path)
        && error.message.contains("neither GPX nor NMEA")
    }
  }

  @Test func malformedXMLNamesFileAndLine() {
    let path = Paths.fixture("replay", "malformed.gpx")
    #expect {
      try ReplayTrack.load(path: path)
    } throws: { error in
      guard let error = error as? SourceError else { return false }
      return error.code == .malformed && error.message.contains(path + ":8")
    }
  }

  @Test(arguments: ["truncated.gpx", "no_points.gpx", "billion_laughs.gpx", "xxe.gpx"])
  func unusableGPXFails(_ name: String) {
    let path = Paths.fixture("gpx", name)
    #expect {
      try ReplayTrack.load(path: path)
    } throws: { error in
      guard let error = error as? SourceError else { return false }
      return error.code == .malformed && error.message.contains(path)
    }
  }

  @Test func emptyFileFails() throws {
    try withTemporaryDirectory { directory in
      let path = try write("", to: "empty.gpx", in: directory)
      #expect {
        try ReplayTrack.load(path: path)
      } throws: { error in
        guard let error = error as? SourceError else { return false }
        return error.code == .malformed && error.message.contains(path)
      }
    }
  }

  @Test func nmeaWithoutFixFails() throws {
    try withTemporaryDirectory { directory in
      let path = try write(
        "$GPGSV,1,1,00*79\r\n$GPGGA,,,,,,0,00,,,,,,,*66\r\n", to: "nofix.nmea", in: directory)
      #expect {
        try ReplayTrack.load(path: path)
      } throws: { error in
        (error as? SourceError)?.message == "replay: \(path) holds no usable position or heading"
      }
    }
  }

  // MARK: Derived motion

  @Test func straightNorthTrackGetsCourseZeroAndItsSpeed() throws {
    let track = ReplayTrack(fixes: northTrack(count: 5, speed: 12.5))
    #expect(track.fixes[0].speed < 0, "the first point has nothing to derive from")
    #expect(track.fixes[0].course < 0)
    for fix in track.fixes.dropFirst() {
      #expect(abs(fix.speed - 12.5) < 1e-6)
      #expect(min(fix.course, 360 - fix.course) < 1e-6, "course \(fix.course)")
    }
  }

  @Test func derivesEastAndSouthWestCourses() throws {
    let start = Fix(latitude: 0, longitude: 0, horizontalAccuracy: 5, time: 100)
    let east = Fix(latitude: 0, longitude: 0.001, horizontalAccuracy: 5, time: 110)
    let back = Fix(latitude: -0.001, longitude: 0, horizontalAccuracy: 5, time: 130)
    let track = ReplayTrack(fixes: [start, east, back])
    #expect(abs(track.fixes[1].course - 90) < 1e-6)
    #expect(abs(track.fixes[1].speed - 111.3195 / 10) < 1e-3)
    #expect(abs(track.fixes[2].course - 225) < 0.5)
  }

  @Test func recordedSpeedAndCourseAreKept() {
    var fixes = northTrack(count: 3, speed: 10)
    fixes[1].speed = 3
    fixes[1].course = 271
    let track = ReplayTrack(fixes: fixes)
    #expect(track.fixes[1].speed == 3)
    #expect(track.fixes[1].course == 271)
    #expect(abs(track.fixes[2].speed - 10) < 1e-6)
  }

  @Test func noMotionWithoutElapsedTimeOrMovement() {
    let here = Fix(latitude: 52, longitude: 5, horizontalAccuracy: 5, time: 100)
    var same = here
    same.time = 100
    var later = here
    later.time = 105
    let track = ReplayTrack(fixes: [here, same, later])
    #expect(track.fixes[1].speed < 0, "no time elapsed: no speed")
    #expect(track.fixes[2].speed == 0, "standing still is a speed of zero")
    #expect(track.fixes[2].course < 0, "standing still has no course")
  }

  @Test func noMotionAcrossAnInvalidPoint() {
    let fixes = [
      Fix(latitude: 52, longitude: 5, horizontalAccuracy: 5, time: 1),
      Fix(latitude: .nan, longitude: 5, horizontalAccuracy: 5, time: 2),
      Fix(latitude: 52.001, longitude: 5, horizontalAccuracy: 5, time: 3),
    ]
    let track = ReplayTrack(fixes: fixes)
    #expect(track.fixes[1].speed < 0)
    #expect(track.fixes[2].speed < 0)
  }

  @Test func untimedTrackGetsNoDerivedMotion() {
    let track = ReplayTrack(fixes: northTrack(count: 3, speed: 10), hasTimes: false)
    #expect(track.fixes.allSatisfy { $0.speed < 0 && $0.course < 0 })
    #expect(!track.hasTimes)
  }

  @Test func gpxFileGetsDerivedMotion() throws {
    let track = try ReplayTrack.load(path: Paths.fixture("replay", "north.gpx"))
    #expect(track.fixes.count == 10)
    #expect(track.fixes.first?.time == 1_714_564_800)
    let step = Geodesic.wgs84.distance(
      latitude1: 52, longitude1: 5, latitude2: 52.0001, longitude2: 5)
    for fix in track.fixes.dropFirst() {
      #expect(abs(fix.speed - step) < 1e-3)
      #expect(min(fix.course, 360 - fix.course) < 1e-6)
    }
  }

  /// Points without a time are one second apart from their neighbours, also before the first
  /// point that has one.
  @Test func leadingUntimedPointIsOneSecondBeforeTheFirstTime() throws {
    let track = try ReplayTrack.load(path: Paths.fixture("replay", "leading_untimed.gpx"))
    #expect(track.hasTimes)
    #expect(track.fixes.map(\.time) == [-1, 0, 1, 2].map { 1_714_564_800 + $0 })
    #expect(track.fixes.dropFirst(2).allSatisfy { abs($0.speed - 11.13) < 0.01 })
  }

  @Test func gpxWithoutTimesIsUntimedAndOneSecondApart() throws {
    let track = try ReplayTrack.load(path: Paths.fixture("replay", "untimed.gpx"))
    #expect(!track.hasTimes)
    #expect(track.fixes.count == 3)
    #expect(zip(track.fixes, track.fixes.dropFirst()).allSatisfy { $1.time - $0.time == 1 })
  }
}

/// What a replay plays of GPX files from other tools (issue 21: a track's waypoints are places,
/// not part of its path): the path only, no motion across a segment break, no impossible speeds.
@Suite struct ReplayTrackGPXPathTests {
  static let files = [
    "gpxpy-cerknicko-jezero.gpx", "gpxpy-gpx1.0_with_all_fields.gpx",
    "gpxpy-gpx1.1_with_all_fields.gpx", "gpxpy-route.gpx", "gpxpy-unicode_with_bom.gpx",
    "gpxpy-unicode_with_bom_noencoding.gpx", "gpxpy-track-with-empty-segment.gpx",
    "gpxpy-around-visnjan-with-car.gpx", "gpxpy-gpx_with_garmin_extension.gpx",
    "gpxpy-track-with-small-floats.gpx", "gpxpy-track_with_dilution_errors.gpx",
    "gpxgo-iso8859-1encoded.gpx", "routes_waypoints.gpx",
  ]

  /// A header (path kind, whether it is timed, segment starts, points left out), then one line
  /// per fix: time, latitude, longitude, speed, course.
  static func render(_ track: ReplayTrack) -> String {
    let kind = track.gpxPathKind.map { "\($0)" } ?? "-"
    var out =
      "# path \(kind), \(track.hasTimes ? "timed" : "untimed"), \(track.fixes.count) fixes\n"
    out += "# segment starts \(track.segmentStarts)\n"
    out +=
      "# left out: \(track.leftOut.track) track, \(track.leftOut.route) route, "
      + "\(track.leftOut.waypoint) waypoints\n"
    out += "# time lat lon speed course\n"
    for fix in track.fixes {
      let time = track.hasTimes ? "\(fix.time)" : "-"
      out += "\(time) \(fix.latitude) \(fix.longitude) \(fix.speed) \(fix.course)\n"
    }
    return out
  }

  /// Each file replays as `NAME.replay.chk` beside it says (set `GPX_WRITE_CHK=1` to rewrite
  /// after a reviewed change of behaviour).
  @Test(arguments: files)
  func matchesExpectation(_ name: String) throws {
    let path = Paths.fixture("gpx", name)
    let rendered = Self.render(try ReplayTrack.load(path: path))
    let chk = path + ".replay.chk"
    if ProcessInfo.processInfo.environment["GPX_WRITE_CHK"] == "1" {
      try rendered.write(toFile: chk, atomically: true, encoding: .utf8)
    }
    #expect(rendered == (try String(contentsOfFile: chk, encoding: .utf8)))
  }

  /// Whatever the file, every fix is of one kind of point, derived speeds are possible and
  /// nothing is derived across a segment start.
  @Test(arguments: files)
  func pathRules(_ name: String) throws {
    let path = Paths.fixture("gpx", name)
    let track = try ReplayTrack.load(path: path)
    let document = try GPXDecoder.decode(path: path)
    let kind = try #require(track.gpxPathKind)
    let expected = document.points.filter { $0.kind == kind }
    #expect(track.fixes.map(\.latitude) == expected.map(\.fix.latitude))
    #expect(track.fixes.map(\.longitude) == expected.map(\.fix.longitude))
    #expect(track.fixes.count + track.leftOut.total == document.points.count)
    for (index, fix) in track.fixes.enumerated() where expected[index].fix.speed < 0 {
      #expect(fix.speed <= ReplayTrack.maximumDerivedSpeed)
    }
    for start in track.segmentStarts {
      #expect(track.fixes[start].speed == expected[start].fix.speed)
      #expect(track.fixes[start].course == expected[start].fix.course)
    }
  }

  /// The hike of the issue: the walk starts at its first track point, at its own time, with no
  /// speed (before, seven waypoints came first and it got 12,718 m/s); the waypoints are counted.
  @Test func hikeStartsAtTheWalkNotAtItsPointsOfInterest() throws {
    let track = try ReplayTrack.load(path: Paths.fixture("gpx", "gpxpy-cerknicko-jezero.gpx"))
    #expect(track.gpxPathKind == .track)
    #expect(track.leftOut == GPXPointCounts(waypoint: 7))
    #expect(track.leftOutNotice == "7 waypoints not replayed: a track is present")
    #expect(track.fixes.count == 296)
    let first = try #require(track.fixes.first)
    #expect(first.latitude == 45.772175035 && first.longitude == 14.357659249)
    #expect(first.time == 1_281_018_239)  // 2010-08-05T14:23:59Z
    #expect(first.speed == -1 && first.course == -1)
    // No more jumps of kilometres in a second: the fastest step is a 92 m/s GPS glitch.
    #expect(track.fixes.allSatisfy { $0.speed < 100 })
    #expect(zip(track.fixes, track.fixes.dropFirst()).allSatisfy { $0.time <= $1.time })
    // Between the tracks "ACTIVE LOG #3" and "#4" the logger was off for ten minutes and the
    // hikers moved 2.3 km: no speed or course is made of that.
    let gap = track.segmentStarts[2]
    #expect(track.fixes[gap].speed == -1 && track.fixes[gap].course == -1)
    #expect(track.fixes[gap + 1].speed >= 0)
  }

  /// A routes-only file plays its routes; the second route starts a segment.
  @Test func routeOnlyFilePlaysItsRoute() throws {
    let track = try ReplayTrack.load(path: Paths.fixture("gpx", "gpxpy-route.gpx"))
    #expect(track.gpxPathKind == .route)
    #expect(track.fixes.count == 55)
    #expect(!track.hasTimes)
    #expect(track.leftOut.total == 0)
    #expect(track.leftOutNotice == nil)
  }

  /// Waypoints only, timed by OziExplorer when they were clicked: played in document order at
  /// their times; the steps faster than sound get no speed and no course.
  @Test func timedWaypointsKeepTheirTimesAndLoseImpossibleSpeeds() throws {
    let track = try ReplayTrack.load(path: Paths.fixture("gpx", "gpxgo-iso8859-1encoded.gpx"))
    #expect(track.gpxPathKind == .waypoint)
    #expect(track.hasTimes)
    #expect(track.fixes.count == 8)
    #expect(track.fixes.first?.time == 1_375_141_230.453)
    // 1.2 km in 2.8 s (447 m/s): no speed, no course.
    #expect(track.fixes[1].speed == -1 && track.fixes[1].course == -1)
    // 1.1 km in 13.5 s (80 m/s): possible, kept.
    #expect(track.fixes[5].speed > 50 && track.fixes[5].speed < 100)
    #expect(track.fixes[5].course > 90 && track.fixes[5].course < 180)
  }

  /// A byte-order mark, with or without a declared encoding, and a declared ISO-8859-1 load.
  @Test(arguments: [
    "gpxpy-unicode_with_bom.gpx", "gpxpy-unicode_with_bom_noencoding.gpx",
    "gpxgo-iso8859-1encoded.gpx",
  ])
  func encodingsLoad(_ name: String) throws {
    let bytes = try Data(contentsOf: URL(fileURLWithPath: Paths.fixture("gpx", name)))
    #expect(ReplayTrack.detectFormat([UInt8](bytes.prefix(64))) == .gpx)
    #expect(!(try ReplayTrack.load(path: Paths.fixture("gpx", name))).fixes.isEmpty)
  }
}

/// Derived motion: segment breaks, made-up times and impossible speeds.
@Suite struct ReplayTrackDerivedMotionTests {
  static func fix(_ latitude: Double, _ time: Double) -> Fix {
    Fix(latitude: latitude, longitude: 5, horizontalAccuracy: 5, time: time)
  }

  /// Two segments 1 s and 0.01° apart: the first fix of the second has no speed or course; the
  /// others do.
  @Test func noMotionAcrossASegmentStart() {
    let fixes = [Self.fix(52, 0), Self.fix(52.0001, 1), Self.fix(52.0101, 2), Self.fix(52.0102, 3)]
    let track = ReplayTrack(fixes: fixes, segmentStarts: [2])
    #expect(track.fixes.map { $0.speed >= 0 } == [false, true, false, true])
    #expect(track.fixes.map { $0.course >= 0 } == [false, true, false, true])
    #expect(track.segmentStarts == [2])
  }

  /// 340 m/s is the fastest derived speed: 0.003° of latitude (about 334 m) in a second is kept,
  /// 0.0031° (about 345 m) is a jump.
  @Test(arguments: [(0.003, true), (0.0031, false), (0.1, false)])
  func impossibleSpeedsAreOmitted(_ step: Double, _ kept: Bool) {
    let track = ReplayTrack(fixes: [Self.fix(52, 0), Self.fix(52 + step, 1)])
    #expect((track.fixes[1].speed >= 0) == kept)
    #expect((track.fixes[1].course >= 0) == kept)
    if kept { #expect(track.fixes[1].speed <= ReplayTrack.maximumDerivedSpeed) }
  }

  /// A recorded speed is kept whatever its value; only derived ones are capped.
  @Test func recordedSpeedIsNotCapped() {
    var fast = Self.fix(53, 1)
    fast.speed = 900
    let track = ReplayTrack(fixes: [Self.fix(52, 0), fast])
    #expect(track.fixes[1].speed == 900)
    #expect(track.fixes[1].course == -1, "the course of a 111 km jump in a second is unknown")
  }

  /// A point without a time between timed ones is played one second after the one before, but
  /// gives and gets no motion: its time is made up.
  @Test func noMotionFromOrToAMadeUpTime() throws {
    let gpx = """
      <gpx version="1.1"><trk><trkseg>
      <trkpt lat="52.0000" lon="5"><time>2024-05-01T12:00:00Z</time></trkpt>
      <trkpt lat="52.0001" lon="5"><time>2024-05-01T12:00:01Z</time></trkpt>
      <trkpt lat="52.0002" lon="5"></trkpt>
      <trkpt lat="52.0010" lon="5"><time>2024-05-01T12:00:09Z</time></trkpt>
      <trkpt lat="52.0011" lon="5"><time>2024-05-01T12:00:10Z</time></trkpt>
      </trkseg></trk></gpx>
      """
    let track = ReplayTrack(gpx: try GPXDecoder.decode(data: Array(gpx.utf8)).path)
    #expect(track.fixes.map(\.time) == [0, 1, 2, 9, 10].map { 1_714_564_800 + $0 })
    #expect(track.fixes.map { $0.speed >= 0 } == [false, true, false, false, true])
  }
}
