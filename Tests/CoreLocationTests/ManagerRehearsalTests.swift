import CoreLocationTesting
import Foundation
import LocationModel
import TestSupport
import Testing

@testable import CoreLocation

/// A manager's rehearsal of a delivery (the wake-up before an epoch, `HubClient.rehearse`; issue
/// 19) makes the locations and drops them: the delegate hears nothing and the manager's last
/// location stays as it was.
@Suite struct ManagerRehearsalTests {
  @Test func aRehearsalTellsTheDelegateNothing() {
    let world = SimulatedEnvironment()
    let manager = world.run { CLLocationManager() }
    let delegate = DeferredDelegate()
    manager.delegate = delegate
    manager.startUpdatingLocation()
    world.pump()
    manager.core.rehearse([fix(45, 7)])
    world.pump()
    #expect(delegate.batches.isEmpty)
    #expect(manager.location == nil)
    let real = CLLocation(
      coordinate: CLLocationCoordinate2D(latitude: 46, longitude: 7), altitude: 0,
      horizontalAccuracy: 5, verticalAccuracy: -1, timestamp: world.now)
    world.deliver(real)
    manager.core.rehearse([fix(45, 7)])
    world.pump()
    #expect(delegate.batches.map { $0.map(\.coordinate.latitude) } == [[46]])
    #expect(manager.location?.coordinate.latitude == 46)
  }
}
