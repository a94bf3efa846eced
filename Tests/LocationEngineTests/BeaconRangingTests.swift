import LocationModel
import Testing

@testable import LocationEngine

/// Beacon ranging and beacon regions in the step function, on a hand-driven clock.
@Suite struct BeaconRangingTests {
  static let uuid = BeaconUUID(high: 0xE2C5_6DB5_DFFB_48D2, low: 0xB060_D0F5_A710_96E0)
  static let other = BeaconUUID(high: 0xB940_7F30_F5F8_466E, low: 0xAFF9_2555_6B57_FE6D)
  static let origin = EngineInstant(monotonic: 100, wall: 1_767_225_600)

  static func ad(_ minor: UInt16, rssi: Int, uuid: BeaconUUID = uuid, at seconds: Double)
    -> BeaconAdvertisement
  {
    BeaconAdvertisement(
      uuid: uuid, major: 1, minor: minor, measuredPower: -59, rssi: rssi, address: "AA:\(minor)",
      time: origin.wall + seconds)
  }

  struct Rig {
    var engine = LocationEngine(allowed: true)
    let client = ClientID(1)

    init() { _ = engine.handle(.addClient(client), at: BeaconRangingTests.origin) }

    mutating func send(_ event: EngineEvent, at seconds: Double) -> [EngineEffect] {
      engine.handle(event, at: BeaconRangingTests.origin.advanced(by: seconds))
    }

    mutating func tick(at seconds: Double) -> [EngineEffect] {
      send(.timerFired(.beaconTick), at: seconds)
    }
  }

  static func deliveries(_ effects: [EngineEffect]) -> [(BeaconConstraint, [RangedBeacon])] {
    effects.compactMap {
      if case .deliverBeacons(_, let constraint, let beacons) = $0 { return (constraint, beacons) }
      return nil
    }
  }

  @Test func rangingDemandsBeaconsArmsATickAndDeliversClosestFirst() {
    var rig = Rig()
    let constraint = BeaconConstraint(uuid: Self.uuid)
    let started = rig.send(.startRanging(rig.client, constraint), at: 0)
    #expect(started.contains(.demandBeacons(true)))
    #expect(started.contains(.armTimer(.beaconTick, deadline: Self.origin.monotonic + 1)))
    // Beacon 2 is louder (nearer) than beacon 1; another UUID is not ranged.
    for step in 0..<4 {
      let t = 0.2 + Double(step) * 0.2
      _ = rig.send(.advertisement(Self.ad(1, rssi: -79, at: t)), at: t)
      _ = rig.send(.advertisement(Self.ad(2, rssi: -59, at: t)), at: t)
      _ = rig.send(.advertisement(Self.ad(3, rssi: -40, uuid: Self.other, at: t)), at: t)
    }
    let effects = rig.tick(at: 1)
    let delivered = Self.deliveries(effects)
    #expect(delivered.count == 1)
    let beacons = delivered.first?.1 ?? []
    #expect(beacons.map(\.minor) == [2, 1])
    // Log-distance model, n = 2: at the measured power 1 m, 20 dB below it 10 m.
    #expect(abs(beacons[0].accuracy - 1) < 1e-9)
    #expect(abs(beacons[1].accuracy - 10) < 1e-9)
    #expect(beacons[0].proximity == .near)
    #expect(beacons[1].proximity == .far)
    #expect(beacons[0].rssi == -59)
    #expect(beacons[0].time == Self.origin.wall + 1)
    // The tick re-arms itself while ranging.
    #expect(effects.contains(.armTimer(.beaconTick, deadline: Self.origin.monotonic + 2)))
  }

  @Test func aBeaconNotHeardInTheWindowIsUnknownThenForgotten() {
    var rig = Rig()
    _ = rig.send(.startRanging(rig.client, BeaconConstraint(uuid: Self.uuid, major: 1)), at: 0)
    _ = rig.send(.advertisement(Self.ad(1, rssi: -50, at: 0.5)), at: 0.5)
    let heard = Self.deliveries(rig.tick(at: 1)).first?.1 ?? []
    #expect(heard.first?.proximity == .immediate)
    let unheard = Self.deliveries(rig.tick(at: 2)).first?.1 ?? []
    #expect(unheard.first?.proximity == .unknown)
    #expect(unheard.first?.accuracy == -1)
    #expect(unheard.first?.rssi == 0)
    // Forgotten after 10 s: an empty delivery, as Apple gives when nothing is in range.
    let gone = Self.deliveries(rig.tick(at: 11))
    #expect(gone.count == 1)
    #expect(gone.first?.1.isEmpty == true)
  }

  @Test func unknownBeaconsComeAfterKnownOnes() {
    var rig = Rig()
    _ = rig.send(.startRanging(rig.client, BeaconConstraint(uuid: Self.uuid)), at: 0)
    _ = rig.send(.advertisement(Self.ad(1, rssi: -70, at: 0.1)), at: 0.1)
    _ = rig.send(.advertisement(Self.ad(2, rssi: -90, at: 1.5)), at: 1.5)
    let beacons = Self.deliveries(rig.tick(at: 2)).first?.1 ?? []
    #expect(beacons.map(\.minor) == [2, 1])
    #expect(beacons.map(\.proximity) == [.far, .unknown])
  }

  @Test func stoppingAndRemovingEndRangingAndTheDemand() {
    var rig = Rig()
    let constraint = BeaconConstraint(uuid: Self.uuid, major: 1, minor: 2)
    _ = rig.send(.startRanging(rig.client, constraint), at: 0)
    #expect(rig.engine.rangedConstraints(rig.client) == [constraint])
    let stopped = rig.send(.stopRanging(rig.client, constraint), at: 0.5)
    #expect(stopped.contains(.demandBeacons(false)))
    #expect(stopped.contains(.cancelTimer(.beaconTick)))
    _ = rig.send(.startRanging(rig.client, constraint), at: 1)
    let removed = rig.send(.removeClient(rig.client), at: 2)
    #expect(removed.contains(.demandBeacons(false)))
    #expect(rig.engine.rangedConstraints(rig.client).isEmpty)
  }

  @Test func anAppThatMayNotHaveFullAccuracyLocationsCannotRange() {
    var rig = Rig()
    let constraint = BeaconConstraint(uuid: Self.uuid)
    _ = rig.send(.startRanging(rig.client, constraint), at: 0)
    let revoked = rig.send(.authorization(allowed: false), at: 1)
    #expect(revoked.contains(.rangingFailed(rig.client, constraint, .denied)))
    #expect(revoked.contains(.demandBeacons(false)))
    let refused = rig.send(.startRanging(rig.client, constraint), at: 2)
    #expect(refused.contains(.rangingFailed(rig.client, constraint, .denied)))
    var reduced = Rig()
    _ = reduced.send(
      .authorization(allowed: true, reduction: ReducedAccuracy(secret: 1)), at: 0)
    let approximate = reduced.send(.startRanging(reduced.client, constraint), at: 1)
    #expect(approximate.contains(.rangingFailed(reduced.client, constraint, .denied)))
  }

  @Test func theModelsDistanceAndProximityLimits() {
    let model = BeaconRanging.Model()
    #expect(abs(model.distance(rssi: -59, measuredPower: -59) - 1) < 1e-12)
    #expect(abs(model.distance(rssi: -65, measuredPower: -59) - 1.995_262) < 1e-5)
    #expect(model.proximity(distance: 0.3) == .immediate)
    #expect(model.proximity(distance: 2) == .near)
    #expect(model.proximity(distance: 4) == .far)
  }

  // MARK: Beacon regions

  static func regionEvents(_ effects: [EngineEffect]) -> [RegionEvent] {
    effects.flatMap { effect -> [RegionEvent] in
      if case .regionEvents(_, let events) = effect { return events }
      return []
    }
  }

  @Test func aBeaconRegionIsInsideWhenHeardAndOutsideAfterThirtySilentSeconds() {
    var rig = Rig()
    let spec = RegionSpec.beacon(identifier: "lobby", BeaconConstraint(uuid: Self.uuid, major: 1))
    let added = rig.send(
      .addRegion(group: "manager", spec, initialState: .unknown, requester: rig.client), at: 0)
    #expect(
      added.contains(.regionAdded(group: "manager", spec, state: .unknown, requester: rig.client)))
    #expect(added.contains(.demandBeacons(true)))
    // No location source is asked for: a beacon region needs no receiver.
    #expect(!added.contains { if case .demandSources(.some) = $0 { true } else { false } })
    let first = Self.regionEvents(rig.send(.advertisement(Self.ad(7, rssi: -70, at: 1)), at: 1))
    #expect(first.map(\.kind) == [.determined(.inside)])
    #expect(Self.regionEvents(rig.tick(at: 30)).isEmpty)
    let exit = Self.regionEvents(rig.tick(at: 31))
    #expect(exit.map(\.kind) == [.exited, .determined(.outside)])
    let entry = Self.regionEvents(rig.send(.advertisement(Self.ad(9, rssi: -70, at: 40)), at: 40))
    #expect(entry.map(\.kind) == [.entered, .determined(.inside)])
    #expect(rig.engine.regionState(group: "manager", identifier: "lobby") == .inside)
    let removed = rig.send(.removeRegion(group: "manager", identifier: "lobby"), at: 41)
    #expect(removed.contains(.regionRemoved(group: "manager", identifier: "lobby")))
    #expect(removed.contains(.demandBeacons(false)))
  }

  @Test func aBeaconRegionNeverHeardIsDeterminedOutside() {
    var rig = Rig()
    let spec = RegionSpec.beacon(identifier: "far", BeaconConstraint(uuid: Self.other))
    _ = rig.send(
      .addRegion(group: "monitor:m", spec, initialState: .unknown, requester: nil), at: 0)
    _ = rig.send(.advertisement(Self.ad(1, rssi: -60, at: 5)), at: 5)
    #expect(Self.regionEvents(rig.tick(at: 29)).isEmpty)
    #expect(Self.regionEvents(rig.tick(at: 30)).map(\.kind) == [.determined(.outside)])
  }

  @Test func aRestoredBeaconRegionReportsTheCrossingThatHappenedWhileAway() {
    var rig = Rig()
    let spec = RegionSpec.beacon(identifier: "desk", BeaconConstraint(uuid: Self.uuid))
    rig.engine.restoreRegions(group: "manager", [spec], [.outside])
    #expect(rig.engine.regionSpecs(group: "manager") == [spec])
    _ = rig.send(.startRanging(rig.client, BeaconConstraint(uuid: Self.other)), at: 0)
    // The wait for an exit starts at the first tick after the restore, not at the epoch.
    #expect(Self.regionEvents(rig.tick(at: 1)).isEmpty)
    let entry = Self.regionEvents(rig.send(.advertisement(Self.ad(1, rssi: -60, at: 2)), at: 2))
    #expect(entry.map(\.kind) == [.entered, .determined(.inside)])
  }

  @Test func aBeaconRegionReplacesACircleOfTheSameIdentifier() {
    var rig = Rig()
    let circle = RegionSpec(identifier: "x", latitude: 48, longitude: 2, radius: 100)
    _ = rig.send(
      .addRegion(group: "manager", circle, initialState: .unknown, requester: nil), at: 0)
    let beacon = RegionSpec.beacon(identifier: "x", BeaconConstraint(uuid: Self.uuid))
    _ = rig.send(
      .addRegion(group: "manager", beacon, initialState: .unknown, requester: nil), at: 1)
    #expect(rig.engine.regionSpecs(group: "manager") == [beacon])
    #expect(rig.engine.regionCount == 1)
  }
}
