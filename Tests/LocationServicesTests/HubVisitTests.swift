import Foundation
import LocationEngine
import LocationModel
import LocationServices
import LocationSources
import LocationStore
import Synchronization
import TestSupport
import Testing

/// Visit monitoring in the hub: the app's setting is kept across restarts, and a visit is
/// committed before anyone hears it, held while the store fails (README, "When the store fails").
@Suite struct HubVisitTests {
  static let app = "org.example.visits"

  /// Memory persistence whose `commitVisit` fails while `failing` is set.
  final class FlakyPersistence: ForwardingPersistence {
    let base = MemoryPersistence()
    let failing = Mutex(false)
    let committed = Mutex<[Visit]>([])

    func commitVisit(_ visit: Visit, app: String, time: Double) throws(StoreError) {
      if failing.withLock({ $0 }) {
        throw StoreError(code: .other, message: "disk full", operation: "commitVisit")
      }
      committed.withLock { $0.append(visit) }
    }
  }

  /// A hub of the app with one scripted (cheap) source and a recording client.
  struct Running {
    let clock = ManualClock(wall: 1_767_225_600)
    let source = ScriptedSource()
    let client = RecordingClient()
    let hub: LocationHub
    let id: ClientID

    init(_ persistence: any HubPersistence) {
      let source = self.source
      hub = LocationHub(
        app: HubVisitTests.app, sources: .objects { [source] }, persistence: persistence,
        policy: .grant, clock: clock)
      id = hub.register(client)
    }

    var visits: [Visit] {
      client.deliveries.compactMap { delivery in
        if case .visit(let visit) = delivery { return visit }
        return nil
      }
    }

    /// A fix at `north` metres from 52° N 5° E every minute for `minutes`, stamped by the clock.
    func stay(north: Double, minutes: Int) {
      for _ in 0..<minutes {
        clock.advance(by: 60)
        source.emit(fix(52 + north / 111_250, 5, time: clock.now.wall, accuracy: 10))
      }
    }
  }

  @Test func monitoringIsKeptForTheAppUntilStopped() {
    let persistence = MemoryPersistence()
    let first = Running(persistence)
    #expect(!first.hub.monitorsVisits)
    first.hub.startVisits(requester: first.id)
    #expect(first.hub.monitorsVisits)
    #expect(persistence.monitorsVisits(app: Self.app))
    first.hub.unregister(first.id)

    // A restart: monitoring resumes at once, and the source runs for it with no request.
    let second = Running(persistence)
    #expect(second.hub.monitorsVisits)
    #expect(second.source.isRunning)
    second.hub.send(.stopVisits)
    #expect(!second.hub.monitorsVisits)
    #expect(!persistence.monitorsVisits(app: Self.app))
    #expect(!second.source.isRunning)
  }

  @Test func aVisitIsHeldWhileTheStoreFailsAndDeliveredOnceCommitted() {
    let persistence = FlakyPersistence()
    let running = Running(persistence)
    running.hub.startVisits(requester: running.id)
    running.stay(north: 0, minutes: 15)  // where monitoring began: no arrival
    running.stay(north: 3000, minutes: 15)  // the departure from the first place, then an arrival
    #expect(running.visits.count == 2)
    #expect(persistence.committed.withLock { $0.count } == 2)
    persistence.failing.withLock { $0 = true }
    running.stay(north: 6000, minutes: 3)  // the departure: not committed, not told
    #expect(running.visits.count == 2)
    #expect(running.hub.heldWrites == 1)
    persistence.failing.withLock { $0 = false }
    running.clock.advance(by: 600)  // the retry
    #expect(running.hub.heldWrites == 0)
    let visits = running.visits
    #expect(visits.count == 3)
    #expect(visits.map(\.isDeparture) == [true, false, true])
    #expect(visits[0].arrival == nil)
    #expect(visits[2].arrival == visits[1].arrival)
    #expect(persistence.committed.withLock { $0 } == visits)
  }
}
