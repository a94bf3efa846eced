import Geodesy
import LocationEngine
import LocationModel
import LocationServices
import LocationSources
import Synchronization
import TestSupport
import Testing

/// A source the test drives: it records starts and stops and emits what the test says.
final class ScriptSource: LocationSource {
  let descriptor: SourceDescriptor
  private let state = Mutex<(context: (any SourceContext)?, starts: Int)>((nil, 0))

  init(_ name: String, accuracy: Double, power: PowerCost) {
    descriptor = SourceDescriptor(url: name, nominalAccuracy: accuracy, power: power)
  }

  var isRunning: Bool { state.withLock { $0.context != nil } }
  var starts: Int { state.withLock { $0.starts } }

  func start(context: any SourceContext) {
    state.withLock {
      $0.context = context
      $0.starts += 1
    }
  }

  func stop() { state.withLock { $0.context = nil } }

  func emit(latitude: Double, time: Double, accuracy: Double) {
    state.withLock { $0.context }?.emit(
      Fix(
        latitude: latitude, longitude: 0, horizontalAccuracy: accuracy, time: time,
        source: descriptor.url))
  }

  func fail(permanently: Bool) {
    state.withLock { $0.context }?.fail(
      SourceError(.disconnected, "\(descriptor.url) went away", isPermanent: permanently))
  }

  func refuse() {
    state.withLock { $0.context }?.fail(
      SourceError(.denied, "\(descriptor.url): access denied", isPermanent: true))
  }

}

@Suite struct ArbitrationTests {
  let clock = ManualClock()
  let file = ScriptSource("static:///etc/geolocation", accuracy: 1000, power: .none)
  let network = ScriptSource("geoclue", accuracy: 100, power: .low)
  let gps = ScriptSource("gpsd://127.0.0.1:2947", accuracy: 5, power: .high)

  func hub() -> LocationHub {
    let sources = [file, network, gps]
    let persistence = MemoryPersistence()
    persistence.setAuthorization(
      AuthorizationSnapshot(status: AuthorizationStatus.authorizedAlways), app: "test")
    return LocationHub(
      app: "test", sources: .objects({ sources }), persistence: persistence, clock: clock)
  }

  @Test func desiredAccuracyChoosesTheSourcesAndChangesFollow() {
    let hub = hub()
    let coarse = hub.register(RecordingClient())
    hub.startUpdates(coarse, UpdateRequest(desiredAccuracy: 3000))
    #expect(file.isRunning && !network.isRunning && !gps.isRunning)
    let precise = hub.register(RecordingClient())
    hub.startUpdates(precise, UpdateRequest(desiredAccuracy: 10))
    #expect(!file.isRunning && gps.isRunning)
    hub.send(.stopUpdates(precise))
    #expect(file.isRunning && !gps.isRunning)  // nobody needs the GPS any more: stopped
    hub.send(.stopUpdates(coarse))
    #expect(!file.isRunning && !network.isRunning && !gps.isRunning)
  }

  @Test func failoverToTheNextSourceAndBack() {
    let hub = hub()
    let client = RecordingClient()
    let id = hub.register(client)
    hub.startUpdates(id, UpdateRequest(desiredAccuracy: -1))
    gps.emit(latitude: 1, time: 100, accuracy: 5)
    gps.fail(permanently: false)
    #expect(gps.isRunning && network.isRunning)  // the backup runs while gpsd is away
    #expect(client.errors.map(\.0) == [.locationUnknown])
    network.emit(latitude: 2, time: 103, accuracy: 100)
    gps.emit(latitude: 3, time: 104, accuracy: 5)  // gpsd is back: the backup stops
    #expect(!network.isRunning)
    network.emit(latitude: 4, time: 105, accuracy: 100)  // dropped: stopped
    #expect(client.locations.map(\.latitude) == [1, 2, 3])
  }

  @Test func theBestRecentFixWinsWhileSeveralRun() {
    let hub = hub()
    let client = RecordingClient()
    let id = hub.register(client)
    hub.startUpdates(id, UpdateRequest(desiredAccuracy: -1))
    gps.fail(permanently: false)
    gps.emit(latitude: 1, time: 200, accuracy: 5)
    // gps recovered; but suppose the backup had not stopped yet: fail again to run both.
    gps.fail(permanently: false)
    network.emit(latitude: 2, time: 200.5, accuracy: 100)  // less accurate within 2 s: dropped
    network.emit(latitude: 3, time: 203, accuracy: 100)  // gps silent for more than 2 s: taken
    #expect(client.locations.map(\.latitude) == [1, 3])
  }

  @Test func permanentFailuresMoveDownTheListThenEnd() {
    let hub = hub()
    let client = RecordingClient()
    let id = hub.register(client)
    hub.startUpdates(id, UpdateRequest(desiredAccuracy: -1))
    gps.fail(permanently: true)
    #expect(network.isRunning && !gps.isRunning)
    network.fail(permanently: true)
    #expect(file.isRunning)
    file.fail(permanently: true)
    // One locationUnknown per outage (no location came in between), then the end.
    #expect(client.errors.map(\.0) == [.locationUnknown, .sourcesEnded])
    #expect(client.errors.last?.1 == "static:///etc/geolocation went away")
  }

  @Test func aRefusalOfTheLastSourceIsADenial() {
    let only = ScriptSource("geoclue", accuracy: 100, power: .low)
    let persistence = MemoryPersistence()
    persistence.setAuthorization(
      AuthorizationSnapshot(status: AuthorizationStatus.authorizedAlways), app: "test")
    let hub = LocationHub(
      app: "test", sources: .objects({ [only] }), persistence: persistence, clock: clock)
    let client = RecordingClient()
    let id = hub.register(client)
    hub.startUpdates(id, UpdateRequest())
    only.refuse()
    #expect(client.errors.map(\.0) == [.denied])
    #expect(client.errors.first?.1 == "geoclue: access denied")
    #expect(hub.authorization.status == AuthorizationStatus.authorizedAlways)
  }
}
