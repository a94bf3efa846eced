import Foundation
import LocationControl
import LocationFormats
import LocationModel
import Testing

/// `locationctl export`: its options, the times it reads, and the documents it writes.
@Suite struct ExportRequestTests {
  static let now = 1_764_583_200.0  // 2025-12-01T10:00:00Z

  @Test(arguments: [
    (
      ["export", "--since", "24h", "--gpx"],
      ExportRequest(since: .ago(86_400), format: .gpx)
    ),
    (
      ["export", "--geojson", "--since=7d", "--until", "2026-12-01T10:00:00Z", "-o", "t.json"],
      ExportRequest(
        since: .ago(604_800), until: .absolute(1_796_119_200), format: .geojson, output: "t.json")
    ),
    (
      ["--gpx", "export", "--since", "@1700000000", "--output", "/tmp/x.gpx"],
      ExportRequest(since: .absolute(1_700_000_000), format: .gpx, output: "/tmp/x.gpx")
    ),
  ])
  func parses(arguments: [String], expected: ExportRequest) throws {
    #expect(try ControlOptions.parse(arguments) == ControlOptions(command: .export(expected)))
  }

  @Test(arguments: [
    (["export", "--gpx"], "export needs --since WHEN"),
    (["export", "--since", "1h"], "export needs one of --gpx or --geojson"),
    (["export", "--since", "1h", "--gpx", "--geojson"], "one of --gpx or --geojson"),
    (["export", "--since", "yesterday", "--gpx"], "--since 'yesterday' is not a time"),
    (["export", "--since", "1h", "--until", "2026-13-01", "--gpx"], "--until '2026-13-01'"),
    (["export", "--since"], "--since needs a value"),
    (["export", "--since", "1h", "--gpx", "-o"], "-o needs a value"),
    (["export", "--since", "1h", "--gpx", "--json"], "--json does not apply to export"),
    (["export", "--since", "1h", "--gpx", "extra"], "unexpected argument 'extra'"),
    (["status", "--gpx"], "--gpx applies to export only"),
    (["apps", "--since", "1h"], "--since applies to export only"),
  ])
  func rejects(arguments: [String], message: String) {
    #expect {
      _ = try ControlOptions.parse(arguments)
    } throws: { error in
      (error as? ControlOptions.UsageError)?.message.contains(message) == true
    }
  }

  @Test(arguments: [
    ("2026-12-01T10:00:00Z", ExportTime.absolute(1_796_119_200)),
    ("2026-12-01t10:00:00z", .absolute(1_796_119_200)),
    ("2026-12-01 10:00Z", .absolute(1_796_119_200)),
    ("2026-12-01T11:30:00+01:30", .absolute(1_796_119_200)),
    ("2026-12-01T08:00:00-0200", .absolute(1_796_119_200)),
    ("2026-12-01T10:00:00.25Z", .absolute(1_796_119_200.25)),
    ("2026-12-01", .absolute(1_796_083_200)),
    ("2024-02-29", .absolute(1_709_164_800)),
    ("1969-12-31T23:59:59Z", .absolute(-1)),
    ("90s", .ago(90)), ("30m", .ago(1800)), ("24h", .ago(86_400)), ("7d", .ago(604_800)),
    ("2w", .ago(1_209_600)), ("1.5h", .ago(5400)), ("now", .ago(0)),
    ("@1700000000", .absolute(1_700_000_000)), ("@-5", .absolute(-5)),
  ])
  func readsTimes(text: String, expected: ExportTime) throws {
    #expect(try ExportTime.parse(text, option: "--since") == expected)
  }

  @Test(arguments: [
    "", "yesterday", "7", "d", "-7d", "7y", "7 d", "1e3s", "nanh", "infd", "2026-12-01T10:00:00",
    "2026-02-30", "2025-02-29", "2026-12-01T24:00:00Z", "2026-12-01T10:60Z", "2026-12-01T10Z",
    "2026-12-01T10:00:00+25:00", "2026-12-01T10:00:00Zjunk", "26-12-01", "@", "@1e9", "@nan",
    "99999999999999d", "2026-12-01T10:00:00.Z",
  ])
  func refusesBadTimes(text: String) {
    #expect(throws: ControlOptions.UsageError.self) {
      try ExportTime.parse(text, option: "--since")
    }
  }

  @Test func relativeTimesCountBackFromNowAndUntilMustFollowSince() throws {
    let request = ExportRequest(since: .ago(3600), until: .ago(60), format: .gpx)
    let bounds = try request.bounds(now: Self.now)
    #expect(bounds.since == Self.now - 3600 && bounds.until == Self.now - 60)
    #expect(try ExportRequest(since: .ago(60), format: .gpx).bounds(now: Self.now).until == nil)
    #expect(throws: ControlOptions.UsageError.self) {
      try ExportRequest(since: .ago(60), until: .ago(3600), format: .gpx).bounds(now: Self.now)
    }
    #expect(throws: ControlOptions.UsageError.self) {
      try ExportRequest(since: .absolute(5), until: .absolute(5), format: .gpx).bounds(now: 9)
    }
  }

  static let fixes = [
    Fix(
      latitude: 52.1, longitude: 4.9, altitude: 3.5, horizontalAccuracy: 4, verticalAccuracy: 6,
      speed: 1.25, course: 270, time: now),
    Fix(latitude: -33.9, longitude: 180, horizontalAccuracy: 12, time: now + 1.5),
  ]

  /// GPX written page by page reads back through the project's own decoder.
  @Test func gpxReadsBack() throws {
    var document = HistoryDocument(format: .gpx)
    var bad = Self.fixes[0]
    bad.latitude = .nan
    let text =
      document.begin() + document.add([Self.fixes[0]]) + document.add([bad, Self.fixes[1]])
      + document.end()
    #expect(document.count == 2 && document.skipped == 1)
    let decoded = try GPXDecoder.decode(data: Array(text.utf8))
    #expect(decoded.version == "1.1" && decoded.warnings.isEmpty && decoded.points.count == 2)
    #expect(decoded.points.map(\.time) == [Self.now, Self.now + 1.5])
    let first = try #require(decoded.points.first)
    #expect(first.fix.latitude == 52.1 && first.fix.longitude == 4.9 && first.fix.altitude == 3.5)
    #expect(first.fix.speed == 1.25 && first.fix.course == 270)
    // The antimeridian as GPX writes it.
    #expect(decoded.points[1].fix.longitude == -180 && decoded.points[1].fix.altitude == nil)
  }

  @Test func geoJSONIsAFeatureCollectionOfPoints() throws {
    var document = HistoryDocument(format: .geojson)
    let text = document.begin() + document.add(Self.fixes) + document.add([]) + document.end()
    let object = try JSONSerialization.jsonObject(with: Data(text.utf8))
    let collection = try #require(object as? [String: Any])
    #expect(collection["type"] as? String == "FeatureCollection")
    let features = try #require(collection["features"] as? [[String: Any]])
    #expect(features.count == 2)
    let geometries = features.compactMap { $0["geometry"] as? [String: Any] }
    #expect(geometries.allSatisfy { $0["type"] as? String == "Point" })
    #expect(
      geometries.compactMap { $0["coordinates"] as? [Double] } == [
        [4.9, 52.1, 3.5], [180, -33.9],
      ])
    let first = try #require(features[0]["properties"] as? [String: Any])
    #expect(first["time"] as? String == "2025-12-01T10:00:00Z")
    #expect(first["speed"] as? Double == 1.25 && first["course"] as? Double == 270)
    #expect(first["verticalAccuracy"] as? Double == 6)
    let second = try #require(features[1]["properties"] as? [String: Any])
    #expect(second["time"] as? String == "2025-12-01T10:00:01.500Z")
    #expect(second["speed"] == nil && second["course"] == nil && second["verticalAccuracy"] == nil)
    // No point at all is a valid, empty collection.
    let empty = HistoryDocument(format: .geojson)
    let none = try JSONSerialization.jsonObject(with: Data((empty.begin() + empty.end()).utf8))
    #expect(((none as? [String: Any])?["features"] as? [Any])?.isEmpty == true)
  }

  @Test func aBadSinceIsAUsageErrorBeforeAnyConnection() {
    let captured = Captured()
    let status = LocationControlCommand.run(
      arguments: ["export", "--since", "last tuesday", "--gpx", "--socket", "/nonexistent/s"],
      environment: [:], io: captured.io())
    #expect(status == 2)
    #expect(captured.error.contains("--since 'last tuesday' is not a time"))
    let later = Captured()
    #expect(
      LocationControlCommand.run(
        arguments: ["export", "--since", "1h", "--until", "2h", "--geojson", "--socket", "/x/s"],
        environment: [:], io: later.io()) == 2)
    #expect(later.error.contains("--until must be later than --since"))
  }
}
