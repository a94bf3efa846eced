import CoreLocation
import Foundation
import LocationModel
import LocationServices
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Issue 15: delegate calls run on the run loop of the thread that created the manager (Apple's
/// current documentation), also when the service is started from another thread or task. Before,
/// they ran on the run loop of the thread that started the service.
@Suite struct DelegateThreadTests {
  final class ThreadDelegate: NSObject, CLLocationManagerDelegate, @unchecked Sendable {
    // @unchecked: an NSObject whose state is a Mutex and an Atomic.
    let thread = Mutex<pthread_t?>(nil)
    let delivered = Atomic(false)

    func locationManager(_ manager: CLLocationManager, didUpdateLocations locations: [CLLocation]) {
      thread.withLock { $0 = pthread_self() }
      delivered.store(true, ordering: .releasing)
    }
  }

  /// A thread that creates the manager and then runs its run loop until told to stop.
  final class Owner: @unchecked Sendable {
    // @unchecked: `manager` and `ownerThread` are written once on the owner thread before `made`
    // is set, and read by the test only after it.
    let environment: HubEnvironment
    let delegate = ThreadDelegate()
    let made = Atomic(false)
    let finish = Atomic(false)
    var manager: CLLocationManager?
    var ownerThread: pthread_t?

    init(environment: HubEnvironment) {
      self.environment = environment
    }

    func start() {
      Thread { [self] in run() }.start()
    }

    /// Starts updates from a thread of its own, which has no run loop running.
    func startUpdatesOnAnotherThread() {
      Thread { [self] in manager?.startUpdatingLocation() }.start()
    }

    private func run() {
      ownerThread = pthread_self()
      let manager = HubEnvironment.$bound.withValue(environment) { CLLocationManager() }
      manager.delegate = delegate
      self.manager = manager
      made.store(true, ordering: .releasing)
      runCurrentRunLoop { finish.load(ordering: .acquiring) }
    }
  }

  @Test func callsRunOnTheCreatingThreadWhenStartedElsewhere() async throws {
    let source = ScriptedSource()
    let persistence = MemoryPersistence()
    persistence.setAuthorization(
      AuthorizationSnapshot(status: AuthorizationStatus.authorizedAlways),
      app: "org.example.thread-test")
    let hub = LocationHub(
      app: "org.example.thread-test", sources: .objects { [source] }, persistence: persistence)
    let owner = Owner(environment: HubEnvironment(hub: hub, scheduler: nil))
    owner.start()
    defer { owner.finish.store(true, ordering: .releasing) }
    #expect(await eventually { owner.made.load(ordering: .acquiring) })
    // Started from another thread, not from the owner thread.
    owner.startUpdatesOnAnotherThread()
    #expect(await eventually { source.isRunning })
    source.emit(fix(52, 5))
    #expect(await eventually { owner.delegate.delivered.load(ordering: .acquiring) })
    let delivering = try #require(owner.delegate.thread.withLock { $0 })
    #expect(pthread_equal(delivering, try #require(owner.ownerThread)) != 0)
    owner.manager?.stopUpdatingLocation()
  }
}
