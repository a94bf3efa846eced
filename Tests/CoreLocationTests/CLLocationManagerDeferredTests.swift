import CoreLocation
import CoreLocationTesting
import Foundation
import Testing

// Apple deprecated deferred updates; the tests reach them through a protocol whose witnesses are
// deprecated (see DeprecatedShim.swift), so the warnings-as-errors build stays clean.
protocol DeferredAPI {
  static func allow(_ manager: CLLocationManager, distance: Double, timeout: TimeInterval)
  static func disallow(_ manager: CLLocationManager)
  static var available: Bool { get }
}

enum DeferredShim: DeferredAPI {
  @available(*, deprecated)
  static func allow(_ manager: CLLocationManager, distance: Double, timeout: TimeInterval) {
    manager.allowDeferredLocationUpdates(untilTraveled: distance, timeout: timeout)
  }

  @available(*, deprecated)
  static func disallow(_ manager: CLLocationManager) { manager.disallowDeferredLocationUpdates() }

  @available(*, deprecated)
  static var available: Bool { CLLocationManager.deferredLocationUpdatesAvailable() }
}

/// Records batches and the finish of deferred updates.
final class DeferredDelegate: NSObject, CLLocationManagerDelegate, @unchecked Sendable {
  // @unchecked: the simulated environment calls it on the test's thread only.
  var batches: [[CLLocation]] = []
  var finishes: [CLError.Code?] = []

  func locationManager(_ manager: CLLocationManager, didUpdateLocations locations: [CLLocation]) {
    batches.append(locations)
  }

  func locationManager(
    _ manager: CLLocationManager, didFinishDeferredUpdatesWithError error: (any Error)?
  ) {
    finishes.append((error as? CLError)?.code)
  }
}

@Suite struct CLLocationManagerDeferredTests {
  let deferred: any DeferredAPI.Type = DeferredShim.self

  func location(_ world: SimulatedEnvironment, north metres: Double) -> CLLocation {
    CLLocation(
      coordinate: CLLocationCoordinate2D(latitude: 45 + metres / 111_132, longitude: 7),
      altitude: 0,
      horizontalAccuracy: 5, verticalAccuracy: -1, timestamp: world.now)
  }

  func start(_ world: SimulatedEnvironment) -> (CLLocationManager, DeferredDelegate) {
    let manager = world.run { CLLocationManager() }
    let delegate = DeferredDelegate()
    manager.delegate = delegate
    manager.startUpdatingLocation()
    world.pump()
    return (manager, delegate)
  }

  @Test func batchWhenTheDistanceIsReached() {
    let world = SimulatedEnvironment(authorization: .authorizedAlways)
    let (manager, delegate) = start(world)
    world.deliver(location(world, north: 0))
    deferred.allow(manager, distance: 100, timeout: CLTimeIntervalMax)
    for metres in [20.0, 50, 80] { world.deliver(location(world, north: metres)) }
    #expect(delegate.batches.count == 1)  // only the location before the deferral
    world.deliver(location(world, north: 120))
    #expect(delegate.batches.count == 2)
    #expect(delegate.batches.last?.count == 4)  // 20, 50, 80, 120 in one call
    #expect(delegate.finishes.count == 1 && delegate.finishes.first == .some(nil))
    world.deliver(location(world, north: 130))
    #expect(delegate.batches.count == 3)  // back to normal delivery
    let available = deferred.available
    #expect(available)
  }

  @Test func batchWhenTheTimeoutPasses() {
    let world = SimulatedEnvironment(authorization: .authorizedAlways)
    let (manager, delegate) = start(world)
    deferred.allow(manager, distance: CLLocationDistanceMax, timeout: 60)
    world.deliver(location(world, north: 0))
    world.advance(by: 30)
    world.deliver(location(world, north: 1))
    #expect(delegate.batches.isEmpty)
    world.advance(by: 31)
    #expect(delegate.batches.map(\.count) == [2])
    #expect(delegate.finishes.count == 1 && delegate.finishes.first == .some(nil))
  }

  @Test func disallowAndStopCancelAfterDeliveringWhatIsHeld() {
    let world = SimulatedEnvironment(authorization: .authorizedAlways)
    let (manager, delegate) = start(world)
    deferred.allow(manager, distance: 1000, timeout: 600)
    world.deliver(location(world, north: 0))
    deferred.disallow(manager)
    world.pump()
    #expect(delegate.batches.map(\.count) == [1])
    #expect(delegate.finishes == [.deferredCanceled])
    deferred.allow(manager, distance: 1000, timeout: 600)
    world.deliver(location(world, north: 5))
    manager.stopUpdatingLocation()
    world.pump()
    #expect(delegate.batches.map(\.count) == [1, 1])
    #expect(delegate.finishes == [.deferredCanceled, .deferredCanceled])
  }

  @Test func applesPreconditionsAndTheirCodes() {
    let world = SimulatedEnvironment(authorization: .authorizedAlways)
    let manager = world.run { CLLocationManager() }
    let delegate = DeferredDelegate()
    manager.delegate = delegate
    deferred.allow(manager, distance: 100, timeout: 60)  // not updating
    world.pump()
    manager.startUpdatingLocation()
    manager.desiredAccuracy = kCLLocationAccuracyHundredMeters
    deferred.allow(manager, distance: 100, timeout: 60)
    world.pump()
    manager.desiredAccuracy = kCLLocationAccuracyBest
    manager.distanceFilter = 10
    deferred.allow(manager, distance: 100, timeout: 60)
    world.pump()
    #expect(
      delegate.finishes == [
        .deferredNotUpdatingLocation, .deferredAccuracyTooLow, .deferredDistanceFiltered,
      ])
  }

  @Test func noGNSSClassSourceFails() {
    let world = SimulatedEnvironment(authorization: .authorizedAlways, sourceAccuracy: 1000)
    let (manager, delegate) = start(world)
    deferred.allow(manager, distance: 100, timeout: 60)
    world.pump()
    #expect(delegate.finishes == [.deferredFailed])
  }
}
