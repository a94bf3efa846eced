import Foundation
import Geodesy
import LocationEngine
import LocationModel
import LocationServices
import LocationSources
import Synchronization
import TestSupport
import Testing

/// `LocationHub` on a `ManualClock`: clients, authorization, sources that fail or end, and real
/// replays on virtual time (minutes of recording in milliseconds, no sleeps).
@Suite struct LocationHubTests {
  static let app = "org.example.tests"
  let clock = ManualClock()

  func makeHub(
    _ sources: LocationHub.Sources, persistence: any HubPersistence = MemoryPersistence(),
    policy: AuthorizationPolicy = .grant
  ) -> LocationHub {
    LocationHub(
      app: Self.app, sources: sources, persistence: persistence, policy: policy, clock: clock)
  }

  // MARK: Clients and authorization

  @Test func newClientIsToldTheAuthorizationAtOnce() {
    let hub = makeHub(.unavailable("none"))
    let client = RecordingClient()
    _ = hub.register(client)
    #expect(
      client.deliveries == [
        .authorization(AuthorizationSnapshot(status: AuthorizationStatus.notDetermined))
      ])
  }

  @Test func grantPolicyAuthorizesOnStartAndDelivers() throws {
    let source = ScriptedSource()
    let persistence = MemoryPersistence()
    let hub = makeHub(.objects { [source] }, persistence: persistence)
    let client = RecordingClient()
    let id = hub.register(client)
    hub.startUpdates(id, UpdateRequest())
    #expect(client.statuses == [.notDetermined, .authorizedWhenInUse])
    #expect(
      persistence.authorization(app: Self.app)?.status == .authorizedWhenInUse,
      "the decision is stored")
    #expect(source.isRunning)
    #expect(hub.runningSources == ["scripted://test"])
    source.emit(fix(52, 5))
    source.emit(fix(52.001, 5, time: 1_767_225_601))
    #expect(client.locations.map(\.latitude) == [52, 52.001])
    #expect(client.locations.allSatisfy { $0.source == "scripted://test" })
    #expect(client.errors.isEmpty)
  }

  @Test func requestAlwaysIsGrantedAndUpgradesWhenInUse() {
    let hub = makeHub(.unavailable("none"))
    let client = RecordingClient()
    _ = hub.register(client)
    hub.requestAuthorization(always: false)
    hub.requestAuthorization(always: true)
    #expect(client.statuses == [.notDetermined, .authorizedWhenInUse, .authorizedAlways])
    #expect(hub.authorization.status == AuthorizationStatus.authorizedAlways)
  }

  @Test func denyPolicyDeniesAndNothingRuns() {
    let source = ScriptedSource()
    let persistence = MemoryPersistence()
    let hub = makeHub(.objects { [source] }, persistence: persistence, policy: .deny)
    let client = RecordingClient()
    let id = hub.register(client)
    hub.startUpdates(id, UpdateRequest())
    #expect(client.statuses == [.notDetermined, .denied])
    #expect(client.errors.map(\.0) == [.denied])
    #expect(source.starts == 0)
    #expect(persistence.authorization(app: Self.app)?.status == AuthorizationStatus.denied)
  }

  @Test func storedGrantWinsOverDenyPolicy() {
    let source = ScriptedSource()
    let persistence = MemoryPersistence()
    persistence.setAuthorization(
      AuthorizationSnapshot(status: AuthorizationStatus.authorizedAlways), app: Self.app)
    let hub = makeHub(.objects { [source] }, persistence: persistence, policy: .deny)
    let client = RecordingClient()
    let id = hub.register(client)
    hub.startUpdates(id, UpdateRequest())
    source.emit(fix(52, 5))
    #expect(client.statuses == [AuthorizationStatus.authorizedAlways])
    #expect(client.locations.count == 1)
  }

  @Test func storedDenialWinsOverGrantPolicy() {
    let source = ScriptedSource()
    let persistence = MemoryPersistence()
    persistence.setAuthorization(
      AuthorizationSnapshot(status: AuthorizationStatus.denied), app: Self.app)
    let hub = makeHub(.objects { [source] }, persistence: persistence, policy: .grant)
    let client = RecordingClient()
    let id = hub.register(client)
    hub.requestAuthorization(always: true)
    hub.startUpdates(id, UpdateRequest())
    #expect(client.statuses == [AuthorizationStatus.denied])
    #expect(client.errors.map(\.0) == [.denied])
    #expect(source.starts == 0)
  }

  @Test func anotherAppsDecisionDoesNotApply() {
    let persistence = MemoryPersistence()
    persistence.setAuthorization(
      AuthorizationSnapshot(status: AuthorizationStatus.denied), app: "org.example.other")
    let hub = makeHub(.unavailable("none"), persistence: persistence)
    #expect(hub.authorization.status == AuthorizationStatus.notDetermined)
  }

  @Test func servicesOffDenies() {
    let source = ScriptedSource()
    let persistence = MemoryPersistence()
    persistence.setServicesEnabled(false)
    let hub = makeHub(.objects { [source] }, persistence: persistence)
    let client = RecordingClient()
    let id = hub.register(client)
    #expect(!hub.authorization.servicesEnabled)
    hub.startUpdates(id, UpdateRequest())
    #expect(client.errors.map(\.0) == [.denied])
    #expect(source.starts == 0)
    #expect(client.locations.isEmpty)
  }

  @Test func withdrawingAuthorizationStopsUpdatesWithDenied() {
    let source = ScriptedSource()
    let hub = makeHub(.objects { [source] })
    let client = RecordingClient()
    let id = hub.register(client)
    hub.startUpdates(id, UpdateRequest())
    source.emit(fix(52, 5))
    hub.setAuthorization(AuthorizationSnapshot(status: AuthorizationStatus.denied))
    source.emit(fix(52.1, 5))
    #expect(client.locations.count == 1)
    #expect(client.errors.map(\.0) == [.denied])
    #expect(!source.isRunning, "no client wants locations: the source stops")
  }

  @Test func turningServicesOffIsStoredAndDenies() {
    let persistence = MemoryPersistence()
    let hub = makeHub(.unavailable("none"), persistence: persistence)
    let client = RecordingClient()
    let id = hub.register(client)
    hub.setAuthorization(
      AuthorizationSnapshot(
        status: AuthorizationStatus.authorizedAlways, servicesEnabled: false))
    #expect(!persistence.servicesEnabled())
    hub.startUpdates(id, UpdateRequest())
    #expect(client.errors.map(\.0) == [.denied])
  }

  // MARK: Sources

  @Test func unavailableSourcesEndWithTheirMessage() {
    let hub = makeHub(.unavailable("configure something"))
    let client = RecordingClient()
    let id = hub.register(client)
    hub.startUpdates(id, UpdateRequest())
    #expect(client.errors.count == 1)
    #expect(client.errors.first?.0 == .sourcesEnded)
    #expect(client.errors.first?.1 == "configure something")
  }

  @Test func unavailableSourcesFailARequestWithTheirMessage() {
    let hub = makeHub(.unavailable("configure something"))
    let client = RecordingClient()
    let id = hub.register(client)
    hub.requestLocation(id, UpdateRequest())
    #expect(client.errors.count == 1)
    #expect(client.errors.first?.0 == .locationUnknown)
    #expect(client.errors.first?.1 == "configure something")
  }

  /// A second client that starts while the first still streams is told too: every client that
  /// starts updates hears either locations or why there are none.
  @Test func unavailableSourcesAreReportedToASecondClient() {
    let hub = makeHub(.unavailable("configure something"))
    let first = RecordingClient()
    let second = RecordingClient()
    hub.startUpdates(hub.register(first), UpdateRequest())
    hub.startUpdates(hub.register(second), UpdateRequest())
    #expect(first.errors.map(\.0) == [.sourcesEnded])
    #expect(second.errors.map(\.0) == [.sourcesEnded])
    #expect(second.errors.first?.1 == "configure something")
  }

  @Test func endedReplayIsReportedToAClientThatStartsLater() {
    let hub = makeHub(
      .urls([.replay(path: Paths.fixture("replay", "north.gpx"), options: .init(instant: true))]))
    let first = RecordingClient()
    hub.startUpdates(hub.register(first), UpdateRequest())
    clock.runDue()
    #expect(first.errors.map(\.0) == [.sourcesEnded])
    let second = RecordingClient()
    hub.startUpdates(hub.register(second), UpdateRequest())
    clock.runDue()
    clock.advance(by: 60)
    #expect(
      second.errors.map(\.0) == [.sourcesEnded] || second.locations.count == 10,
      "the second client heard nothing: \(second.deliveries)")
  }

  @Test func restartingUpdatesAfterTheEndIsAnsweredToo() {
    let hub = makeHub(
      .urls([.replay(path: Paths.fixture("replay", "north.gpx"), options: .init(instant: true))]))
    let client = RecordingClient()
    let id = hub.register(client)
    hub.startUpdates(id, UpdateRequest())
    clock.runDue()
    client.reset()
    hub.startUpdates(id, UpdateRequest(distanceFilter: 5))
    clock.runDue()
    clock.advance(by: 60)
    #expect(
      client.errors.map(\.0) == [.sourcesEnded] || client.locations.count == 10,
      "a restart after the end heard nothing: \(client.deliveries)")
  }

  @Test func requestLocationDeliversOneAndStopsTheSource() {
    let source = ScriptedSource()
    let hub = makeHub(.objects { [source] })
    let client = RecordingClient()
    let id = hub.register(client)
    hub.requestLocation(id, UpdateRequest(desiredAccuracy: 10))
    source.emit(fix(52, 5, accuracy: 5))
    #expect(client.locations.count == 1)
    #expect(!source.isRunning)
    #expect(hub.runningSources.isEmpty)
  }

  @Test func requestLocationTimesOutWithoutAFix() {
    let source = ScriptedSource()
    let hub = makeHub(.objects { [source] })
    let client = RecordingClient()
    let id = hub.register(client)
    hub.requestLocation(id, UpdateRequest())
    clock.advance(by: 9.9)
    #expect(client.errors.isEmpty)
    clock.advance(by: 0.1)
    #expect(client.errors.map(\.0) == [.locationUnknown])
    #expect(!source.isRunning)
  }

  @Test func transientFailureIsLocationUnknownOnceAndUpdatesGoOn() {
    let source = ScriptedSource()
    let hub = makeHub(.objects { [source] })
    let client = RecordingClient()
    let id = hub.register(client)
    hub.startUpdates(id, UpdateRequest())
    source.fail(SourceError(.disconnected, "gpsd went away", isPermanent: false))
    source.fail(SourceError(.disconnected, "gpsd went away", isPermanent: false))
    #expect(client.errors.count == 1)
    #expect(client.errors.first?.0 == .locationUnknown)
    #expect(client.errors.first?.1 == "gpsd went away")
    source.emit(fix(52, 5))
    #expect(client.locations.count == 1)
  }

  @Test func permanentFailureOfEverySourceEndsWithItsMessage() {
    let first = ScriptedSource(url: "scripted://one")
    let second = ScriptedSource(url: "scripted://two")
    let hub = makeHub(.objects { [first, second] })
    let client = RecordingClient()
    let id = hub.register(client)
    hub.startUpdates(id, UpdateRequest())
    first.fail(SourceError(.unavailable, "one is gone", isPermanent: true))
    #expect(!client.errors.contains { $0.0 == .sourcesEnded }, "the other source still runs")
    second.emit(fix(52, 5))
    #expect(client.locations.count == 1)
    second.end()
    #expect(client.errors.last?.0 == .sourcesEnded)
  }

  @Test func stopUpdatesStopsTheSourcesAndDelivery() {
    let source = ScriptedSource()
    let hub = makeHub(.objects { [source] })
    let client = RecordingClient()
    let id = hub.register(client)
    hub.startUpdates(id, UpdateRequest())
    hub.send(.stopUpdates(id))
    #expect(!source.isRunning)
    #expect(source.stops == 1)
    #expect(hub.runningSources.isEmpty)
  }

  @Test func unregisteredClientHearsNothingMore() {
    let source = ScriptedSource()
    let hub = makeHub(.objects { [source] })
    let client = RecordingClient()
    let id = hub.register(client)
    hub.startUpdates(id, UpdateRequest())
    hub.unregister(id)
    source.emit(fix(52, 5))
    #expect(client.locations.isEmpty)
    #expect(!source.isRunning)
  }

  @Test func everyClientGetsEachFixSubjectToItsDistanceFilter() {
    let source = ScriptedSource()
    let hub = makeHub(.objects { [source] })
    let all = RecordingClient()
    let filtered = RecordingClient()
    let first = hub.register(all)
    let second = hub.register(filtered)
    hub.startUpdates(first, UpdateRequest())
    hub.startUpdates(second, UpdateRequest(distanceFilter: 100))
    #expect(source.starts == 1, "one set of sources for every client")
    for step in 0..<10 {
      source.emit(fix(52 + Double(step) * 0.0003, 5, time: 1_767_225_600 + Double(step)))
    }
    #expect(all.locations.count == 10)
    // 0.0003 degrees of latitude is about 33.4 m: fixes 0, 3, 6 and 9 are 100 m or more apart.
    #expect(
      filtered.locations.map(\.latitude)
        == all.locations.map(\.latitude).enumerated()
        .filter { $0.offset % 3 == 0 }.map(\.element))
  }

  @Test func realFixesAreSavedAsLastKnownLocationAndSimulatedOnesAreNot() {
    let source = ScriptedSource()
    let persistence = MemoryPersistence()
    let hub = makeHub(.objects { [source] }, persistence: persistence)
    let id = hub.register(RecordingClient())
    hub.startUpdates(id, UpdateRequest())
    var simulated = fix(10, 10)
    simulated.isSimulated = true
    source.emit(simulated)
    #expect(persistence.lastKnownLocation() == nil)
    source.emit(fix(52, 5))
    #expect(persistence.lastKnownLocation()?.latitude == 52)
  }

  @Test func freshCachedLocationIsDeliveredFirst() {
    let source = ScriptedSource()
    let cached = fix(48, 2, time: clock.now.wall - 60)
    let hub = makeHub(
      .objects { [source] }, persistence: MemoryPersistence(lastKnownLocation: cached))
    let client = RecordingClient()
    let id = hub.register(client)
    hub.startUpdates(id, UpdateRequest())
    #expect(client.locations == [cached])
  }

  /// Issue 15: with an explicit source, the first location could be a cached one from another
  /// source of an earlier run (a static file's position before a replayed track). It is offered
  /// only when one of the sources in use produced it; a replay's options do not count, and a
  /// replay's fixes name their file.
  @Test(arguments: [
    ("static:///etc/geolocation", false),
    ("gpsd://127.0.0.1:2947", false),
    ("/elsewhere/track.gpx", false),
    ("", false),
    ("replay:///data/walk.gpx?speed=10", true),
    ("/data/walk.gpx", true),
    ("/etc/geolocation", false),
  ])
  func cachedLocationOnlyFromASourceInUse(cachedSource: String, offered: Bool) {
    // A static file's fixes name the file, as a replay's do.
    var cached = fix(48, 2, time: clock.now.wall - 60)
    cached.source = cachedSource
    let hub = makeHub(
      .urls([
        .replay(path: "/data/walk.gpx", options: .init()),
        .gpsd(.unix(path: "/nonexistent/gpsd.sock")),
      ]),
      persistence: MemoryPersistence(lastKnownLocation: cached))
    let client = RecordingClient()
    let id = hub.register(client)
    hub.startUpdates(id, UpdateRequest())
    #expect(client.locations == (offered ? [cached] : []))
  }

  // MARK: Replays on virtual time

  /// Offsets (seconds from the start of playing) at which a replay at `speed` emits its fixes.
  static func schedule(of track: ReplayTrack, speed: Double) -> [Double] {
    var offsets: [Double] = []
    var now = 0.0
    for (index, fix) in track.fixes.enumerated() {
      if index > 0 {
        let gap = fix.time - track.fixes[index - 1].time
        now += (gap.isFinite && gap >= 0 ? gap : 1) / speed
      }
      offsets.append(now)
    }
    return offsets
  }

  @Test func replaysTheBundledTrackAtRealTimeOnTheManualClock() throws {
    let track = try ReplayTrack.load(path: Paths.ijsselmeer)
    let offsets = Self.schedule(of: track, speed: 1)
    let hub = makeHub(.urls([.replay(path: Paths.ijsselmeer, options: .init(speed: 1))]))
    let client = RecordingClient()
    let id = hub.register(client)
    hub.startUpdates(id, UpdateRequest())
    #expect(client.locations.count == 1, "the first fix at once")
    clock.advance(by: 60)
    let expected = offsets.filter { $0 <= 60 }.count
    #expect(client.locations.count == expected)
    #expect((55...65).contains(client.locations.count), "a 1 Hz recording: about 60 in 60 s")
    #expect(client.errors.isEmpty)
    // The rest of the recording (2 1/2 minutes) on virtual time.
    clock.advance(by: 3600)
    #expect(client.locations.count == track.fixes.count)
    #expect(client.locations.map(\.time) == track.fixes.map(\.time))
    #expect(client.locations.allSatisfy { $0.isSimulated })
    #expect(
      client.locations.allSatisfy {
        $0.source == "replay://" + Paths.ijsselmeer || $0.source == Paths.ijsselmeer
      })
    #expect(client.errors.map(\.0) == [.sourcesEnded])
    #expect(clock.now.monotonic == 3660)
  }

  @Test func replayAtTenTimesSpeed() throws {
    let track = try ReplayTrack.load(path: Paths.ijsselmeer)
    let offsets = Self.schedule(of: track, speed: 10)
    let hub = makeHub(.urls([.replay(path: Paths.ijsselmeer, options: .init(speed: 10))]))
    let client = RecordingClient()
    let id = hub.register(client)
    hub.startUpdates(id, UpdateRequest())
    clock.advance(by: 6)
    #expect(client.locations.count == offsets.filter { $0 <= 6 }.count)
    #expect(client.locations.count > 50)
  }

  @Test func instantReplayDeliversEverythingWithoutTimePassing() throws {
    let hub = makeHub(
      .urls([.replay(path: Paths.fixture("replay", "north.gpx"), options: .init(instant: true))]))
    let client = RecordingClient()
    let id = hub.register(client)
    hub.startUpdates(id, UpdateRequest())
    clock.runDue()
    #expect(client.locations.count == 10)
    #expect(client.errors.map(\.0) == [.sourcesEnded])
    #expect(client.errors.first?.1 == nil)
    #expect(clock.now.monotonic == 0)
  }

  @Test func replayThatEndsCanBeStartedAgain() throws {
    let hub = makeHub(
      .urls([.replay(path: Paths.fixture("replay", "north.gpx"), options: .init(instant: true))]))
    let client = RecordingClient()
    let id = hub.register(client)
    hub.startUpdates(id, UpdateRequest())
    clock.runDue()
    hub.send(.stopUpdates(id))
    hub.startUpdates(id, UpdateRequest())
    clock.runDue()
    #expect(client.locations.count == 20)
    #expect(client.errors.map(\.0) == [.sourcesEnded, .sourcesEnded])
  }

  @Test func missingReplayFileNamesTheFile() {
    let path = "/nonexistent/corelocation-tests/ride.gpx"
    let hub = makeHub(.urls([.replay(path: path, options: .init())]))
    let client = RecordingClient()
    let id = hub.register(client)
    hub.startUpdates(id, UpdateRequest())
    let last = client.errors.last
    #expect(last?.0 == .sourcesEnded)
    #expect(last?.1?.contains(path) == true, "message: \(last?.1 ?? "none")")
    #expect(client.locations.isEmpty)
  }

  /// When the only source fails for good, the client hears that the sources ended, not first a
  /// "temporary" `locationUnknown` ("still trying") immediately followed by the end.
  @Test func permanentFailureOfTheOnlySourceIsOneError() {
    let path = "/nonexistent/corelocation-tests/ride.gpx"
    let hub = makeHub(.urls([.replay(path: path, options: .init())]))
    let client = RecordingClient()
    let id = hub.register(client)
    hub.startUpdates(id, UpdateRequest())
    #expect(client.errors.map(\.0) == [.sourcesEnded])
  }

  @Test func missingReplayFileFailsARequestNamingTheFile() {
    let path = "/nonexistent/corelocation-tests/ride.gpx"
    let hub = makeHub(.urls([.replay(path: path, options: .init())]))
    let client = RecordingClient()
    let id = hub.register(client)
    hub.requestLocation(id, UpdateRequest())
    #expect(client.errors.count == 1)
    #expect(client.errors.first?.0 == .locationUnknown)
    #expect(client.errors.first?.1?.contains(path) == true)
  }

  @Test func staticFileIsDeliveredAndRepeated() {
    let path = Paths.fixture("static", "good")
    let hub = makeHub(.urls([.staticFile(path: path)]))
    let client = RecordingClient()
    let id = hub.register(client)
    hub.startUpdates(id, UpdateRequest())
    #expect(client.locations.map(\.latitude) == [48.8584])
    #expect(client.locations.first?.time == clock.now.wall)
    clock.advance(by: 120)
    #expect(client.locations.count == 3)
    #expect(!client.locations.contains { $0.isSimulated })
  }

  @Test func badStaticFileEndsWithFileAndLine() {
    let path = Paths.fixture("static", "latitude91")
    let hub = makeHub(.urls([.staticFile(path: path)]))
    let client = RecordingClient()
    let id = hub.register(client)
    hub.startUpdates(id, UpdateRequest())
    #expect(client.errors.last?.0 == .sourcesEnded)
    #expect(client.errors.last?.1?.contains(path + ":2") == true)
  }
}

/// `ManualClock`: nothing happens until `advance`, which runs due actions in order.
@Suite struct ManualClockTests {
  /// Records tags from actions.
  final class Log: Sendable {
    private let tags = Mutex<[Int]>([])
    func append(_ tag: Int) { tags.withLock { $0.append(tag) } }
    var all: [Int] { tags.withLock { $0 } }
  }

  @Test func runsDueActionsInDeadlineOrderAndMovesBothClocks() {
    let clock = ManualClock(wall: 1000)
    let log = Log()
    for (deadline, tag) in [(3.0, 3), (1.0, 1), (2.0, 2), (1.0, 11)] {
      _ = clock.schedule(at: deadline) { log.append(tag) }
    }
    #expect(clock.pendingCount == 4)
    #expect(log.all.isEmpty, "nothing runs until the clock is advanced")
    clock.advance(by: 1.5)
    #expect(log.all == [1, 11])
    #expect(clock.now == EngineInstant(monotonic: 1.5, wall: 1001.5))
    clock.advance(by: 10)
    #expect(log.all == [1, 11, 2, 3])
    #expect(clock.pendingCount == 0)
    #expect(clock.now == EngineInstant(monotonic: 11.5, wall: 1011.5))
  }

  @Test func actionsSeeTheirOwnDeadlineAsNow() {
    let clock = ManualClock(wall: 0)
    let log = Log()
    _ = clock.schedule(at: 7) { log.append(Int(clock.now.monotonic)) }
    clock.advance(by: 100)
    #expect(log.all == [7])
  }

  @Test func cancelledActionsDoNotRun() {
    let clock = ManualClock()
    let log = Log()
    let token = clock.schedule(at: 1) { log.append(1) }
    token.cancel()
    clock.advance(by: 5)
    #expect(log.all.isEmpty)
    #expect(clock.pendingCount == 0)
  }

  @Test func actionsScheduledByActionsRunWithinTheSpan() {
    let clock = ManualClock()
    let log = Log()
    _ = clock.schedule(at: 1) {
      log.append(1)
      _ = clock.schedule(at: clock.now.monotonic + 1) { log.append(2) }
      _ = clock.schedule(at: clock.now.monotonic + 5) { log.append(6) }
    }
    clock.advance(by: 2)
    #expect(log.all == [1, 2])
    _ = clock.schedule(at: 0) { log.append(0) }
    clock.runDue()
    #expect(log.all == [1, 2, 0], "a deadline in the past runs at once")
    #expect(clock.now.monotonic == 2)
  }
}
