import CoreLocation
import Foundation
import LocationServices
import Synchronization

/// Delegate calls queued until the test pumps them (a delegate set after `init` sees every call).
package final class PumpedScheduler: DeliveryScheduler {
  private let work = Mutex<[@Sendable () -> Void]>([])

  /// A scheduler with nothing queued.
  package init() {}

  package func schedule(_ work: @escaping @Sendable () -> Void) {
    self.work.withLock { $0.append(work) }
  }

  /// Runs every queued call, in order, on the calling thread.
  package func pump() {
    while let next = work.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) { next() }
  }
}

/// A manager bound to a service, its delegate calls queued for `scheduler.pump()`, and the
/// delegate that records them.
package func boundManager(_ service: any LocationService) -> (
  scheduler: PumpedScheduler, delegate: DaemonDelegate, manager: CLLocationManager
) {
  let scheduler = PumpedScheduler()
  let delegate = DaemonDelegate()
  let environment = HubEnvironment(hub: service, scheduler: scheduler)
  let manager = HubEnvironment.$bound.withValue(environment) { CLLocationManager() }
  manager.delegate = delegate
  return (scheduler, delegate, manager)
}
