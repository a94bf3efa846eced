import CoreLocation
import CoreLocationTesting
import Foundation
import TestSupport
import Testing

/// `SimulatedEnvironment.replay(contentsOf:speed:)`: the same path rules as a `replay://` source
/// (issue 21), on real GPX files from other tools, on the manual clock.
@Suite struct SimulatedEnvironmentReplayTests {
  /// `Tests/Fixtures/gpx/NAME`.
  static func fixture(_ name: String) -> String { Paths.fixture("gpx", name) }

  /// A world whose manager is updating, with a delegate that records what it is told.
  func updatingWorld() -> (SimulatedEnvironment, CLLocationManager, RecordingDelegate) {
    let world = SimulatedEnvironment(authorization: .authorizedWhenInUse)
    let delegate = RecordingDelegate()
    let manager = world.run { CLLocationManager() }
    manager.delegate = delegate
    manager.pausesLocationUpdatesAutomatically = false
    manager.startUpdatingLocation()
    world.pump()
    return (world, manager, delegate)
  }

  /// The hike: seven waypoints left out and said so; the walk from its first track point, in
  /// real time on the manual clock, never faster than 340 m/s.
  @Test func hikePlaysItsTrackOnTheClock() throws {
    let (world, manager, delegate) = updatingWorld()
    defer { withExtendedLifetime(manager) {} }
    let start = world.now
    let replay = try world.replay(contentsOf: Self.fixture("gpxpy-cerknicko-jezero.gpx"))
    #expect(replay.locationCount == 296)
    #expect(replay.leftOutNotice == "7 waypoints not replayed: a track is present")
    // 2010-08-05T14:23:59Z to 16:23:49Z.
    #expect(replay.duration == 7190)
    #expect(delegate.locations.count == 1, "the first location at once")
    let first = try #require(delegate.locations.first)
    #expect(first.coordinate.latitude == 45.772175035)
    #expect(first.coordinate.longitude == 14.357659249)
    #expect(first.speed == -1 && first.course == -1)
    #expect(first.timestamp == start)
    #expect(first.sourceInformation?.isSimulatedBySoftware == true)
    world.advance(by: 69)  // the second track point, 69 s later
    #expect(delegate.locations.count == 2)
    world.advance(by: replay.duration)
    #expect(delegate.locations.count == 296)
    #expect(delegate.locations.allSatisfy { $0.speed <= 340 })
    #expect(delegate.locations.last?.timestamp == start.addingTimeInterval(7190))
  }

  /// What each kind of file plays, and at what speed the clock runs through it.
  @Test(arguments: [
    (
      "gpxpy-gpx1.0_with_all_fields.gpx", 1,
      "2 waypoints and 5 route points not replayed: a track is present"
    ),
    (
      "gpxpy-gpx1.1_with_all_fields.gpx", 1,
      "2 waypoints and 5 route points not replayed: a track is present"
    ),
    ("gpxpy-route.gpx", 55, nil),
    ("gpxpy-unicode_with_bom.gpx", 1, nil),
    ("gpxpy-track-with-empty-segment.gpx", 9, nil),
    ("gpxpy-around-visnjan-with-car.gpx", 104, nil),
    ("gpxpy-gpx_with_garmin_extension.gpx", 1, nil),
    ("gpxgo-iso8859-1encoded.gpx", 8, nil),
  ])
  func realFilePlays(_ name: String, _ count: Int, _ notice: String?) throws {
    let (world, manager, delegate) = updatingWorld()
    defer { withExtendedLifetime(manager) {} }
    let replay = try world.replay(contentsOf: Self.fixture(name), speed: 10)
    #expect(replay.locationCount == count)
    #expect(replay.leftOutNotice == notice)
    world.advance(by: replay.duration)
    #expect(delegate.locations.count == count)
  }

  /// The route has no times: one location a second, over the speed.
  @Test func untimedRouteIsOneLocationASecond() throws {
    let (world, manager, delegate) = updatingWorld()
    defer { withExtendedLifetime(manager) {} }
    let replay = try world.replay(contentsOf: Self.fixture("gpxpy-route.gpx"), speed: 2)
    #expect(replay.duration == 27)
    world.advance(by: 0.5)
    #expect(delegate.locations.count == 2)
  }

  /// Timed waypoints clicked seconds and kilometres apart: the impossible steps have no speed.
  @Test func impossibleSpeedsAreUnknown() throws {
    let (world, manager, delegate) = updatingWorld()
    defer { withExtendedLifetime(manager) {} }
    let replay = try world.replay(contentsOf: Self.fixture("gpxgo-iso8859-1encoded.gpx"))
    world.advance(by: replay.duration)
    #expect(delegate.locations.count == 8)
    #expect(delegate.locations[1].speed == -1 && delegate.locations[1].course == -1)
    #expect(delegate.locations[5].speed > 0)
  }

  /// Nothing reaches a manager that is not updating, as with `deliver`.
  @Test func stoppedSourceDropsTheReplay() throws {
    let world = SimulatedEnvironment(authorization: .authorizedWhenInUse)
    let replay = try world.replay(contentsOf: Self.fixture("gpxpy-route.gpx"))
    world.advance(by: replay.duration)
    #expect(!world.source.isRunning)
  }

  @Test func missingFileIsLocationUnknownNamingIt() {
    let world = SimulatedEnvironment()
    let path = "/nonexistent/corelocation-tests/hike.gpx"
    let error = #expect(throws: CLError.self) { try world.replay(contentsOf: path) }
    #expect(error?.code == .locationUnknown)
    #expect(error?.localizedDescription.contains(path) == true)
  }
}
