import Foundation
import TestSupport
import Testing

@testable import LocationCLI

/// `WhereAmI.replayNotices`: what whereami tells its user a GPX replay leaves out.
@Suite struct WhereAmITests {
  /// `Tests/Fixtures/gpx/NAME`.
  static func fixture(_ name: String) -> String { Paths.fixture("gpx", name) }

  @Test func hikeWithWaypointsGetsANotice() {
    let hike = Self.fixture("gpxpy-cerknicko-jezero.gpx")
    #expect(
      WhereAmI.replayNotices(sources: "replay://\(hike)?instant=1") == [
        "\(hike): 7 waypoints not replayed: a track is present"
      ])
  }

  /// One notice per GPX file that leaves points out, in the order of the sources; files that
  /// leave nothing out, other sources, NMEA logs and missing files give none.
  @Test func noticesFollowTheSources() {
    let route = Self.fixture("gpxpy-route.gpx")
    let dilution = Self.fixture("gpxpy-track_with_dilution_errors.gpx")
    let nmea = Paths.fixture("nmea", "edge-cases.nmea")
    let sources = [
      "gpsd://127.0.0.1:2947", "replay://" + route, dilution, "replay://" + nmea,
      "replay:///nonexistent/corelocation-tests/x.gpx",
    ]
    #expect(
      WhereAmI.replayNotices(sources: sources.joined(separator: ",")) == [
        "\(dilution): 1 waypoint and 1 route point not replayed: a track is present"
      ])
  }

  @Test func badSourceListGivesNoNotice() {
    #expect(WhereAmI.replayNotices(sources: "nonsense").isEmpty)
  }

  /// `--record` syncs each point unless every source is a replayed file.
  @Test func onlyReplaysAreReplays() {
    #expect(WhereAmI.onlyReplays("replay:///a.gpx?instant=1"))
    #expect(WhereAmI.onlyReplays("/a.gpx, replay:///b.nmea"))
    #expect(!WhereAmI.onlyReplays("replay:///a.gpx,gpsd://127.0.0.1:2947"))
    #expect(!WhereAmI.onlyReplays("static:///etc/geolocation"))
    #expect(!WhereAmI.onlyReplays("not a source ::"))
  }
}
