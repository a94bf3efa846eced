import CoreLocation
import CoreLocationTesting
import Foundation
import Geodesy
import Testing

/// A delegate that records heading callbacks and answers the calibration question.
final class HeadingDelegate: NSObject, CLLocationManagerDelegate, @unchecked Sendable {
  // @unchecked: the simulated environment calls it on the test's thread only.
  var headings: [CLHeading] = []
  var errors: [CLError] = []
  var calibrationAsked = 0
  var showCalibration = true

  func locationManager(_ manager: CLLocationManager, didUpdateHeading newHeading: CLHeading) {
    headings.append(newHeading)
  }

  func locationManager(_ manager: CLLocationManager, didFailWithError error: any Error) {
    if let error = error as? CLError { errors.append(error) }
  }

  func locationManagerShouldDisplayHeadingCalibration(_ manager: CLLocationManager) -> Bool {
    calibrationAsked += 1
    return showCalibration
  }
}

@Suite struct CLLocationManagerHeadingTests {
  // Resolute Bay, where the declination is large (about -16° in 2026).
  static let resolute = CLLocationCoordinate2D(latitude: 74.697, longitude: -94.830)

  func setUp(_ world: SimulatedEnvironment) -> (CLLocationManager, HeadingDelegate) {
    let manager = world.run { CLLocationManager() }
    let delegate = HeadingDelegate()
    manager.delegate = delegate
    return (manager, delegate)
  }

  @Test func defaultsAndAvailability() {
    let world = SimulatedEnvironment(authorization: .authorizedWhenInUse)
    let (manager, _) = setUp(world)
    #expect(manager.headingFilter == 1)
    #expect(manager.headingOrientation == .portrait)
    #expect(manager.heading == nil)
    #expect(world.run { CLLocationManager.headingAvailable() })
  }

  @Test func magneticOnlyWithoutLocationUpdates() throws {
    let world = SimulatedEnvironment(authorization: .authorizedWhenInUse)
    let (manager, delegate) = setUp(world)
    manager.startUpdatingHeading()
    #expect(world.source.isRunning)
    world.deliverHeading(magneticHeading: 10, accuracy: 3)
    let heading = try #require(delegate.headings.last)
    #expect(heading.magneticHeading == 10)
    #expect(heading.trueHeading == -1)  // Apple: -1 unless location updates run
    #expect(heading.headingAccuracy == 3)
    #expect(manager.heading?.magneticHeading == 10)
    manager.stopUpdatingHeading()
    #expect(!world.source.isRunning)
  }

  @Test func trueHeadingFromTheWorldMagneticModel() throws {
    let world = SimulatedEnvironment(authorization: .authorizedWhenInUse)
    let (manager, delegate) = setUp(world)
    manager.startUpdatingLocation()
    manager.startUpdatingHeading()
    world.deliver(
      CLLocation(
        coordinate: Self.resolute, altitude: 0, horizontalAccuracy: 10, verticalAccuracy: 5,
        timestamp: world.now))
    world.deliverHeading(magneticHeading: 100)
    let heading = try #require(delegate.headings.last)
    let field = try MagneticModel.field(
      latitude: Self.resolute.latitude, longitude: Self.resolute.longitude, height: 0,
      unixTime: world.now.timeIntervalSince1970)
    var expected = (100 + field.declination).truncatingRemainder(dividingBy: 360)
    if expected < 0 { expected += 360 }
    #expect(abs(heading.trueHeading - expected) < 1e-6)
    #expect(field.declination < -10)  // large western declination
  }

  @Test func filterOnTheCircleAndOrientation() {
    let world = SimulatedEnvironment(authorization: .authorizedWhenInUse)
    let (manager, delegate) = setUp(world)
    manager.headingFilter = 5
    manager.startUpdatingHeading()
    for value in [358.0, 1.0, 3.5, 4.0, 10.0] { world.deliverHeading(magneticHeading: value) }
    // 358 delivered; 1 (3°) and 3.5 (5.5°... from 358 is 5.5°) : 3.5 is delivered; 4 (0.5°) no; 10 yes.
    #expect(delegate.headings.map(\.magneticHeading) == [358, 3.5, 10])
    manager.headingFilter = kCLHeadingFilterNone
    manager.headingOrientation = .landscapeLeft
    world.deliverHeading(magneticHeading: 10)
    #expect(delegate.headings.last?.magneticHeading == 100)
    manager.headingOrientation = .faceUp  // keeps the previous rotation
    world.deliverHeading(magneticHeading: 20)
    #expect(delegate.headings.last?.magneticHeading == 110)
    #expect(manager.headingOrientation == .faceUp)
  }

  @Test func interferenceAsksForCalibrationOncePerEpisode() throws {
    let world = SimulatedEnvironment(authorization: .authorizedWhenInUse)
    let (manager, delegate) = setUp(world)
    manager.headingFilter = kCLHeadingFilterNone
    manager.startUpdatingHeading()
    // 500 µT: ten times the Earth's field.
    world.deliverHeading(magneticHeading: 50, x: 300, y: 300, z: 300)
    world.deliverHeading(magneticHeading: 51, x: 300, y: 300, z: 300)
    #expect(delegate.errors.map(\.code) == [.headingFailure])
    #expect(delegate.calibrationAsked == 1)
    // While the calibration is "displayed", headings carry accuracy -1.
    let during = try #require(delegate.headings.last)
    #expect(during.headingAccuracy < 0)
    manager.dismissHeadingCalibrationDisplay()
    world.deliverHeading(magneticHeading: 52, accuracy: 4, x: 20, y: 0, z: 40)
    #expect(delegate.headings.last?.headingAccuracy == 4)
  }
}
