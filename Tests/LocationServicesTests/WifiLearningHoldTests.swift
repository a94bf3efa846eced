import LocationEngine
import LocationModel
import LocationServices
import LocationSimulation
import LocationSources
import TestSupport
import Testing

/// The learning hold (README, "Wi-Fi"): a significant-change burst ends at the receiver's first
/// fix; while the machine learns, the receiver and the scanner stay on until a scan meets a good
/// fix (or 15 s pass), so that a device that only monitors significant changes learns the access
/// points it passes. On the manual clock.
@Suite struct WifiLearningHoldTests {
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

  /// A good receiver fix now.
  func goodFix() -> Fix {
    Fix(
      latitude: 52.37, longitude: 4.89, horizontalAccuracy: 5, time: clock.now.wall,
      quality: .autonomous)
  }

  /// A scan now of access points 1 and 2.
  func scan() -> WifiScan {
    WifiScan(
      time: clock.now.wall,
      readings: [
        AccessPointReading(bssid: 1, ssid: Array("home".utf8), signal: -55, frequency: 2412),
        AccessPointReading(bssid: 2, ssid: Array("cafe".utf8), signal: -70, frequency: 2437),
      ], source: "wifi")
  }

  /// Starts significant-change monitoring and brings the receiver in: the scanner runs first (it
  /// is the cheap source that meets 5 km) and its first scan, of access points not known, is an
  /// outage.
  func startBurst(_ hub: LocationHub) -> ClientID {
    let id = hub.register(RecordingClient())
    hub.startSignificantChanges(id)
    #expect(scanner.isRunning && !receiver.isRunning)
    clock.advance(by: 4)
    scanner.emit(scan())
    #expect(receiver.isRunning, "a scan not located brings the receiver in")
    clock.advance(by: 5)
    return id
  }

  @Test func theReceiverStaysOnUntilAScanMeetsItsFix() {
    let knowledge = WifiKnowledge(store: nil)
    let hub = hub(knowledge)
    let id = startBurst(hub)
    receiver.emit(goodFix())
    #expect(receiver.isRunning && scanner.isRunning, "held for a scan")
    clock.advance(by: 1)
    receiver.emit(goodFix())
    #expect(receiver.isRunning, "still held: no scan yet")
    clock.advance(by: 1)
    scanner.emit(scan())
    #expect(knowledge.status().known == 2)
    #expect(!receiver.isRunning && !scanner.isRunning, "learned: the burst ends")
    hub.unregister(id)
  }

  @Test func theHoldEndsAfterFifteenSecondsWithoutAScan() {
    let knowledge = WifiKnowledge(store: nil)
    let hub = hub(knowledge)
    let id = startBurst(hub)
    receiver.emit(goodFix())
    clock.advance(by: LocationHub.learningHoldLimit - 1)
    #expect(receiver.isRunning)
    clock.advance(by: 1)
    #expect(!receiver.isRunning && !scanner.isRunning)
    #expect(knowledge.status().known == 0)
    hub.unregister(id)
  }

  @Test func aScanJustBeforeTheFixIsLearnedAtItWithoutAHold() {
    let knowledge = WifiKnowledge(store: nil)
    let hub = hub(knowledge)
    let id = startBurst(hub)
    scanner.emit(scan())
    clock.advance(by: 1.5)
    receiver.emit(goodFix())
    #expect(knowledge.status().known == 2, "the scan 1.5 s before the fix is learned at it")
    #expect(!receiver.isRunning && !scanner.isRunning, "nothing to wait for")
    hub.unregister(id)
  }

  @Test func noHoldWhenLearningIsOff() {
    let hub = hub(WifiKnowledge(store: nil, learning: false))
    let id = startBurst(hub)
    receiver.emit(goodFix())
    #expect(!receiver.isRunning && !scanner.isRunning)
    hub.unregister(id)
  }

  @Test func noHoldForAPoorFix() {
    let knowledge = WifiKnowledge(store: nil)
    let hub = hub(knowledge)
    let id = startBurst(hub)
    var fix = goodFix()
    fix.horizontalAccuracy = 60
    receiver.emit(fix)
    #expect(!receiver.isRunning, "a fix not good enough to learn from is not held for")
    hub.unregister(id)
  }

  @Test func stoppingMonitoringEndsTheHold() {
    let knowledge = WifiKnowledge(store: nil)
    let hub = hub(knowledge)
    let id = startBurst(hub)
    receiver.emit(goodFix())
    #expect(receiver.isRunning)
    hub.send(.stopSignificantChanges(id))
    #expect(!receiver.isRunning && !scanner.isRunning, "nobody monitors: nothing is held")
    #expect(knowledge.status().known == 0)
    hub.unregister(id)
  }
}
