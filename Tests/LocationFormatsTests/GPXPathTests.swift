import Foundation
import Geodesy
import TestSupport
import Testing

@testable import LocationFormats

/// `GPXPath`: which points of a GPX document a replay plays (tracks, else routes, else waypoints,
/// never a mix), where its segments begin, and what it tells the user it left out; on real files
/// from other GPX tools.
@Suite struct GPXPathTests {
  struct Expectation: Sendable, CustomStringConvertible {
    var file: String
    var kind: GPXPoint.Kind
    var count: Int
    var leftOut: GPXPointCounts
    var notice: String?
    var description: String { file }
  }

  static let expectations: [Expectation] = [
    // The hike of issue 21: 7 points of interest, then the walk in 8 tracks (the first empty).
    Expectation(
      file: "gpxpy-cerknicko-jezero.gpx", kind: .track, count: 296,
      leftOut: GPXPointCounts(waypoint: 7), notice: "7 waypoints not replayed: a track is present"),
    Expectation(
      file: "gpxpy-gpx1.0_with_all_fields.gpx", kind: .track, count: 1,
      leftOut: GPXPointCounts(route: 5, waypoint: 2),
      notice: "2 waypoints and 5 route points not replayed: a track is present"),
    Expectation(
      file: "gpxpy-gpx1.1_with_all_fields.gpx", kind: .track, count: 1,
      leftOut: GPXPointCounts(route: 5, waypoint: 2),
      notice: "2 waypoints and 5 route points not replayed: a track is present"),
    Expectation(
      file: "gpxpy-route.gpx", kind: .route, count: 55, leftOut: GPXPointCounts(), notice: nil),
    Expectation(
      file: "gpxpy-unicode_with_bom.gpx", kind: .waypoint, count: 1, leftOut: GPXPointCounts(),
      notice: nil),
    Expectation(
      file: "gpxpy-unicode_with_bom_noencoding.gpx", kind: .waypoint, count: 1,
      leftOut: GPXPointCounts(), notice: nil),
    Expectation(
      file: "gpxpy-track-with-empty-segment.gpx", kind: .track, count: 9,
      leftOut: GPXPointCounts(), notice: nil),
    Expectation(
      file: "gpxpy-around-visnjan-with-car.gpx", kind: .track, count: 104,
      leftOut: GPXPointCounts(), notice: nil),
    Expectation(
      file: "gpxpy-gpx_with_garmin_extension.gpx", kind: .waypoint, count: 1,
      leftOut: GPXPointCounts(), notice: nil),
    Expectation(
      file: "gpxpy-track-with-small-floats.gpx", kind: .track, count: 3,
      leftOut: GPXPointCounts(), notice: nil),
    Expectation(
      file: "gpxpy-track_with_dilution_errors.gpx", kind: .track, count: 1,
      leftOut: GPXPointCounts(route: 1, waypoint: 1),
      notice: "1 waypoint and 1 route point not replayed: a track is present"),
    Expectation(
      file: "gpxgo-iso8859-1encoded.gpx", kind: .waypoint, count: 8, leftOut: GPXPointCounts(),
      notice: nil),
    Expectation(
      file: "routes_waypoints.gpx", kind: .track, count: 2,
      leftOut: GPXPointCounts(route: 4, waypoint: 2),
      notice: "2 waypoints and 4 route points not replayed: a track is present"),
  ]

  /// Each file's path is of the expected kind and length, in document order, and the rest is
  /// counted and announced; counting the file without keeping its points agrees.
  @Test(arguments: expectations)
  func pathOfARealFile(_ expected: Expectation) throws {
    let path = Paths.fixture("gpx", expected.file)
    let document = try GPXDecoder.decode(data: try Paths.fixtureBytes("gpx", expected.file))
    let gpxPath = document.path
    #expect(gpxPath.kind == expected.kind)
    #expect(gpxPath.points.count == expected.count)
    #expect(gpxPath.points.allSatisfy { $0.kind == expected.kind }, "never a mix")
    #expect(gpxPath.points.map(\.line) == gpxPath.points.map(\.line).sorted(), "document order")
    #expect(gpxPath.leftOut == expected.leftOut)
    #expect(gpxPath.leftOutNotice == expected.notice)
    #expect(gpxPath.points.count + gpxPath.leftOut.total == document.points.count)
    let counts = try GPXDecoder.countPoints(path: path)
    #expect(counts == document.pointCounts)
    #expect(GPXPath.leftOutNotice(for: counts) == expected.notice)
  }

  /// The hike's walk starts at its first track point, not at a point of interest, and its eight
  /// tracks (the first an empty segment) give seven segments.
  @Test func hikeStartsWithItsFirstTrackPointAndKeepsItsTracksApart() throws {
    let name = "gpxpy-cerknicko-jezero.gpx"
    let gpxPath = try GPXDecoder.decode(data: try Paths.fixtureBytes("gpx", name)).path
    let first = try #require(gpxPath.points.first)
    #expect(first.fix.latitude == 45.772175035)
    #expect(first.fix.longitude == 14.357659249)
    #expect(first.line == 68)
    #expect(first.track == 1, "track 0 is an empty segment")
    #expect(gpxPath.segmentStarts == [173, 225, 227, 271, 273, 275])
    for start in gpxPath.segmentStarts {
      #expect(gpxPath.points[start].track == gpxPath.points[start - 1].track + 1)
    }
  }

  /// A segment break inside one track, and an empty segment between two, start new segments;
  /// routes are segments of their own; waypoints are one.
  @Test func segmentStartsFollowSegmentsTracksAndRoutes() throws {
    let tracks = try GPXDecoder.decode(
      data: Array(
        """
        <gpx version="1.1"><trk><trkseg><trkpt lat="1" lon="1"/><trkpt lat="1.1" lon="1"/></trkseg>
        <trkseg/><trkseg><trkpt lat="2" lon="2"/></trkseg></trk>
        <trk><trkseg><trkpt lat="3" lon="3"/><trkpt lat="3.1" lon="3"/></trkseg></trk></gpx>
        """.utf8))
    #expect(tracks.path.segmentStarts == [2, 3])
    let routes = try GPXDecoder.decode(
      data: Array(
        """
        <gpx version="1.1"><rte><rtept lat="1" lon="1"/><rtept lat="1.1" lon="1"/></rte>
        <rte><rtept lat="2" lon="2"/></rte></gpx>
        """.utf8))
    #expect(routes.path.kind == .route)
    #expect(routes.path.segmentStarts == [2])
    let waypoints = try GPXDecoder.decode(
      data: Array(
        """
        <gpx version="1.1"><wpt lat="1" lon="1"/><wpt lat="2" lon="2"/><wpt lat="3" lon="3"/></gpx>
        """.utf8))
    #expect(waypoints.path.segmentStarts.isEmpty)
  }

  /// A track whose points are all invalid is no track: the routes are the path.
  @Test func aTrackWithoutValidPointsLeavesTheRoutes() throws {
    let document = try GPXDecoder.decode(
      data: Array(
        """
        <gpx version="1.1"><wpt lat="0" lon="0"/><rte><rtept lat="1" lon="1"/></rte>
        <trk><trkseg><trkpt lat="95" lon="1"/><trkpt lon="1"/></trkseg></trk></gpx>
        """.utf8))
    #expect(document.path.kind == .route)
    #expect(document.path.points.map(\.fix.latitude) == [1])
    #expect(document.path.leftOutNotice == "1 waypoint not replayed: a route is present")
  }

  @Test(arguments: [
    (GPXPointCounts(), GPXPoint.Kind.waypoint),
    (GPXPointCounts(waypoint: 3), .waypoint),
    (GPXPointCounts(route: 1, waypoint: 3), .route),
    (GPXPointCounts(track: 1), .track),
    (GPXPointCounts(track: 1, route: 9, waypoint: 9), .track),
  ])
  func kindFollowsTheRule(_ counts: GPXPointCounts, _ kind: GPXPoint.Kind) {
    #expect(GPXPath.kind(for: counts) == kind)
  }

  @Test(arguments: [
    (GPXPointCounts(track: 5, waypoint: 1), "1 waypoint not replayed: a track is present"),
    (GPXPointCounts(track: 5, route: 1), "1 route point not replayed: a track is present"),
    (GPXPointCounts(route: 2, waypoint: 2), "2 waypoints not replayed: a route is present"),
  ])
  func noticesCountInWords(_ counts: GPXPointCounts, _ notice: String) {
    #expect(GPXPath.leftOutNotice(for: counts) == notice)
  }

  @Test(arguments: [
    GPXPointCounts(), GPXPointCounts(track: 3), GPXPointCounts(route: 3),
    GPXPointCounts(waypoint: 3),
  ])
  func nothingLeftOutIsNoNotice(_ counts: GPXPointCounts) {
    #expect(GPXPath.leftOutNotice(for: counts) == nil)
  }
}
