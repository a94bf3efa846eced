import Geodesy
import LocationModel
import Testing

@testable import LocationEngine

/// Drives the engine's step function directly: every rule on a hand-made clock.
@Suite struct LocationEngineTests {
  static let origin = EngineInstant(monotonic: 100, wall: 1_767_225_600)
  let client = ClientID(1)

  func fix(
    _ latitude: Double, _ longitude: Double, accuracy: Double = 5, time: Double = 1_767_225_600
  )
    -> Fix
  {
    Fix(latitude: latitude, longitude: longitude, horizontalAccuracy: accuracy, time: time)
  }

  func delivered(_ effects: [EngineEffect]) -> [Fix] {
    effects.flatMap { effect -> [Fix] in
      if case .deliverLocations(_, let fixes) = effect { return fixes }
      return []
    }
  }

  func errors(_ effects: [EngineEffect]) -> [EngineError] {
    effects.compactMap { effect in
      if case .deliverError(_, let error) = effect { return error }
      return nil
    }
  }

  /// `maximumRegionCount` counts every group; a replacement is not a new region, and a removal
  /// frees a place.
  @Test func theRegionLimitCountsEveryGroupAndNotReplacements() {
    var engine = LocationEngine(allowed: true)
    engine.maximumRegionCount = 2
    func add(_ identifier: String, _ group: String) -> [EngineEffect] {
      engine.handle(
        .addRegion(
          group: group,
          RegionSpec(identifier: identifier, latitude: 52, longitude: 5, radius: 100),
          initialState: .unknown, requester: client),
        at: Self.origin)
    }
    func rejected(_ effects: [EngineEffect]) -> String? {
      for effect in effects {
        if case .regionRejected(_, _, .invalid(let message), _) = effect { return message }
      }
      return nil
    }
    #expect(rejected(add("a", "manager")) == nil)
    #expect(rejected(add("b", "monitor:x")) == nil)
    #expect(rejected(add("c", "manager"))?.contains("at most 2 regions") == true)
    #expect(rejected(add("a", "manager")) == nil, "a replacement")
    _ = engine.handle(.removeRegion(group: "monitor:x", identifier: "b"), at: Self.origin)
    #expect(rejected(add("c", "manager")) == nil)
    #expect(engine.regionSpecs(group: "manager").map(\.identifier) == ["a", "c"])
    _ = engine.handle(.removeRegion(group: "manager", identifier: "c"), at: Self.origin)
    // A monitor's name: 248 bytes are accepted, 249 are not.
    let name = String(repeating: "n", count: 248)
    #expect(rejected(add("d", "monitor:" + name)) == nil)
    _ = engine.handle(.removeRegion(group: "monitor:" + name, identifier: "d"), at: Self.origin)
    #expect(rejected(add("d", "monitor:n" + name))?.contains("at most 248") == true)
  }

  @Test func startDemandsSourcesAndDeliversEveryFixWithoutFilter() {
    var engine = LocationEngine(allowed: true)
    _ = engine.handle(.addClient(client), at: Self.origin)
    let started = engine.handle(.startUpdates(client, UpdateRequest()), at: Self.origin)
    #expect(started.contains(.demandSources(accuracy: -1)))
    for index in 0..<5 {
      let effects = engine.handle(.fix(fix(48.0, 2.0 + Double(index) * 1e-7)), at: Self.origin)
      #expect(delivered(effects).count == 1)
    }
    let stopped = engine.handle(.stopUpdates(client), at: Self.origin)
    #expect(stopped.contains(.demandSources(accuracy: nil)))
    #expect(delivered(engine.handle(.fix(fix(48, 2)), at: Self.origin)).isEmpty)
  }

  /// The distance filter compares with the last delivered location, not the last fix.
  @Test(arguments: [
    (
      filter: 100.0, steps: [50.0, 99.0, 101.0, 150.0, 250.0],
      expected: [true, false, false, true, false, true]
    )
  ])
  func distanceFilter(filter: Double, steps: [Double], expected: [Bool]) {
    var engine = LocationEngine(allowed: true)
    _ = engine.handle(.startUpdates(client, UpdateRequest(distanceFilter: filter)), at: Self.origin)
    // Metres north of the first point: 1 degree of latitude at 0° is 110,574 m (WGS-84).
    var results: [Bool] = []
    results.append(!delivered(engine.handle(.fix(fix(0, 0)), at: Self.origin)).isEmpty)
    for metres in steps {
      let latitude = metres / 110_574.272
      results.append(!delivered(engine.handle(.fix(fix(latitude, 0)), at: Self.origin)).isEmpty)
    }
    #expect(results == expected)
  }

  @Test func invalidFixesAreDroppedAndCounted() {
    var engine = LocationEngine(allowed: true)
    _ = engine.handle(.startUpdates(client, UpdateRequest()), at: Self.origin)
    for bad in [fix(91, 0), fix(.nan, 0), fix(0, 181), fix(0, 0, accuracy: -1)] {
      #expect(delivered(engine.handle(.fix(bad), at: Self.origin)).isEmpty)
    }
    #expect(engine.droppedFixes == 4)
  }

  @Test func requestLocationCompletesOnAccurateFix() {
    var engine = LocationEngine(allowed: true)
    _ = engine.handle(
      .sourcesChanged([SourceInfo(name: "gps", nominalAccuracy: 3)]), at: Self.origin)
    let asked = engine.handle(
      .requestLocation(client, UpdateRequest(desiredAccuracy: 10)), at: Self.origin)
    #expect(
      asked.contains(.armTimer(.requestTimeout(client), deadline: Self.origin.monotonic + 10)))
    #expect(delivered(engine.handle(.fix(fix(1, 1, accuracy: 50)), at: Self.origin)).isEmpty)
    let done = engine.handle(.fix(fix(1, 1, accuracy: 8)), at: Self.origin)
    #expect(delivered(done).count == 1)
    #expect(done.contains(.cancelTimer(.requestTimeout(client))))
    #expect(done.contains(.demandSources(accuracy: nil)))
    #expect(delivered(engine.handle(.fix(fix(1, 1, accuracy: 1)), at: Self.origin)).isEmpty)
  }

  @Test func requestLocationTakesFixNoSourceCanImprove() {
    var engine = LocationEngine(allowed: true)
    _ = engine.handle(
      .sourcesChanged([SourceInfo(name: "static", nominalAccuracy: 1000)]), at: Self.origin)
    _ = engine.handle(.requestLocation(client, UpdateRequest(desiredAccuracy: -1)), at: Self.origin)
    #expect(delivered(engine.handle(.fix(fix(1, 1, accuracy: 1000)), at: Self.origin)).count == 1)
  }

  @Test func requestLocationTimeoutDeliversBestOrFails() {
    var engine = LocationEngine(allowed: true)
    _ = engine.handle(
      .sourcesChanged([SourceInfo(name: "gps", nominalAccuracy: 3)]), at: Self.origin)
    _ = engine.handle(.requestLocation(client, UpdateRequest(desiredAccuracy: 5)), at: Self.origin)
    _ = engine.handle(.fix(fix(1, 1, accuracy: 80)), at: Self.origin)
    _ = engine.handle(.fix(fix(2, 2, accuracy: 40)), at: Self.origin)
    _ = engine.handle(.fix(fix(3, 3, accuracy: 60)), at: Self.origin)
    let timedOut = engine.handle(
      .timerFired(.requestTimeout(client)), at: Self.origin.advanced(by: 10))
    #expect(delivered(timedOut).map(\.latitude) == [2])

    _ = engine.handle(.requestLocation(client, UpdateRequest(desiredAccuracy: 5)), at: Self.origin)
    let empty = engine.handle(
      .timerFired(.requestTimeout(client)), at: Self.origin.advanced(by: 10))
    #expect(errors(empty) == [.locationUnknown])
  }

  /// Apple: "Calling this method while location services are already running does nothing."
  @Test func requestLocationWhileStreamingDoesNothing() {
    var engine = LocationEngine(allowed: true)
    _ = engine.handle(.startUpdates(client, UpdateRequest()), at: Self.origin)
    let effects = engine.handle(.requestLocation(client, UpdateRequest()), at: Self.origin)
    #expect(effects.isEmpty)
    #expect(delivered(engine.handle(.fix(fix(1, 1)), at: Self.origin)).count == 1)
    #expect(delivered(engine.handle(.fix(fix(1, 1)), at: Self.origin)).count == 1)
  }

  @Test func freshCachedLocationIsDeliveredFirstAndStaleOneIsNot() {
    let cached = fix(10, 10, time: Self.origin.wall - 60)
    var engine = LocationEngine(allowed: true, cachedLocation: cached)
    let effects = engine.handle(.startUpdates(client, UpdateRequest()), at: Self.origin)
    #expect(delivered(effects) == [cached])

    var stale = LocationEngine(
      allowed: true, cachedLocation: fix(10, 10, time: Self.origin.wall - 301))
    #expect(
      delivered(stale.handle(.startUpdates(client, UpdateRequest()), at: Self.origin)).isEmpty)
  }

  @Test func deniedClientGetsDeniedAndNothingElse() {
    var engine = LocationEngine(allowed: false)
    let effects = engine.handle(.startUpdates(client, UpdateRequest()), at: Self.origin)
    #expect(errors(effects) == [.denied])
    #expect(!effects.contains(.demandSources(accuracy: -1)))
    #expect(delivered(engine.handle(.fix(fix(1, 1)), at: Self.origin)).isEmpty)
  }

  @Test func losingAuthorizationStopsUpdatesWithDenied() {
    var engine = LocationEngine(allowed: true)
    _ = engine.handle(.startUpdates(client, UpdateRequest()), at: Self.origin)
    let effects = engine.handle(.authorization(allowed: false), at: Self.origin)
    #expect(errors(effects) == [.denied])
    #expect(effects.contains(.demandSources(accuracy: nil)))
    _ = engine.handle(.authorization(allowed: true), at: Self.origin)
    #expect(delivered(engine.handle(.fix(fix(1, 1)), at: Self.origin)).isEmpty)
  }

  @Test func sourceFailureIsReportedOncePerOutage() {
    var engine = LocationEngine(allowed: true)
    _ = engine.handle(.startUpdates(client, UpdateRequest()), at: Self.origin)
    #expect(
      errors(engine.handle(.sourceFailed(source: "gps", reason: "gone"), at: Self.origin)) == [
        .locationUnknown
      ])
    #expect(
      errors(engine.handle(.sourceFailed(source: "gps", reason: "gone"), at: Self.origin)).isEmpty)
    _ = engine.handle(.fix(fix(1, 1)), at: Self.origin)
    #expect(
      errors(engine.handle(.sourceFailed(source: "gps", reason: "gone"), at: Self.origin)) == [
        .locationUnknown
      ])
  }

  @Test func sourcesEndedTellsStreamingClients() {
    var engine = LocationEngine(allowed: true)
    _ = engine.handle(.startUpdates(client, UpdateRequest()), at: Self.origin)
    #expect(errors(engine.handle(.sourcesEnded, at: Self.origin)) == [.sourcesEnded])
  }

  @Test func demandFollowsStrongestAccuracy() {
    var engine = LocationEngine(allowed: true)
    let other = ClientID(2)
    #expect(
      engine.handle(.startUpdates(client, UpdateRequest(desiredAccuracy: 1000)), at: Self.origin)
        .contains(.demandSources(accuracy: 1000)))
    #expect(
      engine.handle(.startUpdates(other, UpdateRequest(desiredAccuracy: 10)), at: Self.origin)
        .contains(.demandSources(accuracy: 10)))
    #expect(
      engine.handle(.removeClient(other), at: Self.origin).contains(.demandSources(accuracy: 1000)))
  }

  @Test func simulatedFixesAreNotSavedAndRealOnesAreThrottled() {
    var engine = LocationEngine(allowed: true)
    var simulated = fix(1, 1)
    simulated.isSimulated = true
    #expect(
      !engine.handle(.fix(simulated), at: Self.origin).contains(.saveLastKnownLocation(simulated)))
    let real = fix(2, 2)
    #expect(engine.handle(.fix(real), at: Self.origin).contains(.saveLastKnownLocation(real)))
    #expect(
      !engine.handle(.fix(real), at: Self.origin.advanced(by: 1)).contains(
        .saveLastKnownLocation(real)))
    #expect(
      engine.handle(.fix(real), at: Self.origin.advanced(by: 6)).contains(
        .saveLastKnownLocation(real)))
  }

  /// The store's write of the last known location (a commit: milliseconds on a slow disk, one in
  /// every 100 fixes at 20 Hz) is the last effect of its step, after every client's delivery and
  /// the region events, so that it never delays a delivery (`locbench latency`, p99); and a fix
  /// nobody may have is saved all the same.
  @Test func theSaveOfTheLastKnownLocationComesAfterTheDeliveries() {
    var engine = LocationEngine(allowed: true)
    _ = engine.handle(.startUpdates(client, UpdateRequest()), at: Self.origin)
    _ = engine.handle(.startUpdates(ClientID(2), UpdateRequest()), at: Self.origin)
    _ = engine.handle(
      .addRegion(
        group: "manager", RegionSpec(identifier: "r", latitude: 2, longitude: 2, radius: 100),
        initialState: .unknown, requester: client),
      at: Self.origin)
    let real = fix(2, 2)
    let effects = engine.handle(.fix(real), at: Self.origin)
    #expect(delivered(effects).count == 2)
    #expect(effects.contains { if case .regionEvents = $0 { true } else { false } })
    #expect(effects.last == .saveLastKnownLocation(real))

    var refused = LocationEngine(allowed: false)
    #expect(refused.handle(.fix(real), at: Self.origin) == [.saveLastKnownLocation(real)])
  }
}
