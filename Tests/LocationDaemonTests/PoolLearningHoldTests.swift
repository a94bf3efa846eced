import LocationDaemon
import LocationEngine
import LocationModel
import LocationServices
import LocationSources
import LocationStore
import Synchronization
import TestSupport
import Testing

/// The learning hold in `locationd`: the pool learns from scans, an app's hub over its relays holds
/// the receiver after a significant-change burst until the pool's knowledge has met a scan.
@Suite struct PoolLearningHoldTests {
  let clock = ManualClock(wall: 1_767_225_600)
  let receiver = ScriptedSource(url: "gpsd://127.0.0.1:2947", nominalAccuracy: 5, power: .high)
  let scanner = ScriptedSource(
    url: "wifi", nominalAccuracy: 50, power: .low, producesScans: true)

  func fix() -> Fix {
    Fix(
      latitude: 52.37, longitude: 4.89, horizontalAccuracy: 5, time: clock.now.wall,
      quality: .autonomous)
  }

  func scan() -> WifiScan {
    WifiScan(
      time: clock.now.wall,
      readings: [
        AccessPointReading(bssid: 7, ssid: Array("home".utf8), signal: -55, frequency: 2412)
      ], source: "")
  }

  @Test func anAppHubHoldsThePoolsReceiverForOneScan() {
    let knowledge = WifiKnowledge(store: nil)
    let pool = SourcePool(sources: [receiver, scanner], clock: clock, wifi: knowledge)
    let persistence = MemoryPersistence()
    persistence.setAuthorization(
      AuthorizationSnapshot(status: AuthorizationStatus.authorizedAlways), app: "org.example.app")
    let hub = LocationHub(
      app: "org.example.app", sources: .objects { pool.relays() }, persistence: persistence,
      clock: clock, learning: knowledge)
    let id = hub.register(RecordingClient())
    hub.startSignificantChanges(id)
    clock.advance(by: 3)
    scanner.emit(scan())
    #expect(receiver.isRunning, "a scan not located brings the receiver in")
    clock.advance(by: 5)
    receiver.emit(fix())
    #expect(receiver.isRunning && scanner.isRunning, "held for a scan")
    clock.advance(by: 1)
    scanner.emit(scan())
    #expect(knowledge.status().known == 1, "learned in the pool")
    clock.advance(by: 0.5)
    receiver.emit(fix())
    #expect(!receiver.isRunning && !scanner.isRunning, "the app's hub saw it learned and let go")
    hub.unregister(id)
  }

  /// Issue 19: a fix that teaches the pool a waiting scan reaches every relay before what it
  /// taught is written to the store (a commit waits for the disk, before every app's fix).
  @Test func aFixReachesTheRelaysBeforeWhatItTaughtIsStored() throws {
    let store = try LocationStore.inMemory()
    let knowledge = WifiKnowledge(store: store)
    let pool = SourcePool(sources: [receiver, scanner], clock: clock, wifi: knowledge)
    let probe = StoreProbeContext(store: store)
    let relay = pool.relays()[0]
    relay.start(context: probe)
    #expect(receiver.isRunning)
    // A scan that meets no fix waits for the next one.
    _ = knowledge.scan(scan())
    clock.advance(by: 1)
    receiver.emit(fix())
    #expect(probe.storedAtEachFix == [0], "the relay had the fix before the store's write")
    #expect(try store.accessPointCounts().known == 1, "then it was written")
    #expect(knowledge.status().known == 1)
    relay.stop()
  }
}

/// A relay's context that notes, at each fix, how many access points the store holds.
private final class StoreProbeContext: SourceContext {
  let store: LocationStore
  private let counts = Mutex<[Int]>([])

  init(store: LocationStore) { self.store = store }

  var storedAtEachFix: [Int] { counts.withLock { $0 } }
  var now: EngineInstant { EngineInstant(monotonic: 0, wall: 0) }
  func emit(_ fix: Fix) {
    let known = (try? store.accessPointCounts().known) ?? -1
    counts.withLock { $0.append(known) }
  }
  func emitHeading(_ sample: HeadingSample) {}
  func fail(_ error: SourceError) {}
  func end() {}
  func schedule(after seconds: Double, _ action: @escaping @Sendable () -> Void) -> any Cancellable
  {
    NeverCancellable()
  }
}
