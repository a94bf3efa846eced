import Foundation
internal import LocationEngine
internal import LocationModel
import LocationServices

// Visit monitoring (README, "Visits"). The rule, which Apple does not publish, is `VisitDetector`'s
// (time-based clustering after Kang et al., "Extracting places from traces of locations", 2004):
// a visit is a stay within 150 m of its centre for at least 10 minutes; it is reported when
// recognised (`departureDate` is `Date.distantFuture`) and when the device has been outside for
// 60 s (both dates, the departure at the last location inside). Dates are those of the locations,
// not of detection. Visits belong to the app: starting on one manager starts them for all, and
// every manager's delegate is told. An app with no decision yet asks for always authorization.
// The sources run as for significant change: a cheap source that gives 100 m or better runs in
// preference to a receiver, and a receiver that must serve is on for one fix, then off for 60 s
// while moving and 180 s during a visit. Monitoring is kept in the store until stopped: a process
// that starts again resumes it; under `locationd`, visits are detected while the app is not running
// and delivered once to its next manager.
extension ManagerCore {
  func startVisits() {
    environment.hub.startVisits(requester: id)
  }

  func stopVisits() {
    environment.hub.send(.stopVisits)
  }

  /// Tells the delegate of a visit.
  func deliverVisit(_ visit: Visit, target: DeliveryTarget) {
    let box = UncheckedVisit(visit: CLVisit(visit))
    target.run { [self] in
      guard let manager = managerReference else { return }
      delegate?.locationManager(manager, didVisit: box.visit)
    }
  }
}

/// A visit handed to the delivery thread; `CLVisit` is immutable.
struct UncheckedVisit: @unchecked Sendable {
  let visit: CLVisit
}
