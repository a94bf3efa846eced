import CoreLocation
import CoreLocationTesting
import Foundation
import Testing

/// A delegate that records region callbacks in order.
final class RegionDelegate: NSObject, CLLocationManagerDelegate, @unchecked Sendable {
  // @unchecked: the simulated environment calls it on the test's thread only.
  var calls: [String] = []
  var errors: [CLError] = []

  func locationManager(_ manager: CLLocationManager, didStartMonitoringFor region: CLRegion) {
    calls.append("start \(region.identifier)")
  }

  func locationManager(_ manager: CLLocationManager, didEnterRegion region: CLRegion) {
    calls.append("enter \(region.identifier)")
  }

  func locationManager(_ manager: CLLocationManager, didExitRegion region: CLRegion) {
    calls.append("exit \(region.identifier)")
  }

  func locationManager(
    _ manager: CLLocationManager, didDetermineState state: CLRegionState, for region: CLRegion
  ) {
    let name: String
    switch state {
    case .inside: name = "inside"
    case .outside: name = "outside"
    case .unknown: name = "unknown"
    }
    calls.append("state \(region.identifier) \(name)")
  }

  func locationManager(
    _ manager: CLLocationManager, monitoringDidFailFor region: CLRegion?, withError error: any Error
  ) {
    calls.append("fail \(region?.identifier ?? "nil")")
    if let error = error as? CLError { errors.append(error) }
  }
}

@Suite struct CLLocationManagerRegionTests {
  static let center = CLLocationCoordinate2D(latitude: 52.0, longitude: 5.0)

  /// A location `metres` north of the centre (1° of latitude at 52° is 111,258 m on WGS-84).
  func location(_ world: SimulatedEnvironment, north metres: Double, accuracy: Double = 5)
    -> CLLocation
  {
    CLLocation(
      coordinate: CLLocationCoordinate2D(
        latitude: Self.center.latitude + metres / 111_258.0, longitude: 5),
      altitude: 0, horizontalAccuracy: accuracy, verticalAccuracy: -1, timestamp: world.now)
  }

  func home() -> CLCircularRegion {
    CLCircularRegion(center: Self.center, radius: 100, identifier: "home")
  }

  @Test func firstFixDeterminesThenTransitionsNotify() {
    let world = SimulatedEnvironment(authorization: .authorizedAlways)
    let delegate = RegionDelegate()
    let manager = world.run { CLLocationManager() }
    manager.delegate = delegate
    manager.startMonitoring(for: home())
    world.pump()
    #expect(world.source.isRunning)  // monitoring runs the sources without location updates
    world.deliver(location(world, north: 0))
    world.deliver(location(world, north: 102))  // between the two thresholds: no evidence
    world.deliver(location(world, north: 110))
    world.deliver(location(world, north: 20))
    #expect(
      delegate.calls == [
        "start home", "state home inside", "exit home", "state home outside", "enter home",
        "state home inside",
      ])
    #expect(manager.monitoredRegions.map(\.identifier) == ["home"])
  }

  /// The boundary rule with accuracy larger than the hysteresis: outside needs d >= r + a.
  @Test(arguments: [(north: 119.0, exits: false), (north: 121.0, exits: true)])
  func accuracyWidensTheBand(north: Double, exits: Bool) {
    let world = SimulatedEnvironment(authorization: .authorizedAlways)
    let delegate = RegionDelegate()
    let manager = world.run { CLLocationManager() }
    manager.delegate = delegate
    manager.startMonitoring(for: home())
    world.deliver(location(world, north: 0))
    world.deliver(location(world, north: north, accuracy: 20))
    #expect(delegate.calls.contains("exit home") == exits)
  }

  @Test func notifyFlagsSuppressEnterAndExitButNotState() {
    let world = SimulatedEnvironment(authorization: .authorizedAlways)
    let delegate = RegionDelegate()
    let manager = world.run { CLLocationManager() }
    manager.delegate = delegate
    let region = home()
    region.notifyOnExit = false
    manager.startMonitoring(for: region)
    world.deliver(location(world, north: 0))
    world.deliver(location(world, north: 500))
    #expect(!delegate.calls.contains("exit home"))
    #expect(delegate.calls.contains("state home outside"))
  }

  @Test func everyManagerOfTheAppIsTold() {
    let world = SimulatedEnvironment(authorization: .authorizedAlways)
    let first = RegionDelegate()
    let second = RegionDelegate()
    let managers = world.run { [CLLocationManager(), CLLocationManager()] }
    managers[0].delegate = first
    managers[1].delegate = second
    managers[0].startMonitoring(for: home())
    world.deliver(location(world, north: 0))
    world.deliver(location(world, north: 500))
    #expect(first.calls.contains("exit home"))
    #expect(second.calls.contains("exit home"))
    #expect(!second.calls.contains("start home"))  // only the manager that asked hears it started
    #expect(managers[1].monitoredRegions.count == 1)
  }

  @Test func replacedByIdentifier() {
    let world = SimulatedEnvironment(authorization: .authorizedAlways)
    let manager = world.run { CLLocationManager() }
    manager.startMonitoring(for: home())
    manager.startMonitoring(
      for: CLCircularRegion(center: Self.center, radius: 250, identifier: "home"))
    world.pump()
    let regions = manager.monitoredRegions.compactMap { $0 as? CLCircularRegion }
    #expect(regions.count == 1)
    #expect(regions.first?.radius == 250)
    manager.stopMonitoring(for: home())
    world.pump()
    #expect(manager.monitoredRegions.isEmpty)
  }

  @Test(arguments: [
    (radius: 0.0, latitude: 52.0, identifier: "zero"),
    (radius: -5.0, latitude: 52.0, identifier: "negative"),
    (radius: .nan, latitude: 52.0, identifier: "nan"),
    (radius: 2_000_000.0, latitude: 52.0, identifier: "huge"),
    (radius: 100.0, latitude: 91.0, identifier: "badcentre"),
    (radius: 100.0, latitude: 52.0, identifier: ""),
  ])
  func invalidRegionsFailWithoutDisturbingOthers(
    radius: Double, latitude: Double, identifier: String
  ) {
    let world = SimulatedEnvironment(authorization: .authorizedAlways)
    let delegate = RegionDelegate()
    let manager = world.run { CLLocationManager() }
    manager.delegate = delegate
    manager.startMonitoring(for: home())
    manager.startMonitoring(
      for: CLCircularRegion(
        center: CLLocationCoordinate2D(latitude: latitude, longitude: 5), radius: radius,
        identifier: identifier))
    world.pump()
    #expect(delegate.errors.map(\.code) == [.regionMonitoringFailure])
    #expect(delegate.calls.contains("fail \(identifier)"))
    #expect(manager.monitoredRegions.map(\.identifier) == ["home"])
  }

  @Test func deniedAppCannotMonitor() {
    let world = SimulatedEnvironment(authorization: .denied)
    let delegate = RegionDelegate()
    let manager = world.run { CLLocationManager() }
    manager.delegate = delegate
    manager.startMonitoring(for: home())
    world.pump()
    #expect(delegate.errors.map(\.code) == [.regionMonitoringDenied])
    #expect(manager.monitoredRegions.isEmpty)
  }

  @Test func beaconRegionsNeedARadio() {
    let world = SimulatedEnvironment(authorization: .authorizedAlways, beaconsAvailable: false)
    world.run {
      #expect(CLLocationManager.isMonitoringAvailable(for: CLCircularRegion.self))
      #expect(!CLLocationManager.isMonitoringAvailable(for: CLBeaconRegion.self))
    }
    let delegate = RegionDelegate()
    let manager = world.run { CLLocationManager() }
    manager.delegate = delegate
    manager.startMonitoring(for: CLBeaconRegion(uuid: UUID(), identifier: "beacon"))
    world.pump()
    #expect(delegate.errors.map(\.code) == [.regionMonitoringFailure])
  }

  @Test func requestStateAnswersTheCurrentState() {
    let world = SimulatedEnvironment(authorization: .authorizedAlways)
    let delegate = RegionDelegate()
    let manager = world.run { CLLocationManager() }
    manager.delegate = delegate
    manager.startMonitoring(for: home())
    manager.requestState(for: home())
    world.pump()
    #expect(delegate.calls.last == "state home unknown")
    world.deliver(location(world, north: 0))
    manager.requestState(for: home())
    world.pump()
    #expect(delegate.calls.suffix(2) == ["state home inside", "state home inside"])
  }

  /// A restart: a second environment on the same store file finds the region and its state, and a
  /// crossing that happened while "the process" was away is reported at the first decisive fix.
  @Test func regionsAndStatesSurviveARestart() throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "regions-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("store.sqlite").path
    do {
      let world = SimulatedEnvironment(authorization: .authorizedAlways, storePath: path)
      #expect(world.isPersistent)
      let manager = world.run { CLLocationManager() }
      manager.startMonitoring(for: home())
      world.deliver(location(world, north: 0))
      #expect(manager.monitoredRegions.count == 1)
    }
    let world = SimulatedEnvironment(storePath: path)
    let delegate = RegionDelegate()
    let manager = world.run { CLLocationManager() }
    manager.delegate = delegate
    #expect(manager.authorizationStatus == .authorizedAlways)
    #expect(manager.monitoredRegions.map(\.identifier) == ["home"])
    world.pump()
    world.deliver(location(world, north: 800))
    #expect(delegate.calls == ["exit home", "state home outside"])
  }
}
