import CoreLocation
import Foundation
import Synchronization

/// Records what a manager's delegate hears.
package final class DaemonDelegate: NSObject, CLLocationManagerDelegate, @unchecked Sendable {
  // @unchecked: called on the test's thread (pumped scheduler), read under the lock.
  package let calls = Mutex<[String]>([])
  package let locations = Mutex<[CLLocation]>([])
  package let errors = Mutex<[CLError]>([])
  package let visits = Mutex<[CLVisit]>([])

  /// A delegate that has heard nothing yet.
  package override init() { super.init() }

  package func contains(_ call: String) -> Bool { calls.withLock { $0.contains(call) } }
  package func count(_ call: String) -> Int { calls.withLock { $0.filter { $0 == call }.count } }

  package func locationManagerDidChangeAuthorization(_ manager: CLLocationManager) {
    calls.withLock { $0.append("authorization \(manager.authorizationStatus.rawValue)") }
  }

  package func locationManager(
    _ manager: CLLocationManager, didUpdateLocations locations: [CLLocation]
  ) {
    self.locations.withLock { $0.append(contentsOf: locations) }
  }

  package func locationManager(_ manager: CLLocationManager, didFailWithError error: any Error) {
    guard let error = error as? CLError else { return }
    errors.withLock { $0.append(error) }
    calls.withLock { $0.append("error \(error.code.rawValue)") }
  }

  package func locationManager(_ manager: CLLocationManager, didUpdateHeading newHeading: CLHeading)
  {
    calls.withLock { $0.append("heading \(newHeading.magneticHeading)") }
  }

  package func locationManager(_ manager: CLLocationManager, didStartMonitoringFor region: CLRegion)
  {
    calls.withLock { $0.append("start \(region.identifier)") }
  }

  package func locationManager(_ manager: CLLocationManager, didEnterRegion region: CLRegion) {
    calls.withLock { $0.append("enter \(region.identifier)") }
  }

  package func locationManager(_ manager: CLLocationManager, didExitRegion region: CLRegion) {
    calls.withLock { $0.append("exit \(region.identifier)") }
  }

  /// Records `visit ARRIVAL DEPARTURE`, seconds since 1970 (`-` for distant past or future).
  package func locationManager(_ manager: CLLocationManager, didVisit visit: CLVisit) {
    let arrival =
      visit.arrivalDate == .distantPast ? "-" : "\(visit.arrivalDate.timeIntervalSince1970)"
    let departure =
      visit.departureDate == .distantFuture ? "-" : "\(visit.departureDate.timeIntervalSince1970)"
    visits.withLock { $0.append(visit) }
    calls.withLock { $0.append("visit \(arrival) \(departure)") }
  }
}
