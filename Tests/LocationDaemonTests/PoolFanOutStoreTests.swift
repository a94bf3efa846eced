import Dispatch
import Foundation
import LocationDaemon
import LocationEngine
import LocationModel
import LocationServices
import LocationSources
import LocationStore
import Synchronization
import TestSupport
import Testing

/// Issue 19, `locationd`: the source pool hands each fix to every hub over its relays, one after
/// the other on the source's thread (each hub's step runs there, with no hop). A hub's slow
/// effects (the save of the last known location, a commit on a slow disk) must not stand between
/// the fix (or a beacon's advertisement) and the next hub: they go to that hub's queue. Live hubs;
/// no sleeps.
@Suite struct PoolFanOutStoreTests {
  /// Where a slow write waits until the test opens it; every write after that goes through.
  final class Gate: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let opened = Mutex(false)
    /// How many writes have waited.
    let waiting = Mutex(0)

    func pass() {
      guard !opened.withLock({ $0 }) else { return }
      waiting.withLock { $0 += 1 }
      semaphore.wait()
      semaphore.signal()
    }

    func open() {
      opened.withLock { $0 = true }
      semaphore.signal()
    }
  }

  /// Memory persistence whose save of the last known location waits at a gate (a disk that
  /// takes its time over an `fsync`).
  final class SlowSaves: ForwardingPersistence {
    let base = MemoryPersistence()
    let gate = Gate()

    func saveLastKnownLocation(_ fix: Fix) {
      gate.pass()
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

  /// Two live hubs of two apps on one pool of `source`, the first on `persistence`, each with a
  /// client. Each hub starts using the source in turn (`start`), the first first: its relay is
  /// first in the fan-out.
  struct TwoHubs<Client: HubClient> {
    let hubs: [LocationHub]
    let clients: [Client]
    let ids: [ClientID]

    init(
      on source: ScriptedSource, persistence: any HubPersistence, clients: [Client],
      start: (LocationHub, ClientID) -> Void
    ) async {
      let pool = SourcePool(sources: [source])
      hubs = ["org.example.first", "org.example.second"].enumerated().map { index, app in
        LocationHub(
          app: app, sources: .objects { pool.relays() },
          persistence: index == 0 ? persistence : MemoryPersistence(), policy: .grant)
      }
      self.clients = clients
      ids = zip(hubs, clients).map { $0.register($1) }
      for index in hubs.indices {
        start(hubs[index], ids[index])
        #expect(await eventually(timeout: 60) { pool.status.first?.subscribers == index + 1 })
      }
    }

    func stop() { for (hub, id) in zip(hubs, ids) { hub.unregister(id) } }
  }

  /// Memory persistence whose commits of region events wait at a gate.
  final class SlowRegionCommits: ForwardingPersistence {
    let base = MemoryPersistence()
    let gate = Gate()

    func commitRegionEvents(
      _ events: [RegionEvent], group: String, app: String, time: Double
    ) throws(StoreError) {
      gate.pass()
      try base.commitRegionEvents(events, group: group, app: app, time: time)
    }
  }

  /// Records the identifiers of the regions found to be around the device (a first
  /// advertisement determines the state `inside`; on a machine so slow that 30 s passed without
  /// a beacon since monitoring began, the region was outside first, and it is an entry, then
  /// `inside`).
  final class RegionEvents: HubClient {
    let received = Mutex<[String]>([])

    func hub(_ hub: LocationHub, deliver delivery: HubDelivery) {
      guard case .regionEvents(_, let events) = delivery else { return }
      let inside = events.filter { $0.kind == .determined(.inside) || $0.kind == .entered }
      received.withLock { $0 += inside.map(\.identifier) }
    }
  }

  /// The same for a beacon advertisement: one hub's commit of its beacon region's new state goes
  /// to its queue, and the next hub hears the advertisement (and learns its own region's state)
  /// while that commit waits.
  @Test func aHubsSlowRegionCommitDoesNotHoldTheNextHubsAdvertisement() async throws {
    let radio = ScriptedSource(
      url: "scripted://radio", nominalAccuracy: .infinity, producesBeacons: true)
    let slow = SlowRegionCommits()
    defer { slow.gate.open() }
    let uuid = BeaconUUID(high: 0xE2C5_6DB5_DFFB_48D2, low: 0xB060_D0F5_A710_96E0)
    let door = RegionSpec.beacon(identifier: "door", BeaconConstraint(uuid: uuid, major: 1))
    let two = await TwoHubs(
      on: radio, persistence: slow, clients: [RegionEvents(), RegionEvents()]
    ) {
      $0.addRegion(door, group: "app", requester: $1)
    }
    let advertisement = BeaconAdvertisement(
      uuid: uuid, major: 1, minor: 7, measuredPower: -59, rssi: -60, address: "AA:BB",
      time: 1_767_225_600)
    Thread { radio.emit(advertisement) }.start()
    #expect(await eventually(timeout: 60) { slow.gate.waiting.withLock { $0 } == 1 })
    #expect(
      await eventually(timeout: 60) { two.clients[1].received.withLock { $0.contains("door") } },
      "the second hub found itself in its region while the first one's commit waited")
    #expect(two.clients[0].received.withLock { $0 }.isEmpty, "the first is told once committed")
    slow.gate.open()
    #expect(
      await eventually(timeout: 60) { two.clients[0].received.withLock { $0.contains("door") } })
    two.stop()
  }

  @Test func aHubsSlowSaveDoesNotHoldTheNextHubsFix() async throws {
    let source = ScriptedSource(url: "scripted://pool")
    let slow = SlowSaves()
    // However the test ends, the held save is let go of.
    defer { slow.gate.open() }
    let request = UpdateRequest(desiredAccuracy: 5, distanceFilter: -1)
    let two = await TwoHubs(on: source, persistence: slow, clients: [Latitudes(), Latitudes()]) {
      $0.startUpdates($1, request)
    }
    #expect(source.isRunning)
    // The source's thread: the test's may not block.
    Thread { source.emit(fix(52.37, 4.89)) }.start()
    #expect(await eventually(timeout: 60) { slow.gate.waiting.withLock { $0 } == 1 })
    #expect(
      await eventually(timeout: 60) { two.clients[1].received.withLock { $0 } == [52.37] },
      "the second hub had the fix while the first one's save waited")
    #expect(two.clients[0].received.withLock { $0 } == [52.37])
    slow.gate.open()
    two.stop()
  }
}
