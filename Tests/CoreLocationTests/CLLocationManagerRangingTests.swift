import CoreLocation
import CoreLocationTesting
import Foundation
import TestSupport
import Testing

/// Records the ranging callbacks a delegate hears, in order.
final class RangingDelegate: NSObject, CLLocationManagerDelegate, @unchecked Sendable {
  // @unchecked: the simulated environment calls it on the test's thread only.
  var ranged: [(constraint: CLBeaconIdentityConstraint, beacons: [CLBeacon])] = []
  var rangedInRegion: [(region: CLBeaconRegion, beacons: [CLBeacon])] = []
  var failures: [CLError.Code] = []
  var regionCalls: [String] = []

  func locationManager(
    _ manager: CLLocationManager, didRange beacons: [CLBeacon],
    satisfying beaconConstraint: CLBeaconIdentityConstraint
  ) {
    ranged.append((beaconConstraint, beacons))
  }

  func locationManager(
    _ manager: CLLocationManager, didRangeBeacons beacons: [CLBeacon], in region: CLBeaconRegion
  ) {
    rangedInRegion.append((region, beacons))
  }

  func locationManager(
    _ manager: CLLocationManager, didFailRangingFor beaconConstraint: CLBeaconIdentityConstraint,
    error: any Error
  ) {
    if let error = error as? CLError { failures.append(error.code) }
  }

  func locationManager(_ manager: CLLocationManager, didEnterRegion region: CLRegion) {
    regionCalls.append("enter \(region.identifier)")
  }

  func locationManager(_ manager: CLLocationManager, didExitRegion region: CLRegion) {
    regionCalls.append("exit \(region.identifier)")
  }

  func locationManager(
    _ manager: CLLocationManager, didDetermineState state: CLRegionState, for region: CLRegion
  ) {
    regionCalls.append("state \(region.identifier) \(state.rawValue) \(region is CLBeaconRegion)")
  }
}

/// Beacon ranging and beacon regions through the public API, on the simulated environment's
/// manual clock and scripted beacons.
@Suite struct CLLocationManagerRangingTests {
  static let uuid = UUID(
    uuid: (
      0xE2, 0xC5, 0x6D, 0xB5, 0xDF, 0xFB, 0x48, 0xD2, 0xB0, 0x60, 0xD0, 0xF5, 0xA7, 0x10, 0x96, 0xE0
    ))

  func rig(_ authorization: CLAuthorizationStatus = .authorizedWhenInUse)
    -> (SimulatedEnvironment, CLLocationManager, RangingDelegate)
  {
    let world = SimulatedEnvironment(authorization: authorization)
    let manager = world.run { CLLocationManager() }
    let delegate = RangingDelegate()
    manager.delegate = delegate
    return (world, manager, delegate)
  }

  @Test func rangingDeliversOnceASecondClosestFirst() {
    let (world, manager, delegate) = rig()
    world.run { #expect(CLLocationManager.isRangingAvailable()) }
    let near = world.placeBeacon(uuid: Self.uuid, major: 1, minor: 1, rssi: -59)
    world.placeBeacon(uuid: Self.uuid, major: 1, minor: 2, rssi: -79)
    world.placeBeacon(uuid: UUID(), major: 1, minor: 3, rssi: -40)
    let constraint = CLBeaconIdentityConstraint(uuid: Self.uuid)
    manager.startRangingBeacons(satisfying: constraint)
    #expect(manager.rangedBeaconConstraints == [constraint])
    world.advance(by: 5)
    #expect(delegate.ranged.count == 5)
    let last = delegate.ranged.last?.beacons ?? []
    #expect(last.map(\.minor) == [1, 2])
    #expect(last.map(\.proximity) == [.near, .far])
    #expect(abs((last.first?.accuracy ?? 0) - 1) < 0.01)
    #expect(last.first?.rssi == -59)
    #expect(last.first?.uuid == Self.uuid)
    #expect(delegate.ranged.last?.constraint === constraint)
    // Walking away from the nearer beacon: it becomes the farther one.
    near.rssi = -85
    world.advance(by: 2)
    #expect(delegate.ranged.last?.beacons.map(\.minor) == [2, 1])
    // Gone: unknown for a while, then no longer reported.
    near.remove()
    world.advance(by: 2)
    #expect(delegate.ranged.last?.beacons.last?.proximity == .unknown)
    #expect(delegate.ranged.last?.beacons.last?.accuracy == -1)
    world.advance(by: 10)
    #expect(delegate.ranged.last?.beacons.map(\.minor) == [2])
    manager.stopRangingBeacons(satisfying: constraint)
    let count = delegate.ranged.count
    world.advance(by: 3)
    #expect(delegate.ranged.count == count)
    #expect(manager.rangedBeaconConstraints.isEmpty)
    #expect(!world.source.isRunning)
  }

  @Test func theDeprecatedRegionFormRangesAlongsideTheCurrentOne() {
    let (world, manager, delegate) = rig()
    world.placeBeacon(uuid: Self.uuid, major: 4, minor: 2, rssi: -62)
    let region = CLBeaconRegion(uuid: Self.uuid, major: 4, identifier: "lobby")
    let constraint = CLBeaconIdentityConstraint(uuid: Self.uuid, major: 4)
    deprecated.startRangingBeacons(manager, in: region)
    manager.startRangingBeacons(satisfying: constraint)
    world.advance(by: 2)
    #expect(delegate.rangedInRegion.count == 2)
    #expect(delegate.rangedInRegion.last?.region.identifier == "lobby")
    #expect(delegate.rangedInRegion.last?.beacons.first?.minor == 2)
    #expect(delegate.ranged.count == 2)
    #expect(deprecated.rangedRegions(manager).map(\.identifier) == ["lobby"])
    // Stopping one form leaves the other ranging.
    deprecated.stopRangingBeacons(manager, in: region)
    world.advance(by: 2)
    #expect(delegate.rangedInRegion.count == 2)
    #expect(delegate.ranged.count == 4)
  }

  @Test func losingAuthorizationEndsRangingWithDenied() {
    let (world, manager, delegate) = rig()
    world.placeBeacon(uuid: Self.uuid, major: 1, minor: 1)
    manager.startRangingBeacons(satisfying: CLBeaconIdentityConstraint(uuid: Self.uuid))
    world.advance(by: 1)
    world.setAuthorization(.denied)
    #expect(delegate.failures == [.denied])
    #expect(manager.rangedBeaconConstraints.isEmpty)
    let count = delegate.ranged.count
    world.advance(by: 3)
    #expect(delegate.ranged.count == count)
  }

  @Test func anApproximateAppCannotRange() {
    let world = SimulatedEnvironment(authorization: .authorizedAlways, accuracy: .reducedAccuracy)
    let manager = world.run { CLLocationManager() }
    let delegate = RangingDelegate()
    manager.delegate = delegate
    world.placeBeacon(uuid: Self.uuid, major: 1, minor: 1)
    manager.startRangingBeacons(satisfying: CLBeaconIdentityConstraint(uuid: Self.uuid))
    world.advance(by: 2)
    #expect(delegate.failures == [.denied])
    #expect(delegate.ranged.isEmpty)
  }

  @Test func aBeaconRegionIsEnteredAndExitedAndSurvivesARestart() throws {
    let path = FileManager.default.temporaryDirectory
      .appendingPathComponent("ranging-\(UUID().uuidString).sqlite").path
    defer { try? FileManager.default.removeItem(atPath: path) }
    let world = SimulatedEnvironment(authorization: .authorizedAlways, storePath: path)
    #expect(world.isPersistent)
    let manager = world.run { CLLocationManager() }
    let delegate = RangingDelegate()
    manager.delegate = delegate
    let region = CLBeaconRegion(uuid: Self.uuid, major: 9, identifier: "desk")
    region.notifyEntryStateOnDisplay = true
    manager.startMonitoring(for: region)
    world.pump()
    let monitored = try #require(manager.monitoredRegions.first as? CLBeaconRegion)
    #expect(monitored.uuid == Self.uuid)
    #expect(monitored.major == 9)
    #expect(monitored.minor == nil)
    let beacon = world.placeBeacon(uuid: Self.uuid, major: 9, minor: 1)
    world.advance(by: 1)
    #expect(delegate.regionCalls == ["state desk 1 true"])
    beacon.remove()
    world.advance(by: 29)
    #expect(delegate.regionCalls.count == 1)
    world.advance(by: 2)
    #expect(delegate.regionCalls.suffix(2) == ["exit desk", "state desk 2 true"])

    // A restart on the same store: the region is back, as a beacon region, in its last state,
    // and the beacon's return is an entry.
    let again = SimulatedEnvironment(authorization: .authorizedAlways, storePath: path)
    let restarted = again.run { CLLocationManager() }
    let restartedDelegate = RangingDelegate()
    restarted.delegate = restartedDelegate
    let restored = try #require(restarted.monitoredRegions.first as? CLBeaconRegion)
    #expect(restored.identifier == "desk")
    #expect(
      restored.beaconIdentityConstraint == CLBeaconIdentityConstraint(uuid: Self.uuid, major: 9))
    again.placeBeacon(uuid: Self.uuid, major: 9, minor: 3)
    again.advance(by: 1)
    #expect(restartedDelegate.regionCalls == ["enter desk", "state desk 1 true"])
  }
}

/// `CLBeaconRegion.peripheralData(withMeasuredPower:)`: Apple's key and the iBeacon payload.
@Suite struct PeripheralDataTests {
  @Test func theDictionaryCarriesTheBeaconPayload() throws {
    let uuid = CLLocationManagerRangingTests.uuid
    let region = CLBeaconRegion(uuid: uuid, major: 0x0102, minor: 0xA0B0, identifier: "me")
    let data = try #require(
      region.peripheralData(withMeasuredPower: -65)["kCBAdvDataAppleBeaconKey"] as? Data)
    #expect(data.count == 21)
    #expect(Array(data.prefix(16)) == withUnsafeBytes(of: uuid.uuid) { Array($0) })
    #expect(Array(data.suffix(5)) == [0x01, 0x02, 0xA0, 0xB0, 0xBF])
    let open = CLBeaconRegion(uuid: uuid, identifier: "any")
    let defaults = try #require(
      open.peripheralData(withMeasuredPower: nil)["kCBAdvDataAppleBeaconKey"] as? Data)
    #expect(Array(defaults.suffix(5)) == [0, 0, 0, 0, 0xC5])
  }
}

/// `SimulatedEnvironment.replayBeacons(contentsOf:speed:)` on the recorded office corridor
/// (`Tests/Fixtures/beacons/office.beacons.jsonl`: three beacons, the third silent after 30 s).
@Suite struct SimulatedBeaconReplayTests {
  @Test func aRecordedSiteDrivesRangingAndABeaconRegion() throws {
    let world = SimulatedEnvironment(authorization: .authorizedAlways)
    let manager = world.run { CLLocationManager() }
    let delegate = RangingDelegate()
    manager.delegate = delegate
    let uuid = CLLocationManagerRangingTests.uuid
    manager.startRangingBeacons(satisfying: CLBeaconIdentityConstraint(uuid: uuid))
    manager.startMonitoring(for: CLBeaconRegion(uuid: uuid, major: 2, identifier: "far end"))
    world.pump()
    let replay = try world.replayBeacons(
      contentsOf: Paths.fixture("beacons", "office.beacons.jsonl"))
    #expect(replay.advertisementCount == 402)
    #expect(replay.malformedLines == 0)
    #expect(replay.duration > 59 && replay.duration < 61)
    world.advance(by: 10)
    let early = delegate.ranged.last?.beacons ?? []
    #expect(Set(early.map { "\($0.major).\($0.minor)" }) == ["1.1", "1.2", "2.7"])
    #expect(early.allSatisfy { $0.proximity != .unknown })
    #expect(delegate.regionCalls == ["state far end 1 true"])
    // The third beacon falls silent at 30 s: unknown, then gone; the region is left 30 s later.
    world.advance(by: 25)
    #expect(delegate.ranged.last?.beacons.last?.minor == 7)
    #expect(delegate.ranged.last?.beacons.last?.proximity == .unknown)
    world.advance(by: 30)
    #expect(!(delegate.ranged.last?.beacons ?? []).contains { $0.minor == 7 })
    #expect(delegate.regionCalls.suffix(2) == ["exit far end", "state far end 2 true"])
  }
}
