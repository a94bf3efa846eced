import Geodesy
import LocationEngine
import LocationModel
import LocationServices
import LocationSimulation
import LocationSources
import LocationStore
import Synchronization
import TestSupport
import Testing

/// Wi-Fi in the embedded runtime, on the manual clock with a simulated town (`WifiTown`): a
/// kilometre of `desiredAccuracy` runs the scanner first; its scans cannot be located at first, so
/// the receiver runs beside it and its fixes teach the scanner where the access points are; once
/// scans are located, the receiver is no longer needed.
@Suite struct WifiHubTests {
  let town = WifiTown(seed: 7)
  let clock = ManualClock(wall: WifiTown.epoch)
  let receiver = ScriptedSource(url: "gpsd://127.0.0.1:2947", nominalAccuracy: 5, power: .high)
  let scanner = ScriptedSource(
    url: "wifi", nominalAccuracy: 50, power: .low, producesScans: true)

  func hub(_ knowledge: WifiKnowledge) -> LocationHub {
    let persistence = MemoryPersistence()
    persistence.setAuthorization(
      AuthorizationSnapshot(status: AuthorizationStatus.authorizedAlways), app: "test")
    return LocationHub(
      app: "test", sources: .objects({ [receiver, scanner] }), persistence: persistence,
      clock: clock, wifi: knowledge)
  }

  /// Drives the town for `duration` seconds: a fix a second from the receiver and a scan every 3 s
  /// from the scanner, each only while its source runs. Returns the seconds the receiver ran.
  func drive(seed: UInt64, duration: Double, start: Double) -> Double {
    var random = SplitMix64(seed: seed)
    var receiverOn = 0.0
    var last = clock.now.wall
    for sample in town.drive(seed: seed, duration: duration, start: start) {
      clock.advance(by: max(0, sample.time - last))
      if receiver.isRunning { receiverOn += sample.time - last }
      last = sample.time
      let second = sample.time.rounded(.down)
      if sample.time == second { receiver.emit(town.fix(sample, &random)) }
      if second.truncatingRemainder(dividingBy: 3) == 0, sample.time == second {
        scanner.emit(town.scan(sample, &random))
      }
    }
    return receiverOn
  }

  /// Issue 19: an app's reading run loop notes a fix there only when that cannot touch the store
  /// (no scan waits to be learned at it); else the hub notes it on its queue.
  @Test func aFixIsNotedWithoutTheStoreOnlyWhileNoScanWaits() throws {
    let knowledge = WifiKnowledge(store: try LocationStore.inMemory())
    var random = SplitMix64(seed: 3)
    let samples = Array(town.drive(seed: 3, duration: 10, start: WifiTown.epoch))
    let first = try #require(samples.first)
    #expect(knowledge.noteWithoutStore(town.fix(first, &random)), "no scan waits: noted")
    // A scan long after that fix meets none: it waits for the next fix.
    let later = try #require(samples.last)
    #expect(later.time - first.time > 5)
    _ = knowledge.scan(town.scan(later, &random))
    let fix = town.fix(later, &random)
    #expect(!knowledge.noteWithoutStore(fix), "a scan waits: left to the caller")
    #expect(knowledge.status().known == 0)
    knowledge.note(fix)
    #expect(knowledge.status().known > 0, "the waiting scan was learned at the fix")
  }

  /// Issue 19: a fix that teaches a waiting scan reaches the hub's clients before what it taught
  /// is written to the store (a commit waits for the disk).
  @Test func aFixReachesItsClientsBeforeWhatItTaughtIsStored() throws {
    let store = try LocationStore.inMemory()
    let knowledge = WifiKnowledge(store: store)
    let hub = hub(knowledge)
    let client = StoreProbeClient(store: store)
    let id = hub.register(client)
    hub.startUpdates(id, UpdateRequest(desiredAccuracy: 5, distanceFilter: -1))
    #expect(receiver.isRunning)
    var random = SplitMix64(seed: 5)
    let sample = try #require(Array(town.drive(seed: 5, duration: 10, start: WifiTown.epoch)).last)
    clock.advance(by: sample.time - clock.now.wall)
    // A scan that meets no fix waits for the next one.
    _ = knowledge.scan(town.scan(sample, &random))
    receiver.emit(town.fix(sample, &random))
    #expect(client.storedAtEachDelivery == [0], "the client had the fix before the store's write")
    let known = try store.accessPointCounts().known
    #expect(known > 0 && known == knowledge.status().known, "then it was written")
    hub.unregister(id)
  }

  /// Issue 19: a scan that is located and teaches something is heard as a position before what it
  /// taught is written to the store.
  @Test func aLocatedScanIsHeardBeforeWhatItTaughtIsStored() throws {
    let store = try LocationStore.inMemory()
    let knowledge = WifiKnowledge(store: store)
    var random = SplitMix64(seed: 9)
    var heardBeforeTheWrite = 0
    for sample in town.drive(seed: 9, duration: 300, start: WifiTown.epoch)
    where sample.time == sample.time.rounded(.down) {
      knowledge.note(town.fix(sample, &random))
      let before = try store.accessPoints()
      let seen = Mutex<[AccessPointRecord]?>(nil)
      knowledge.receive(
        town.scan(sample, &random), failing: false,
        emit: { _ in seen.withLock { $0 = try? store.accessPoints() } }, fail: { _ in })
      guard let heard = seen.withLock({ $0 }) else { continue }
      let unchanged = heard == before
      #expect(unchanged, "the position was heard after the store's write")
      if try store.accessPoints() != before { heardBeforeTheWrite += 1 }
    }
    #expect(heardBeforeTheWrite > 10, "located scans that taught something")
  }

  @Test func theScannerLearnsBesideTheReceiverThenServesAlone() throws {
    let store = try LocationStore.inMemory()
    let knowledge = WifiKnowledge(store: store)
    let hub = hub(knowledge)
    let client = RecordingClient()
    let id = hub.register(client)
    hub.startUpdates(id, UpdateRequest(desiredAccuracy: 1000, distanceFilter: -1))
    #expect(scanner.isRunning && !receiver.isRunning, "the cheapest source that meets 1 km")
    // An hour of driving: at first nothing is known, so the receiver runs and teaches.
    let firstHour = drive(seed: 11, duration: 3600, start: WifiTown.epoch)
    let learned = knowledge.status()
    #expect(learned.known > 500)
    #expect(try store.accessPointCounts().known == learned.known)
    // Scans not located while the receiver serves are no news for the app.
    #expect(client.errors.isEmpty)
    let located = client.locations.filter { $0.source == "wifi" }
    #expect(!located.isEmpty)
    #expect(located.allSatisfy { $0.quality == .network && $0.horizontalAccuracy >= 20 })
    // The second hour, on streets learned: the receiver runs far less.
    let secondHour = drive(seed: 11, duration: 3600, start: WifiTown.epoch + 3600)
    #expect(secondHour < firstHour / 2, "receiver on \(firstHour) s, then \(secondHour) s")
    hub.unregister(id)
    // Forgotten, in memory and in the store.
    let known = knowledge.status().known
    #expect(try knowledge.forget() == known)
    #expect(knowledge.status().known == 0)
    #expect(try store.accessPointCounts().known == 0)
  }

  @Test func learningOffStillLocatesButLearnsNothing() throws {
    let knowledge = WifiKnowledge(store: nil, learning: false)
    let hub = hub(knowledge)
    let client = RecordingClient()
    let id = hub.register(client)
    hub.startUpdates(id, UpdateRequest(desiredAccuracy: 1000, distanceFilter: -1))
    _ = drive(seed: 3, duration: 600, start: WifiTown.epoch)
    #expect(knowledge.status().known == 0)
    #expect(!client.locations.contains { $0.source == "wifi" })
    #expect(receiver.isRunning, "nothing known: the receiver serves")
    hub.unregister(id)
  }

  @Test func nomapAccessPointsAreNeverLearned() throws {
    let store = try LocationStore.inMemory()
    let knowledge = WifiKnowledge(store: store)
    let fix = Fix(
      latitude: 52.5, longitude: 13.4, horizontalAccuracy: 5, time: WifiTown.epoch,
      quality: .autonomous)
    knowledge.note(fix)
    let scan = WifiScan(
      time: WifiTown.epoch,
      readings: [
        AccessPointReading(bssid: 1, ssid: Array("cafe_nomap".utf8), signal: -50, frequency: 2412),
        AccessPointReading(bssid: 2, ssid: Array("home".utf8), signal: -60, frequency: 2437),
      ], source: "wifi")
    _ = knowledge.scan(scan)
    #expect(knowledge.status().known == 1)
    #expect(try store.accessPoints().map(\.bssid) == [2])
  }
}

/// The optional Ichnaea-compatible fallback: a scan the machine cannot locate yet is sent to the
/// configured service (on loopback here), whose answer reaches the app as the scanner's fix.
@Suite struct WifiFallbackHubTests {
  @Test func aScanNotLocatedIsAskedOfTheServiceAndItsAnswerDelivered() async throws {
    guard RealComponents.runnable(RealComponents.curl) else {
      try RealComponents.unavailable("\(RealComponents.curl) is missing (Debian's curl)")
      return
    }
    guard RealComponents.require(RealComponents.curl) else { return }
    let server = try LocalHTTPServer { _ in
      .answer(status: 200, body: #"{"location":{"lat":52.1,"lng":5.1},"accuracy":100}"#)
    }
    defer { server.stop() }
    #expect(server.waitUntilReady())
    let fallback = try IchnaeaClient(
      configuration: .init(
        url: server.url.absoluteString + "v1/geolocate?key=secret", minimumInterval: 0,
        timeout: 20))
    let knowledge = WifiKnowledge(store: nil, fallback: fallback)
    let scanner = ScriptedSource(url: "wifi", nominalAccuracy: 50, power: .low, producesScans: true)
    let persistence = MemoryPersistence()
    persistence.setAuthorization(
      AuthorizationSnapshot(status: AuthorizationStatus.authorizedAlways), app: "test")
    let hub = LocationHub(
      app: "test", sources: .objects({ [scanner] }), persistence: persistence,
      clock: ManualClock(), wifi: knowledge)
    let client = RecordingClient()
    let id = hub.register(client)
    hub.startUpdates(id, UpdateRequest(desiredAccuracy: 1000, distanceFilter: -1))
    scanner.emit(
      WifiScan(
        time: 1_767_225_600,
        readings: [
          AccessPointReading(
            bssid: 0x0012_3456_7890, ssid: Array("a".utf8), signal: -60, frequency: 2412),
          AccessPointReading(
            bssid: 0x0012_3456_7891, ssid: Array("b".utf8), signal: -70, frequency: 2437),
        ]))
    #expect(await eventually { !client.locations.isEmpty })
    let fix = try #require(client.locations.first)
    #expect(abs(fix.latitude - 52.1) < 1e-9 && abs(fix.longitude - 5.1) < 1e-9)
    #expect(fix.quality == .network)
    // The service's key never reaches an app through the location's source.
    #expect(!fix.source.contains("secret") && fix.source.hasSuffix("/v1/geolocate"))
    // Ichnaea's accuracy is a 95 % radius; locations carry 68 %.
    #expect(abs(fix.horizontalAccuracy - 61.7) < 0.1)
    hub.unregister(id)
  }
}

/// A hub client that notes, at each delivery of locations, how many access points the store holds.
private final class StoreProbeClient: HubClient {
  let store: LocationStore
  private let counts = Mutex<[Int]>([])

  init(store: LocationStore) { self.store = store }

  var storedAtEachDelivery: [Int] { counts.withLock { $0 } }

  func hub(_ hub: LocationHub, deliver delivery: HubDelivery) {
    guard case .locations = delivery else { return }
    let known = (try? store.accessPointCounts().known) ?? -1
    counts.withLock { $0.append(known) }
  }
}
