import CoreLocation
import CoreLocationTesting
import Foundation
import Testing

/// Records the visits and errors a delegate hears.
final class VisitDelegate: NSObject, CLLocationManagerDelegate, @unchecked Sendable {
  // @unchecked: the simulated environment calls it on the test's own thread only.
  var visits: [CLVisit] = []
  var errors: [CLError.Code] = []

  func locationManager(_ manager: CLLocationManager, didVisit visit: CLVisit) {
    visits.append(visit)
  }

  func locationManager(_ manager: CLLocationManager, didFailWithError error: any Error) {
    if let error = error as? CLError { errors.append(error.code) }
  }
}

/// A test double as written on Apple platforms: `CLVisit()` subclassed with its properties
/// overridden.
final class MockVisit: CLVisit, @unchecked Sendable {
  override var arrivalDate: Date { Date(timeIntervalSince1970: 1000) }
  override var departureDate: Date { .distantFuture }
  override var coordinate: CLLocationCoordinate2D {
    CLLocationCoordinate2D(latitude: 52, longitude: 5)
  }
  override var horizontalAccuracy: CLLocationAccuracy { 25 }
}

/// `startMonitoringVisits()` through the public API on the simulated environment's manual clock.
/// Its scripted source is a receiver, which visit monitoring duty-cycles: the walk below offers a
/// location every 5 s and only those of the bursts are used.
@Suite struct CLLocationManagerVisitTests {
  /// Metres per degree of latitude near 52° N.
  static let metresPerDegree = 111_250.0

  func location(_ world: SimulatedEnvironment, east metres: Double) -> CLLocation {
    CLLocation(
      coordinate: CLLocationCoordinate2D(
        latitude: 52, longitude: 5 + metres / (Self.metresPerDegree * cos(52 * Double.pi / 180))),
      altitude: 0, horizontalAccuracy: 8, verticalAccuracy: -1, timestamp: world.now)
  }

  /// Offers the device's position every 5 s for `seconds`, moving at `speed` m/s from `east`;
  /// returns where it ends.
  @discardableResult
  func move(
    _ world: SimulatedEnvironment, from east: Double, speed: Double, for seconds: Double
  ) -> Double {
    var position = east
    var elapsed = 0.0
    while elapsed < seconds {
      world.advance(by: 5)
      position += speed * 5
      world.deliver(location(world, east: position))
      elapsed += 5
    }
    return position
  }

  @Test func aStayIsReportedAtArrivalAndDepartureToEveryManager() throws {
    let world = SimulatedEnvironment(authorization: .authorizedAlways)
    let (manager, other) = world.run { (CLLocationManager(), CLLocationManager()) }
    let delegate = VisitDelegate()
    let otherDelegate = VisitDelegate()
    manager.delegate = delegate
    other.delegate = otherDelegate
    manager.startMonitoringVisits()
    world.pump()
    // At home when monitoring starts (the arrival is not seen), then a drive of 2 km.
    move(world, from: 0, speed: 0, for: 1200)
    let leftHome = world.now
    move(world, from: 0, speed: 10, for: 200)
    let arrived = world.now
    move(world, from: 2000, speed: 0, for: 1800)
    let departed = world.now
    move(world, from: 2000, speed: 10, for: 300)
    #expect(delegate.visits.count == 3)
    #expect(otherDelegate.visits.count == 3)
    let home = try #require(delegate.visits.first)
    #expect(home.arrivalDate == .distantPast)
    #expect(abs(home.departureDate.timeIntervalSince(leftHome)) <= 200)
    #expect(abs(home.coordinate.latitude - 52) < 0.001)
    let arrival = delegate.visits[1]
    #expect(arrival.departureDate == .distantFuture)
    #expect(abs(arrival.arrivalDate.timeIntervalSince(arrived)) <= 70)
    let place = location(world, east: 2000)
    let centre = CLLocation(
      latitude: arrival.coordinate.latitude, longitude: arrival.coordinate.longitude)
    #expect(centre.distance(from: place) < 30)
    #expect(arrival.horizontalAccuracy > 0 && arrival.horizontalAccuracy < 50)
    let departure = delegate.visits[2]
    #expect(departure.arrivalDate == arrival.arrivalDate)
    #expect(departure.departureDate <= departed)
    #expect(departed.timeIntervalSince(departure.departureDate) <= 190)
  }

  /// A stop at a traffic light is no visit; after `stopMonitoringVisits()` nothing is reported.
  @Test func aShortStopIsNoVisitAndStopEndsMonitoring() {
    let world = SimulatedEnvironment(authorization: .authorizedAlways)
    let manager = world.run { CLLocationManager() }
    let delegate = VisitDelegate()
    manager.delegate = delegate
    manager.startMonitoringVisits()
    world.pump()
    var east = move(world, from: 0, speed: 12, for: 300)
    east = move(world, from: east, speed: 0, for: 90)
    east = move(world, from: east, speed: 12, for: 300)
    #expect(delegate.visits.isEmpty)
    manager.stopMonitoringVisits()
    world.pump()
    east = move(world, from: east, speed: 0, for: 1800)
    move(world, from: east, speed: 12, for: 300)
    #expect(delegate.visits.isEmpty)
  }

  /// A denied app is told so; nothing runs.
  @Test func aDeniedAppHearsDenied() {
    let world = SimulatedEnvironment(authorization: .denied)
    let manager = world.run { CLLocationManager() }
    let delegate = VisitDelegate()
    manager.delegate = delegate
    manager.startMonitoringVisits()
    world.pump()
    #expect(delegate.errors == [.denied])
  }

  /// `CLVisit()` as on Apple platforms: no information, and subclasses override every property.
  @Test func visitsCanBeCreatedAndSubclassed() throws {
    let empty = CLVisit()
    #expect(empty.arrivalDate == .distantPast)
    #expect(empty.departureDate == .distantFuture)
    #expect(!CLLocationCoordinate2DIsValid(empty.coordinate))
    #expect(empty.horizontalAccuracy < 0)
    let mock: CLVisit = MockVisit()
    #expect(mock.arrivalDate == Date(timeIntervalSince1970: 1000))
    #expect(mock.coordinate.latitude == 52)
    #expect(mock.horizontalAccuracy == 25)
    let copy = try #require(mock.copy() as? CLVisit)
    #expect(copy === mock)
  }
}
