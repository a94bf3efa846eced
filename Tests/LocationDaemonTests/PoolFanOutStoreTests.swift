import Dispatch
import Foundation
import LocationDaemon
import LocationEngine
import LocationModel
import LocationServices
import LocationSources
import Synchronization
import TestSupport
import Testing

/// Issue 19, `locationd`: the source pool hands each fix to every hub over its relays, one after
/// the other on the source's thread (each hub's step runs there, with no hop). A hub's slow
/// effects (the save of the last known location, a commit on a slow disk) must not stand between
/// the fix and the next hub: they go to that hub's queue. Live hubs; no sleeps.
@Suite struct PoolFanOutStoreTests {
  /// Memory persistence whose save of the last known location waits until the test opens it (a
  /// disk that takes its time over an `fsync`).
  final class SlowSaves: ForwardingPersistence {
    let base = MemoryPersistence()
    let gate = DispatchSemaphore(value: 0)
    let waiting = Mutex(0)

    func saveLastKnownLocation(_ fix: Fix) {
      waiting.withLock { $0 += 1 }
      gate.wait()
      base.saveLastKnownLocation(fix)
    }
  }

  /// Records the latitudes delivered.
  final class Latitudes: HubClient {
    let received = Mutex<[Double]>([])

    func hub(_ hub: LocationHub, deliver delivery: HubDelivery) {
      guard case .locations(let fixes) = delivery else { return }
      received.withLock { $0 += fixes.map(\.latitude) }
    }
  }

  @Test func aHubsSlowSaveDoesNotHoldTheNextHubsFix() async throws {
    let source = ScriptedSource(url: "scripted://pool")
    let pool = SourcePool(sources: [source])
    let slow = SlowSaves()
    // However the test ends, the held save is let go of (three times: more than it can take).
    defer { for _ in 0..<3 { slow.gate.signal() } }
    let first = LocationHub(
      app: "org.example.first", sources: .objects { pool.relays() }, persistence: slow,
      policy: .grant)
    let second = LocationHub(
      app: "org.example.second", sources: .objects { pool.relays() },
      persistence: MemoryPersistence(), policy: .grant)
    let firstClient = Latitudes()
    let secondClient = Latitudes()
    let firstID = first.register(firstClient)
    let secondID = second.register(secondClient)
    let request = UpdateRequest(desiredAccuracy: 5, distanceFilter: -1)
    // The first hub holds the source first: its relay is first in the fan-out.
    first.startUpdates(firstID, request)
    #expect(await eventually(timeout: 60) { pool.status.first?.subscribers == 1 })
    second.startUpdates(secondID, request)
    #expect(await eventually(timeout: 60) { pool.status.first?.subscribers == 2 })
    #expect(source.isRunning)
    // The source's thread: the test's may not block.
    Thread { source.emit(fix(52.37, 4.89)) }.start()
    #expect(await eventually(timeout: 60) { slow.waiting.withLock { $0 } == 1 })
    #expect(
      await eventually(timeout: 60) { secondClient.received.withLock { $0 } == [52.37] },
      "the second hub had the fix while the first one's save waited")
    #expect(firstClient.received.withLock { $0 } == [52.37])
    slow.gate.signal()
    first.unregister(firstID)
    second.unregister(secondID)
  }
}
