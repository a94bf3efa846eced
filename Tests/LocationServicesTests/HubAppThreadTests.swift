import Dispatch
import Foundation
import LocationEngine
import LocationModel
import LocationStore
import Synchronization
import TestSupport
import Testing

@testable import LocationServices
@testable import LocationSources

#if canImport(Glibc)
  import Glibc
#endif

/// Issue 19, embedded: an app's reading run loop (`RunLoopReading`; here the test's thread inside
/// `RunLoopReadingDeliveries.collect`, as the run loop's `perform` is) runs the engine for the fix
/// it read and delivers the locations there, and leaves the rest of the hub's work, the store
/// first, to the hub's queue.
@Suite struct HubAppThreadTests {
  /// Records each delivered location's latitude and the thread it came on.
  final class ThreadClient: HubClient {
    let received = Mutex<[(latitude: Double, thread: pthread_t)]>([])

    func hub(_ hub: LocationHub, deliver delivery: HubDelivery) {
      guard case .locations(let fixes) = delivery else { return }
      let thread = pthread_self()
      received.withLock { received in
        for fix in fixes { received.append((fix.latitude, thread)) }
      }
    }
  }

  /// Memory persistence that records the thread of each save of the last known location.
  final class SaveThreads: ForwardingPersistence {
    let base = MemoryPersistence()
    let saves = Mutex<[(latitude: Double, thread: pthread_t)]>([])

    func saveLastKnownLocation(_ fix: Fix) {
      let thread = pthread_self()
      saves.withLock { $0.append((fix.latitude, thread)) }
      base.saveLastKnownLocation(fix)
    }
  }

  @Test func runHereOnAnAppsThreadRunsOnlyItsOwnWorkThere() async {
    let executor = HubExecutor(queue: DispatchQueue(label: "test.hub"))
    let me = pthread_self()
    let threads = Mutex<[String: pthread_t]>([:])
    #expect(!executor.isAppThread)
    _ = RunLoopReadingDeliveries.collect {
      #expect(executor.isAppThread)
      executor.runHere {
        threads.withLock { $0["own"] = pthread_self() }
        // Work sent from the app's work: the hub's, not the app's.
        executor.run { threads.withLock { $0["sent"] = pthread_self() } }
      }
    }
    let own = threads.withLock { $0["own"] }
    #expect(
      own.map { pthread_equal($0, me) != 0 } == true, "the fix's work ran on the app's thread")
    #expect(await eventually { threads.withLock { $0["sent"] != nil } })
    let sent = threads.withLock { $0["sent"] }
    #expect(sent.map { pthread_equal($0, me) == 0 } == true, "the rest ran on the hub's queue")
    // Elsewhere (a source's own thread: in `locationd`, the pool's fan-out to every app's hub),
    // the same: the caller runs its own work, as a caller's thread, and the rest goes to the
    // queue (the next hub of the fan-out does not wait for it).
    let plainQueue = DispatchQueue(label: "test.plain")
    let plain = HubExecutor(queue: plainQueue)
    let order = Mutex<[String]>([])
    let inline = Mutex<Bool?>(nil)
    let sentAsCaller = Mutex<Bool?>(nil)
    #expect(!plain.isAppThread)
    // Held, the queue cannot run the rest before `runHere` returns.
    plainQueue.suspend()
    plain.runHere {
      order.withLock { $0.append("own") }
      inline.withLock { $0 = plain.isAppThread }
      plain.run {
        let callerThread = plain.isAppThread
        sentAsCaller.withLock { $0 = callerThread }
        order.withLock { $0.append("sent") }
      }
    }
    #expect(!plain.isAppThread, "only while the work runs")
    #expect(inline.withLock { $0 } == true, "the work ran as a caller's thread")
    #expect(order.withLock { $0 } == ["own"], "the rest was not run by the caller")
    plainQueue.resume()
    #expect(await eventually { order.withLock { $0 } == ["own", "sent"] })
    #expect(sentAsCaller.withLock { $0 } == false, "the rest ran on the queue")
  }

  @Test func aFixReadOnAnAppsThreadIsDeliveredThereAndSavedOnTheQueue() async throws {
    let persistence = SaveThreads()
    let source = ScriptedSource()
    let hub = LocationHub(
      app: "org.example.app-thread", sources: .objects { [source] }, persistence: persistence,
      policy: .grant)
    // Every fix saves the last known location: the store's work that must stay off the app.
    hub.state.withLock { $0.engine.saveInterval = 0 }
    let client = ThreadClient()
    let id = hub.register(client)
    hub.startUpdates(id, UpdateRequest())
    #expect(await eventually { source.isRunning })
    // The thread each fix was emitted on (a task may resume on another thread after an `await`,
    // so it is taken at the emit), and the first fix delivered on it.
    var emitted: [(latitude: Double, thread: pthread_t)] = []
    func deliveredHere() -> (latitude: Double, thread: pthread_t)? {
      client.received.withLock { received in
        emitted.first { sent in
          received.contains {
            $0.latitude == sent.latitude && pthread_equal($0.thread, sent.thread) != 0
          }
        }
      }
    }
    // The hub's queue may still be finishing the start: then the fix waits its turn there, as it
    // should. Fixes are sent until one finds the hub idle and runs here.
    var latitude = 50.0
    let ranHere = await eventually {
      latitude += 0.001
      let fix = fix(latitude, 5, time: 1_767_225_600 + latitude * 1000)
      emitted.append((fix.latitude, emitAsAppThread { source.emit(fix) }))
      return deliveredHere() != nil
    }
    #expect(ranHere)
    let here = try #require(deliveredHere())
    #expect(
      await eventually {
        persistence.saves.withLock { $0.contains { $0.latitude == here.latitude } }
      })
    let saves = persistence.saves.withLock { $0 }
    #expect(!saves.isEmpty)
    #expect(
      saves.allSatisfy { pthread_equal($0.thread, here.thread) == 0 },
      "no save of the last known location on the app's thread")
  }
}
