import Foundation
import LocationEngine
import LocationModel
import Synchronization
import TestSupport
import Testing

@testable import LocationServices
@testable import LocationSources

#if canImport(Glibc)
  import Glibc
#endif

/// Issue 19, embedded: what of a fix's work an app's reading run loop keeps, one rule at a time
/// (`HubAppThreadTests` has the save of the last known location). A step's effects after its
/// deliveries go to the hub's queue, the sources' stop included; a fix from a source that has
/// just recovered goes to the queue whole (it reconciles the sources first).
@Suite struct HubAppThreadRoutingTests {
  /// A source that records the thread of each `stop()`.
  final class StopThreadSource: LocationSource {
    let descriptor = SourceDescriptor(
      url: "scripted://threads", nominalAccuracy: 5, power: .none, producesLocation: true,
      producesBeacons: false, producesScans: false)
    private let state = Mutex<(context: (any SourceContext)?, stops: [pthread_t])>((nil, []))

    func start(context: any SourceContext) { state.withLock { $0.context = context } }

    func stop() {
      let thread = pthread_self()
      state.withLock {
        $0.context = nil
        $0.stops.append(thread)
      }
    }

    var isRunning: Bool { state.withLock { $0.context != nil } }
    var stops: [pthread_t] { state.withLock { $0.stops } }
    func emit(_ fix: Fix) { state.withLock { $0.context }?.emit(fix) }
  }

  /// Records each delivered location's latitude and thread, and the errors delivered.
  final class Client: HubClient {
    let received = Mutex<[(latitude: Double, thread: pthread_t)]>([])
    let errors = Mutex(0)

    func hub(_ hub: LocationHub, deliver delivery: HubDelivery) {
      switch delivery {
      case .locations(let fixes):
        let thread = pthread_self()
        received.withLock { received in
          for fix in fixes { received.append((fix.latitude, thread)) }
        }
      case .error:
        errors.withLock { $0 += 1 }
      default:
        break
      }
    }

    /// The thread `latitude` was delivered on, once it was.
    func thread(of latitude: Double) -> pthread_t? {
      received.withLock { $0.first { $0.latitude == latitude }?.thread }
    }
  }

  private static let timeout: Double = 60

  /// A granted hub on `source` alone, with one registered `Client`.
  private static func hub(
    _ app: String, _ source: any LocationSource
  ) -> (hub: LocationHub, client: Client, id: ClientID) {
    let hub = LocationHub(
      app: app, sources: .objects { [source] }, persistence: MemoryPersistence(), policy: .grant)
    let client = Client()
    return (hub, client, hub.register(client))
  }

  /// A request for one location that a fix completes on the app's thread: the location is
  /// delivered there, and the sources it no longer needs are stopped on the hub's queue (the
  /// step's `demandSources` comes after the delivery). Without the split, the stop runs on the
  /// app's thread and this fails. The hub's queue may still be busy with the request when the
  /// fix comes (then the fix waits its turn there): attempts, each with a hub of its own, are
  /// made until one fix finds its hub idle and runs on the app's thread.
  @Test func aRequestCompletedOnAnAppsThreadStopsItsSourcesOnTheQueue() async throws {
    var ranHere = false
    for attempt in 0..<50 where !ranHere {
      let source = StopThreadSource()
      let (hub, client, id) = Self.hub("org.example.routing-demand-\(attempt)", source)
      // The request must outlive this test's waits: with the whole suite running, the test's
      // polls can be held up for longer than the engine's 10 s, and a request that timed out
      // has stopped its source before the test saw it run.
      hub.state.withLock { $0.engine.requestTimeout = 3600 }
      hub.requestLocation(id, UpdateRequest())
      #expect(await eventually(timeout: Self.timeout) { source.isRunning })
      let latitude = 50 + Double(attempt) / 1000
      let fix = fix(latitude, 5, time: 1_767_225_600 + Double(attempt))
      let app = emitAsAppThread { source.emit(fix) }
      #expect(await eventually(timeout: Self.timeout) { client.thread(of: latitude) != nil })
      ranHere = client.thread(of: latitude).map { pthread_equal($0, app) != 0 } ?? false
      #expect(await eventually(timeout: Self.timeout) { !source.isRunning })
      if ranHere {
        let stops = source.stops
        #expect(stops.count == 1)
        #expect(
          stops.allSatisfy { pthread_equal($0, app) == 0 },
          "no source stopped on the app's thread")
      }
    }
    #expect(ranHere, "a fix was delivered on the app's thread")
  }

  /// After a failure, the first fix of a source that recovered is delivered from the hub's
  /// queue, however idle the hub is (it reconciles the sources before its step): first shown
  /// possible, a plain fix delivered on the app's thread, then twenty recoveries, none there.
  /// Without the routing, a recovered fix read while the hub is idle runs here, and this fails.
  @Test func aRecoveredSourcesFixGoesToTheQueueWhole() async throws {
    let source = ScriptedSource()
    let (hub, client, id) = Self.hub("org.example.routing-recovered", source)
    hub.startUpdates(id, UpdateRequest())
    #expect(await eventually(timeout: Self.timeout) { source.isRunning })
    var latitude = 50.0
    /// Emits the next fix as an app's thread; its latitude and the thread.
    func emitHere() -> (latitude: Double, thread: pthread_t) {
      latitude += 0.001
      let fix = fix(latitude, 5, time: 1_767_225_600 + latitude * 1000)
      return (latitude, emitAsAppThread { source.emit(fix) })
    }
    let plainRanHere = await eventually(timeout: Self.timeout) {
      let sent = emitHere()
      return client.thread(of: sent.latitude).map { pthread_equal($0, sent.thread) != 0 } ?? false
    }
    #expect(plainRanHere, "the hub goes idle between fixes")
    for attempt in 1...20 {
      source.fail(SourceError(.disconnected, "gone for a moment", isPermanent: false))
      #expect(await eventually(timeout: Self.timeout) { client.errors.withLock { $0 } == attempt })
      let sent = emitHere()
      #expect(await eventually(timeout: Self.timeout) { client.thread(of: sent.latitude) != nil })
      let thread = try #require(client.thread(of: sent.latitude))
      #expect(
        pthread_equal(thread, sent.thread) == 0, "recovery \(attempt) ran on the app's thread")
    }
  }
}

/// Runs `emit` as an app's reading run loop would (inside `RunLoopReadingDeliveries.collect`), on
/// the calling thread; returns that thread (a task may resume on another thread after each
/// `await`, so it is taken at the emit).
func emitAsAppThread(_ emit: () -> Void) -> pthread_t {
  var thread = pthread_self()
  _ = RunLoopReadingDeliveries.collect {
    thread = pthread_self()
    emit()
  }
  return thread
}
