import CoreLocation
import CoreLocationTesting
import Foundation
import Testing

/// A delegate written as an Apple app writes one; it records what it is told.
final class RecordingDelegate: NSObject, CLLocationManagerDelegate, @unchecked Sendable {
  // @unchecked: the simulated environment calls it on the test's own thread only.
  var locations: [CLLocation] = []
  var errors: [CLError] = []
  var authorizationCalls: [CLAuthorizationStatus] = []
  var legacyUpdates: [(CLLocation, CLLocation)] = []

  func locationManagerDidChangeAuthorization(_ manager: CLLocationManager) {
    authorizationCalls.append(manager.authorizationStatus)
  }

  func locationManager(_ manager: CLLocationManager, didUpdateLocations locations: [CLLocation]) {
    self.locations += locations
  }

  func locationManager(_ manager: CLLocationManager, didFailWithError error: any Error) {
    if let error = error as? CLError { errors.append(error) }
  }
}

/// A delegate written for the pre-iOS 6 API: only the deprecated methods.
final class LegacyDelegate: NSObject, CLLocationManagerDelegate, @unchecked Sendable {
  var updates: [(new: CLLocation, old: CLLocation)] = []
  var statuses: [CLAuthorizationStatus] = []

  func locationManager(
    _ manager: CLLocationManager, didUpdateTo newLocation: CLLocation, from oldLocation: CLLocation
  ) {
    updates.append((newLocation, oldLocation))
  }

  func locationManager(
    _ manager: CLLocationManager, didChangeAuthorization status: CLAuthorizationStatus
  ) {
    statuses.append(status)
  }
}

@Suite struct CLLocationManagerTests {
  static let paris = CLLocationCoordinate2D(latitude: 48.8566, longitude: 2.3522)

  func location(_ world: SimulatedEnvironment, north metres: Double = 0, accuracy: Double = 5)
    -> CLLocation
  {
    CLLocation(
      coordinate: CLLocationCoordinate2D(
        latitude: Self.paris.latitude + metres / 111_200, longitude: Self.paris.longitude),
      altitude: 35, horizontalAccuracy: accuracy, verticalAccuracy: 3, timestamp: world.now)
  }

  @Test func appleStyleDelegateReceivesAuthorizationThenLocations() throws {
    let world = SimulatedEnvironment()
    let delegate = RecordingDelegate()
    let manager = world.run { CLLocationManager() }
    manager.delegate = delegate
    world.pump()
    #expect(delegate.authorizationCalls == [.notDetermined])

    manager.requestWhenInUseAuthorization()
    world.pump()
    #expect(manager.authorizationStatus == .authorizedWhenInUse)
    #expect(delegate.authorizationCalls == [.notDetermined, .authorizedWhenInUse])

    manager.startUpdatingLocation()
    #expect(world.source.isRunning)
    world.deliver(location(world))
    world.advance(by: 1)
    world.deliver(location(world, north: 20))
    #expect(delegate.locations.count == 2)
    #expect(manager.location?.coordinate.latitude == delegate.locations.last?.coordinate.latitude)
    #expect(delegate.locations.first?.horizontalAccuracy == 5)
    #expect(delegate.locations.first?.altitude == 35)

    manager.stopUpdatingLocation()
    #expect(!world.source.isRunning)
    world.deliver(location(world, north: 40))
    #expect(delegate.locations.count == 2)
  }

  @Test func distanceFilterOnThePublicAPI() {
    let world = SimulatedEnvironment(authorization: .authorizedWhenInUse)
    let delegate = RecordingDelegate()
    let manager = world.run { CLLocationManager() }
    manager.delegate = delegate
    manager.distanceFilter = 100
    manager.startUpdatingLocation()
    for metres in stride(from: 0.0, through: 300, by: 30) {
      world.deliver(location(world, north: metres))
    }
    // 0, 120, 240 (each at least 100 m from the one delivered before).
    #expect(delegate.locations.count == 3)
  }

  @Test func requestLocationDeliversExactlyOne() {
    let world = SimulatedEnvironment(authorization: .authorizedAlways, sourceAccuracy: 5)
    let delegate = RecordingDelegate()
    let manager = world.run { CLLocationManager() }
    manager.delegate = delegate
    manager.desiredAccuracy = kCLLocationAccuracyNearestTenMeters
    manager.requestLocation()
    world.deliver(location(world, accuracy: 65))
    #expect(delegate.locations.isEmpty)
    world.deliver(location(world, north: 5, accuracy: 8))
    world.deliver(location(world, north: 10, accuracy: 4))
    #expect(delegate.locations.count == 1)
    #expect(delegate.locations.first?.horizontalAccuracy == 8)
    #expect(!world.source.isRunning)
  }

  @Test func requestLocationTimesOutWithLocationUnknown() {
    let world = SimulatedEnvironment(authorization: .authorizedAlways)
    let delegate = RecordingDelegate()
    let manager = world.run { CLLocationManager() }
    manager.delegate = delegate
    manager.requestLocation()
    world.advance(by: 9.9)
    #expect(delegate.errors.isEmpty)
    world.advance(by: 0.2)
    #expect(delegate.errors.map(\.code) == [.locationUnknown])
    #expect(delegate.locations.isEmpty)
  }

  @Test func deniedAppGetsDeniedAndNoUpdates() {
    let world = SimulatedEnvironment(authorization: .denied)
    let delegate = RecordingDelegate()
    let manager = world.run { CLLocationManager() }
    manager.delegate = delegate
    manager.startUpdatingLocation()
    world.deliver(location(world))
    #expect(delegate.errors.map(\.code) == [.denied])
    #expect(delegate.locations.isEmpty)
    #expect(!world.source.isRunning)
  }

  @Test func policyDenialOnFirstRequest() {
    let world = SimulatedEnvironment(policyGrants: false)
    let delegate = RecordingDelegate()
    let manager = world.run { CLLocationManager() }
    manager.delegate = delegate
    manager.startUpdatingLocation()
    world.pump()
    #expect(manager.authorizationStatus == .denied)
    #expect(delegate.errors.map(\.code) == [.denied])
  }

  @Test func servicesOffDeniesAndIsVisible() {
    let world = SimulatedEnvironment(
      authorization: .authorizedAlways, locationServicesEnabled: false)
    let delegate = RecordingDelegate()
    let manager = world.run { CLLocationManager() }
    manager.delegate = delegate
    #expect(world.run { CLLocationManager.locationServicesEnabled() } == false)
    // The deprecated instance property (issue 15) says the same.
    #expect(servicesEnabledProperty(manager) == false)
    manager.startUpdatingLocation()
    world.pump()
    #expect(delegate.errors.map(\.code) == [.denied])
    world.setLocationServicesEnabled(true)
    #expect(servicesEnabledProperty(manager))
  }

  @Test func revokingAuthorizationStopsUpdates() {
    let world = SimulatedEnvironment(authorization: .authorizedWhenInUse)
    let delegate = RecordingDelegate()
    let manager = world.run { CLLocationManager() }
    manager.delegate = delegate
    manager.startUpdatingLocation()
    world.deliver(location(world))
    world.setAuthorization(.denied)
    world.deliver(location(world, north: 50))
    #expect(delegate.locations.count == 1)
    #expect(delegate.errors.map(\.code) == [.denied])
    #expect(delegate.authorizationCalls.last == .denied)
  }

  @Test func cachedLocationComesFirstWithItsOldTimestamp() {
    let start = Date(timeIntervalSince1970: 1_767_225_600)
    let cached = CLLocation(
      coordinate: Self.paris, altitude: 0, horizontalAccuracy: 20, verticalAccuracy: -1,
      timestamp: start.addingTimeInterval(-120))
    let world = SimulatedEnvironment(
      authorization: .authorizedAlways, lastKnownLocation: cached, start: start)
    let delegate = RecordingDelegate()
    let manager = world.run { CLLocationManager() }
    manager.delegate = delegate
    manager.startUpdatingLocation()
    world.pump()
    #expect(delegate.locations.count == 1)
    #expect(delegate.locations.first?.timestamp == cached.timestamp)
  }

  /// Measured (not simulated) locations become the store's last known location.
  @Test func deliveredLocationsAreStoredAsLastKnown() throws {
    let world = SimulatedEnvironment(authorization: .authorizedAlways)
    #expect(world.storedLastKnownLocation == nil)
    let manager = world.run { CLLocationManager() }
    manager.startUpdatingLocation()
    world.deliver(location(world, north: 10))
    let stored = try #require(world.storedLastKnownLocation)
    #expect(abs(stored.coordinate.latitude - (Self.paris.latitude + 10 / 111_200)) < 1e-9)
  }

  @Test func sourceFailureGivesLocationUnknownAndUpdatesResume() {
    let world = SimulatedEnvironment(authorization: .authorizedAlways)
    let delegate = RecordingDelegate()
    let manager = world.run { CLLocationManager() }
    manager.delegate = delegate
    manager.startUpdatingLocation()
    world.failSource()
    #expect(delegate.errors.map(\.code) == [.locationUnknown])
    world.deliver(location(world))
    #expect(delegate.locations.count == 1)
  }

  @Test func sourcesEndedIsMarked() throws {
    let world = SimulatedEnvironment(authorization: .authorizedAlways)
    let delegate = RecordingDelegate()
    let manager = world.run { CLLocationManager() }
    manager.delegate = delegate
    manager.startUpdatingLocation()
    world.endSource()
    let error = try #require(delegate.errors.first)
    #expect(error.code == .locationUnknown)
    #expect(error.userInfo["CoreLocationSourcesEnded"] as? Bool == true)
  }

  @Test func everyManagerOfTheAppIsTold() {
    let world = SimulatedEnvironment(authorization: .authorizedAlways)
    let first = RecordingDelegate()
    let second = RecordingDelegate()
    let managers = world.run { [CLLocationManager(), CLLocationManager()] }
    managers[0].delegate = first
    managers[1].delegate = second
    managers[0].startUpdatingLocation()
    managers[1].startUpdatingLocation()
    world.deliver(location(world))
    #expect(first.locations.count == 1)
    #expect(second.locations.count == 1)
    managers[0].stopUpdatingLocation()
    #expect(world.source.isRunning)
    managers[1].stopUpdatingLocation()
    #expect(!world.source.isRunning)
  }

  @Test func legacyDelegateMethodsStillWork() {
    let world = SimulatedEnvironment(authorization: .authorizedAlways)
    let delegate = LegacyDelegate()
    let manager = world.run { CLLocationManager() }
    manager.delegate = delegate
    manager.startUpdatingLocation()
    world.deliver(location(world))
    world.deliver(location(world, north: 10))
    #expect(delegate.statuses == [.authorizedAlways])
    #expect(delegate.updates.count == 2)
    #expect(
      delegate.updates.last?.old.coordinate.latitude
        == delegate.updates.first?.new.coordinate.latitude)
  }

  @Test func delegateIsWeak() {
    let world = SimulatedEnvironment(authorization: .authorizedAlways)
    let manager = world.run { CLLocationManager() }
    do {
      let delegate = RecordingDelegate()
      manager.delegate = delegate
      #expect(manager.delegate != nil)
    }
    #expect(manager.delegate == nil)
  }

  @Test func releasedManagerStopsItsUpdates() {
    let world = SimulatedEnvironment(authorization: .authorizedAlways)
    do {
      let manager = world.run { CLLocationManager() }
      manager.startUpdatingLocation()
      #expect(world.source.isRunning)
    }
    world.pump()
    #expect(!world.source.isRunning)
  }

  @Test func defaultsMatchApple() {
    let world = SimulatedEnvironment()
    let manager = world.run { CLLocationManager() }
    #expect(manager.desiredAccuracy == kCLLocationAccuracyBest)
    #expect(manager.distanceFilter == kCLDistanceFilterNone)
    #expect(manager.activityType == .other)
    #expect(manager.pausesLocationUpdatesAutomatically)
    #expect(!manager.allowsBackgroundLocationUpdates)
    #expect(!manager.showsBackgroundLocationIndicator)
    #expect(manager.location == nil)
    #expect(manager.accuracyAuthorization == .fullAccuracy)
  }

  @Test func liveUpdatesAsyncSequence() async throws {
    let world = SimulatedEnvironment(authorization: .authorizedWhenInUse)
    let updates = world.run { CLLocationUpdate.liveUpdates() }
    var iterator = updates.makeAsyncIterator()
    #expect(world.source.isRunning)
    world.deliver(location(world))
    let first = try #require(await iterator.next())
    #expect(first.location?.horizontalAccuracy == 5)
    #expect(!first.isStationary)
    world.endSource()
    #expect(await iterator.next() == nil)
  }

  @Test func liveUpdatesReportDenial() async throws {
    let world = SimulatedEnvironment(authorization: .denied)
    var iterator = world.run { CLLocationUpdate.liveUpdates(.fitness) }.makeAsyncIterator()
    let update = try #require(await iterator.next())
    #expect(update.authorizationDenied)
    #expect(update.location == nil)
  }
}

@Suite struct LiveUpdatesStationaryTests {
  @Test func stationaryUpdateThenSilenceThenMovement() async throws {
    let world = SimulatedEnvironment(authorization: .authorizedWhenInUse)
    var iterator = world.run { CLLocationUpdate.liveUpdates() }.makeAsyncIterator()
    func here(_ metres: Double) -> CLLocation {
      CLLocation(
        coordinate: CLLocationCoordinate2D(latitude: 45 + metres / 111_132, longitude: 7),
        altitude: 0,
        horizontalAccuracy: 5, verticalAccuracy: -1, timestamp: world.now)
    }
    // Five minutes in one place, a fix every 30 s: the last says stationary.
    var updates: [CLLocationUpdate] = []
    for _ in 0...10 {
      world.deliver(here(0))
      updates.append(try #require(await iterator.next()))
      world.advance(by: 30)
    }
    #expect(updates.prefix(10).allSatisfy { !$0.isStationary })
    #expect(updates.last?.isStationary == true)
    // Still there: nothing more is delivered; then a move of 200 m resumes with isStationary false.
    world.deliver(here(1))
    world.deliver(here(200))
    let moved = try #require(await iterator.next())
    #expect(!moved.isStationary)
    #expect((moved.location?.coordinate.latitude ?? 0) > 45.0015)
  }
}
