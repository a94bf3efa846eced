import CoreLocation
import CoreLocationTesting
import Foundation
import Testing

/// A delegate that records the region states a manager is told.
private final class StateDelegate: NSObject, CLLocationManagerDelegate, @unchecked Sendable {
  // @unchecked: the simulated environment calls it on the test's thread only.
  var calls: [String] = []

  func locationManager(
    _ manager: CLLocationManager, didDetermineState state: CLRegionState, for region: CLRegion
  ) {
    calls.append("\(region.identifier) \(state.rawValue)")
  }
}

@Suite struct CLMonitorTests {
  static let center = CLLocationCoordinate2D(latitude: 52.0, longitude: 5.0)
  static let home = CLMonitor.CircularGeographicCondition(center: center, radius: 100)

  /// A location `metres` north of the centre (1° of latitude at 52° is 111,258 m on WGS-84).
  func location(_ world: SimulatedEnvironment, north metres: Double, accuracy: Double = 5)
    -> CLLocation
  {
    CLLocation(
      coordinate: CLLocationCoordinate2D(
        latitude: Self.center.latitude + metres / 111_258.0, longitude: Self.center.longitude),
      altitude: 0, horizontalAccuracy: accuracy, verticalAccuracy: -1, timestamp: world.now)
  }

  func monitor(_ world: SimulatedEnvironment, _ name: String = "test") async -> CLMonitor {
    await world.runAsync { await CLMonitor(name) }
  }

  /// Reads every event queued now: a reader whose task is cancelled still gets the queued events,
  /// then `nil`.
  func drain(_ monitor: CLMonitor) async throws -> [CLMonitor.Event] {
    let events = await monitor.events
    let reader = Task {
      var read: [CLMonitor.Event] = []
      for try await event in events { read.append(event) }
      return read
    }
    reader.cancel()
    return try await reader.value
  }

  func states(_ events: [CLMonitor.Event]) -> [String] {
    events.map { "\($0.identifier) \($0.state.rawValue)" }
  }

  @Test func circularConditionReportsChangesOfState() async throws {
    let world = SimulatedEnvironment(authorization: .authorizedAlways)
    let monitor = await monitor(world)
    await monitor.add(Self.home, identifier: "home")
    world.pump()
    #expect(world.source.isRunning)
    let start = world.now
    world.deliver(location(world, north: 0))
    world.advance(by: 10)
    world.deliver(location(world, north: 102))  // between the two thresholds: no evidence
    world.deliver(location(world, north: 110))
    world.advance(by: 10)
    world.deliver(location(world, north: 20))
    world.deliver(location(world, north: 30))  // agrees: no event
    let events = try await drain(monitor)
    // 1 satisfied, 2 unsatisfied
    #expect(states(events) == ["home 1", "home 2", "home 1"])
    #expect(events.map(\.date) == [start, start + 10, start + 20])
    #expect(events.allSatisfy { $0.refinement == nil && !$0.authorizationDenied })
    #expect(await monitor.record(for: "home")?.lastEvent.state == .satisfied)
  }

  /// The boundary rule with accuracy larger than the hysteresis: unsatisfied needs d >= r + a.
  @Test(arguments: [(north: 119.0, changes: false), (north: 121.0, changes: true)])
  func accuracyWidensTheBand(north: Double, changes: Bool) async throws {
    let world = SimulatedEnvironment(authorization: .authorizedAlways)
    let monitor = await monitor(world)
    await monitor.add(Self.home, identifier: "home")
    world.pump()
    world.deliver(location(world, north: 0))
    world.deliver(location(world, north: north, accuracy: 20))
    let events = try await drain(monitor)
    #expect(states(events) == (changes ? ["home 1", "home 2"] : ["home 1"]))
  }

  @Test func aWaitingReaderIsHandedEventsAsTheyHappen() async throws {
    let world = SimulatedEnvironment(authorization: .authorizedAlways)
    let monitor = await monitor(world)
    await monitor.add(Self.home, identifier: "home")
    world.pump()
    let events = await monitor.events
    let reader = Task {
      var read: [CLMonitor.Event.State] = []
      for try await event in events {
        read.append(event.state)
        if read.count == 2 { break }
      }
      return read
    }
    world.deliver(location(world, north: 0))
    world.deliver(location(world, north: 500))
    #expect(try await reader.value == [.satisfied, .unsatisfied])
  }

  @Test func recordsHoldTheConditionAndTheLastEvent() async throws {
    let world = SimulatedEnvironment(authorization: .authorizedAlways)
    let monitor = await monitor(world)
    #expect(await monitor.record(for: "home") == nil)
    await monitor.add(Self.home, identifier: "home")
    world.pump()
    let before = try #require(await monitor.record(for: "home"))
    let condition = try #require(before.condition as? CLMonitor.CircularGeographicCondition)
    #expect(condition.center.latitude == 52 && condition.center.longitude == 5)
    #expect(condition.radius == 100)
    #expect(before.lastEvent.state == .unknown)
    #expect(before.lastEvent.identifier == "home")
    world.deliver(location(world, north: 800))
    #expect(await monitor.record(for: "home")?.lastEvent.state == .unsatisfied)
  }

  @Test func replacedByIdentifierKeepingItsPlace() async throws {
    let world = SimulatedEnvironment(authorization: .authorizedAlways)
    let monitor = await monitor(world)
    await monitor.add(Self.home, identifier: "home")
    await monitor.add(Self.home, identifier: "other")
    await monitor.add(
      CLMonitor.CircularGeographicCondition(center: Self.center, radius: 1_000), identifier: "home")
    world.pump()
    #expect(await monitor.identifiers == ["home", "other"])
    let record = try #require(await monitor.record(for: "home"))
    #expect((record.condition as? CLMonitor.CircularGeographicCondition)?.radius == 1_000)
    world.deliver(location(world, north: 500))
    #expect(Set(states(try await drain(monitor))) == ["home 1", "other 2"])
  }

  @Test func removedConditionsAreForgottenAndSilent() async throws {
    let world = SimulatedEnvironment(authorization: .authorizedAlways)
    let monitor = await monitor(world)
    await monitor.add(Self.home, identifier: "home")
    await monitor.add(Self.home, identifier: "other")
    world.pump()
    await monitor.remove("home")
    await monitor.remove("missing")  // nothing to remove: no effect
    world.pump()
    #expect(await monitor.identifiers == ["other"])
    #expect(await monitor.record(for: "home") == nil)
    world.deliver(location(world, north: 0))
    #expect(states(try await drain(monitor)) == ["other 1"])
    await monitor.remove("other")
    world.pump()
    #expect(!world.source.isRunning)  // nothing left to monitor
  }

  /// `assuming:` sets the initial state: a first location that agrees is no event, one that
  /// disagrees is reported.
  @Test(arguments: [
    (assumed: CLMonitor.Event.State.satisfied, north: 0.0, expected: [String]()),
    (assumed: .satisfied, north: 500.0, expected: ["home 2"]),
    (assumed: .unsatisfied, north: 500.0, expected: []),
    (assumed: .unsatisfied, north: 0.0, expected: ["home 1"]),
    (assumed: .unknown, north: 0.0, expected: ["home 1"]),
  ])
  func assumingSetsTheInitialState(
    assumed: CLMonitor.Event.State, north: Double, expected: [String]
  ) async throws {
    let world = SimulatedEnvironment(authorization: .authorizedAlways)
    let monitor = await monitor(world)
    await monitor.add(Self.home, identifier: "home", assuming: assumed)
    world.pump()
    #expect(await monitor.record(for: "home")?.lastEvent.state == assumed)
    world.deliver(location(world, north: north))
    #expect(states(try await drain(monitor)) == expected)
  }

  /// A restart: a monitor of the same name on the same store finds its conditions and their last
  /// states, and a crossing that happened meanwhile is reported at the first decisive location.
  @Test func conditionsSurviveARestartByName() async throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "monitor-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: directory) }
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let path = directory.appendingPathComponent("store.sqlite").path
    do {
      let world = SimulatedEnvironment(authorization: .authorizedAlways, storePath: path)
      #expect(world.isPersistent)
      let monitor = await monitor(world, "work")
      await monitor.add(Self.home, identifier: "home")
      await monitor.add(Self.home, identifier: "gone")
      await monitor.remove("gone")
      world.pump()
      world.deliver(location(world, north: 0))
      #expect(states(try await drain(monitor)) == ["home 1"])
    }
    let world = SimulatedEnvironment(storePath: path)
    let other = await monitor(world, "elsewhere")
    #expect(await other.identifiers.isEmpty)
    let monitor = await monitor(world, "work")
    #expect(await monitor.identifiers == ["home"])
    let record = try #require(await monitor.record(for: "home"))
    #expect(record.lastEvent.state == .satisfied)
    #expect((record.condition as? CLMonitor.CircularGeographicCondition)?.radius == 100)
    world.pump()
    world.deliver(location(world, north: 10))  // agrees with the stored state: no event
    world.deliver(location(world, north: 800))
    #expect(states(try await drain(monitor)) == ["home 2"])
    #expect(try await drain(other).isEmpty)
  }

  /// The state given to `assuming:` is stored: after a restart, a location that agrees with it is
  /// still no event.
  @Test func anAssumedStateIsKeptInTheStore() async throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "monitor-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: directory) }
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let path = directory.appendingPathComponent("store.sqlite").path
    do {
      let world = SimulatedEnvironment(authorization: .authorizedAlways, storePath: path)
      let monitor = await monitor(world, "work")
      await monitor.add(Self.home, identifier: "home", assuming: .satisfied)
      world.pump()
    }
    let world = SimulatedEnvironment(storePath: path)
    let monitor = await monitor(world, "work")
    #expect(await monitor.record(for: "home")?.lastEvent.state == .satisfied)
    world.pump()
    world.deliver(location(world, north: 0))
    world.deliver(location(world, north: 800))
    #expect(states(try await drain(monitor)) == ["home 2"])
  }

  /// A condition added while the monitor already has a location is decided against it at once.
  @Test func aConditionAddedAfterALocationIsDecidedAtOnce() async throws {
    let world = SimulatedEnvironment(authorization: .authorizedAlways)
    let monitor = await monitor(world)
    await monitor.add(Self.home, identifier: "home")
    world.pump()
    world.deliver(location(world, north: 500))
    await monitor.add(Self.home, identifier: "agrees", assuming: .unsatisfied)
    await monitor.add(Self.home, identifier: "disagrees", assuming: .satisfied)
    world.pump()
    #expect(states(try await drain(monitor)) == ["home 2", "disagrees 2"])
  }

  @Test func aSecondMonitorOfANameWaitsForTheFirst() async throws {
    let world = SimulatedEnvironment(authorization: .authorizedAlways)
    var first: CLMonitor? = await monitor(world, "shared")
    await first?.add(Self.home, identifier: "home")
    world.pump()
    world.deliver(location(world, north: 0))
    let opening = Task { await monitor(world, "shared") }
    first = nil
    let second = await opening.value
    #expect(await second.identifiers == ["home"])
    #expect(await second.record(for: "home")?.lastEvent.state == .satisfied)
  }

  @Test func monitorsOfDifferentNamesAreIndependent() async throws {
    let world = SimulatedEnvironment(authorization: .authorizedAlways)
    let small = await monitor(world, "small")
    let large = await monitor(world, "large")
    await small.add(Self.home, identifier: "home")
    await large.add(
      CLMonitor.CircularGeographicCondition(center: Self.center, radius: 1_000), identifier: "home")
    world.pump()
    world.deliver(location(world, north: 500))
    #expect(states(try await drain(small)) == ["home 2"])
    #expect(states(try await drain(large)) == ["home 1"])
    await small.remove("home")
    world.pump()
    #expect(await large.identifiers == ["home"])
    world.deliver(location(world, north: 2_000))
    #expect(try await drain(small).isEmpty)
    #expect(states(try await drain(large)) == ["home 2"])
  }

  @Test func managerRegionsAndMonitorConditionsDoNotMix() async throws {
    let world = SimulatedEnvironment(authorization: .authorizedAlways)
    let delegate = StateDelegate()
    let manager = world.run { CLLocationManager() }
    manager.delegate = delegate
    manager.startMonitoring(
      for: CLCircularRegion(center: Self.center, radius: 100, identifier: "home"))
    let monitor = await monitor(world)
    await monitor.add(
      CLMonitor.CircularGeographicCondition(center: Self.center, radius: 1_000), identifier: "home")
    await monitor.add(Self.home, identifier: "monitorOnly")
    world.pump()
    world.deliver(location(world, north: 500))
    #expect(delegate.calls == ["home 2"])  // CLRegionState.outside
    #expect(Set(states(try await drain(monitor))) == ["home 1", "monitorOnly 2"])
    #expect(manager.monitoredRegions.map(\.identifier) == ["home"])
    #expect(await monitor.identifiers == ["home", "monitorOnly"])
    manager.stopMonitoring(
      for: CLCircularRegion(center: Self.center, radius: 1, identifier: "home"))
    world.pump()
    #expect(await monitor.identifiers == ["home", "monitorOnly"])
    world.deliver(location(world, north: 5_000))
    #expect(delegate.calls == ["home 2"])
    #expect(states(try await drain(monitor)) == ["home 2"])
  }

  @Test func beaconConditionsAreMonitored() async throws {
    let world = SimulatedEnvironment(authorization: .authorizedAlways)
    let monitor = await monitor(world)
    let uuid = UUID()
    let beacon = CLMonitor.BeaconIdentityCondition(uuid: uuid, major: 1, minor: 2)
    await monitor.add(beacon, identifier: "beacon")
    world.pump()
    // The radio scans while a beacon condition is monitored; the receiver's locations are not
    // needed for it.
    #expect(world.source.isRunning)
    world.placeBeacon(uuid: uuid, major: 1, minor: 2, rssi: -65)
    world.advance(by: 1)
    let satisfied = try await drain(monitor)
    #expect(satisfied.map(\.identifier) == ["beacon"])
    #expect(satisfied.first?.state == .satisfied)
    #expect(satisfied.first?.conditionUnsupported == false)
    let record = try #require(await monitor.record(for: "beacon"))
    #expect((record.condition as? CLMonitor.BeaconIdentityCondition)?.major == 1)
    #expect(record.lastEvent.state == .satisfied)
    world.placedBeacons.first?.remove()
    world.advance(by: 31)
    #expect(try await drain(monitor).first?.state == .unsatisfied)
  }

  @Test func beaconConditionsWithoutARadioAreUnsupported() async throws {
    let world = SimulatedEnvironment(authorization: .authorizedAlways, beaconsAvailable: false)
    let monitor = await monitor(world)
    await monitor.add(CLMonitor.BeaconIdentityCondition(uuid: UUID()), identifier: "beacon")
    world.pump()
    let events = try await drain(monitor)
    #expect(events.first?.state == .unmonitored)
    #expect(events.first?.conditionUnsupported == true)
    #expect(!world.source.isRunning)
  }

  @Test func aBeaconReplacingACircleStopsItsMonitoring() async throws {
    let world = SimulatedEnvironment(authorization: .authorizedAlways)
    let monitor = await monitor(world)
    await monitor.add(Self.home, identifier: "home")
    world.pump()
    await monitor.add(CLMonitor.BeaconIdentityCondition(uuid: UUID()), identifier: "home")
    world.pump()
    world.deliver(location(world, north: 0))
    // The location says nothing of a beacon condition: no event until 30 s without the beacon.
    #expect(try await drain(monitor).isEmpty)
    world.advance(by: 30)
    #expect(states(try await drain(monitor)) == ["home 2"])
  }

  @Test(arguments: [
    (radius: 0.0, latitude: 52.0, identifier: "zero"),
    (radius: -5.0, latitude: 52.0, identifier: "negative"),
    (radius: .nan, latitude: 52.0, identifier: "nan"),
    (radius: 2_000_000.0, latitude: 52.0, identifier: "huge"),
    (radius: 100.0, latitude: 91.0, identifier: "badcentre"),
  ])
  func invalidCirclesAreUnmonitored(radius: Double, latitude: Double, identifier: String)
    async throws
  {
    let world = SimulatedEnvironment(authorization: .authorizedAlways)
    let monitor = await monitor(world)
    await monitor.add(Self.home, identifier: "home")
    await monitor.add(
      CLMonitor.CircularGeographicCondition(
        center: CLLocationCoordinate2D(latitude: latitude, longitude: 5), radius: radius),
      identifier: identifier)
    world.pump()
    let events = try await drain(monitor)
    #expect(states(events) == ["\(identifier) 3"])
    #expect(events.first?.conditionUnsupported == true)
    #expect(await monitor.identifiers == ["home", identifier])
    world.deliver(location(world, north: 0))
    #expect(states(try await drain(monitor)) == ["home 1"])
  }

  /// A denied app's condition gets an event saying so; it is monitored once the app is authorized.
  @Test func deniedAppIsToldAndMonitoredOnceAuthorized() async throws {
    let world = SimulatedEnvironment(authorization: .denied)
    let monitor = await monitor(world)
    await monitor.add(Self.home, identifier: "home", assuming: .unsatisfied)
    world.pump()
    let denied = try await drain(monitor)
    #expect(states(denied) == ["home 2"])
    #expect(denied.first?.authorizationDenied == true)
    #expect(denied.first?.authorizationDeniedGlobally == false)
    #expect(await monitor.identifiers == ["home"])
    #expect(!world.source.isRunning)
    world.setAuthorization(.authorizedAlways)
    let allowed = try await drain(monitor)
    #expect(states(allowed) == ["home 2"])
    #expect(allowed.first?.authorizationDenied == false)
    world.deliver(location(world, north: 0))
    #expect(states(try await drain(monitor)) == ["home 1"])
  }

  @Test func aPolicyDenialIsReportedOnce() async throws {
    let world = SimulatedEnvironment(policyGrants: false)
    let monitor = await monitor(world)
    await monitor.add(Self.home, identifier: "home")
    world.pump()
    let events = try await drain(monitor)
    #expect(events.count == 1)
    #expect(events.first?.authorizationDenied == true)
  }

  @Test func revokingAuthorizationFlagsEveryCondition() async throws {
    let world = SimulatedEnvironment(authorization: .authorizedAlways)
    let monitor = await monitor(world)
    await monitor.add(Self.home, identifier: "home")
    await monitor.add(CLMonitor.BeaconIdentityCondition(uuid: UUID()), identifier: "beacon")
    world.pump()
    world.deliver(location(world, north: 0))
    _ = try await drain(monitor)
    world.setAuthorization(.denied)
    let denied = try await drain(monitor)
    #expect(states(denied) == ["home 1", "beacon 0"])
    #expect(denied.first?.authorizationDenied == true)
    world.setLocationServicesEnabled(false)
    let global = try await drain(monitor)
    #expect(global.first?.authorizationDeniedGlobally == true)
    #expect(global.first?.authorizationDenied == false)
  }

  @Test func reducedAccuracyIsFlagged() async throws {
    let world = SimulatedEnvironment(authorization: .authorizedAlways, accuracy: .reducedAccuracy)
    let monitor = await monitor(world)
    await monitor.add(Self.home, identifier: "home")
    world.pump()
    #expect(await monitor.record(for: "home")?.lastEvent.accuracyLimited == true)
  }

  /// Nobody reads: the newest 4,096 events are kept, the oldest dropped.
  @Test func theEventQueueKeepsTheNewest() async throws {
    let world = SimulatedEnvironment(authorization: .authorizedAlways)
    let monitor = await monitor(world)
    await monitor.add(Self.home, identifier: "home")
    world.pump()
    let count = 4_100
    world.deliver((0..<count).map { location(world, north: $0 % 2 == 0 ? 0 : 500) })
    let events = try await drain(monitor)
    #expect(events.count == 4_096)
    // Every fix changes the state; the four oldest events (fixes 0 to 3) were dropped.
    #expect(events.first?.state == .satisfied)
    #expect(events.last?.state == .unsatisfied)
  }

  @Test func conditionsAreCodable() throws {
    let circle = CLMonitor.CircularGeographicCondition(center: Self.center, radius: 250)
    let data = try JSONEncoder().encode(circle)
    let decoded = try JSONDecoder().decode(CLMonitor.CircularGeographicCondition.self, from: data)
    #expect(decoded.center.latitude == 52 && decoded.center.longitude == 5)
    #expect(decoded.radius == 250)
    let uuid = UUID()
    let wildcard = try JSONDecoder().decode(
      CLMonitor.BeaconIdentityCondition.self,
      from: try JSONEncoder().encode(CLMonitor.BeaconIdentityCondition(uuid: uuid, major: 7)))
    #expect(wildcard.uuid == uuid && wildcard.major == 7 && wildcard.minor == nil)
    #expect(throws: DecodingError.self) {
      try JSONDecoder().decode(
        CLMonitor.CircularGeographicCondition.self, from: Data(#"{"radius": 1}"#.utf8))
    }
  }
}

/// Compiled, not run: apps read events from the main actor, and that must build in Swift 6 mode.
@MainActor private func firstStateOnTheMainActor(_ monitor: CLMonitor) async throws
  -> CLMonitor.Event.State?
{
  for try await event in await monitor.events {
    switch event.state {
    case .satisfied, .unsatisfied, .unknown, .unmonitored: return event.state
    }
  }
  return nil
}
