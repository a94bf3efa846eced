import Foundation
import LocationDaemon
import LocationFormats
import LocationModel
import LocationProtocol
import LocationServices
import LocationSources
import Synchronization
import TestSupport
import Testing

/// `publish-regions` (issue 18): the regions and region events of an app the machine's owner opted
/// in reach a real Mosquitto broker on OwnTracks' topics (`waypoint`, `transition`, `waypoints`);
/// an app that did not opt in publishes nothing of its regions.
@Suite(.serialized) struct DaemonPublishRegionsTests {
  static let home = RegionSpec(identifier: "home", latitude: 52, longitude: 5, radius: 100)
  static let start = 1_767_225_600.0

  /// Records every message under `owntracks/pi/car` with its topic.
  final class Recorder: Sendable {
    let received = Mutex<[(topic: String, message: OwnTracksMessage)]>([])
    let client = Mutex<MQTTClient?>(nil)
    /// Whether a message on `MQTTProbe.topic` came (not recorded as a message).
    let probed = Mutex(false)

    init(_ broker: MosquittoBroker) throws {
      let made = try MQTTClient(
        MQTTClient.Configuration(
          host: "127.0.0.1", port: Int32(broker.port), clientID: "regions-recorder")
      ) { [weak self] event in
        guard let self else { return }
        switch event {
        case .connected:
          try? client.withLock { $0 }?.subscribe("owntracks/pi/car")
          try? client.withLock { $0 }?.subscribe("owntracks/pi/car/+")
          try? client.withLock { $0 }?.subscribe(MQTTProbe.topic)
        case .message(let topic, let payload):
          if topic == MQTTProbe.topic {
            probed.withLock { $0 = true }
          } else if let message = try? OwnTracksMessage.decode(payload) {
            received.withLock { $0.append((topic, message)) }
          }
        case .refused, .disconnected, .acknowledged: break
        }
      }
      client.withLock { $0 = made }
      made.start()
    }

    func stop() { client.withLock { $0 }?.stop() }

    /// Waits until the subscriptions are in place (`MQTTProbe`).
    func waitUntilSubscribed(_ broker: MosquittoBroker) async throws -> Bool {
      try await MQTTProbe.waitUntilSubscribed(port: broker.port) { probed.withLock { $0 } }
    }

    var messages: [(topic: String, message: OwnTracksMessage)] { received.withLock { $0 } }

    var locations: Int {
      messages.filter {
        if case .location = $0.message { return true }
        return false
      }.count
    }
  }

  static func daemon(_ broker: MosquittoBroker, optIn: Bool) throws -> DaemonFixture {
    try DaemonFixture { configuration in
      var publish = PublishSettings()
      publish.host = "127.0.0.1"
      publish.port = broker.port
      publish.topic = "owntracks/pi/car"
      publish.trackerID = "pc"
      publish.minimumInterval = 0
      publish.minimumDistance = 0
      configuration.publish = publish
      var app = DaemonConfiguration.App(id: HubConfiguration.executablePath(), executables: [])
      app.publishesRegions = optIn
      configuration.apps.append(app)
    }
  }

  static func fix(_ latitude: Double, second: Double) -> Fix {
    Fix(
      latitude: latitude, longitude: 5, horizontalAccuracy: 5, time: start + second,
      quality: .autonomous)
  }

  @Test func theKeyIsParsed() throws {
    var configuration = DaemonConfiguration(socketPath: "/tmp/s", storePath: "/tmp/d")
    try configuration.apply(
      file: "[app org.example.Maps]\nexecutable = /usr/bin/maps\npublish-regions = yes\n",
      path: "test.conf")
    #expect(configuration.app(id: "org.example.Maps")?.publishesRegions == true)
    var other = DaemonConfiguration(socketPath: "/tmp/s", storePath: "/tmp/d")
    #expect(throws: DaemonConfigurationError.self) {
      try other.apply(file: "[app org.example.Maps]\npublish-regions = maybe\n", path: "t.conf")
    }
  }

  @Test func anOptedInAppsRegionsAndTransitionsArePublished() async throws {
    guard try MosquittoBroker.ready() else { return }
    let broker = try MosquittoBroker()
    defer { broker.remove() }
    let recorder = try Recorder(broker)
    defer { recorder.stop() }
    #expect(try await recorder.waitUntilSubscribed(broker), "\(broker.log())")
    let daemon = try Self.daemon(broker, optIn: true)
    defer { daemon.stop() }
    let peer = try daemon.connectApp()
    peer.send(.requestAuthorization(always: true))
    peer.send(.addRegion(client: 1, group: "manager", region: Self.home, initialState: .unknown))
    _ = try peer.sync()
    #expect(await eventually { recorder.messages.contains { $0.topic.hasSuffix("/waypoint") } })
    guard
      case .waypoint(let waypoint) = try #require(
        recorder.messages.first { $0.topic == "owntracks/pi/car/waypoint" }?.message)
    else {
      Issue.record("no waypoint")
      return
    }
    #expect(waypoint.name == "home" && waypoint.radius == 100)
    #expect(waypoint.latitude == 52 && waypoint.longitude == 5 && waypoint.regionID?.count == 16)
    let stored = try #require(
      try daemon.store.region(app: daemon.app, group: "manager", identifier: "home"))
    #expect(waypoint.timestamp == Int(try #require(stored.created)))

    // Outside, inside, outside: an entry and an exit, each a transition on TOPIC/event.
    for (second, latitude) in [(1.0, 52.02), (2, 52.0001), (3, 52.02)] {
      daemon.source.emit(Self.fix(latitude, second: second))
      daemon.clock.advance(by: 1)
    }
    #expect(
      await eventually { recorder.messages.filter { $0.topic.hasSuffix("/event") }.count >= 2 })
    let transitions = recorder.messages.compactMap { entry -> OwnTracksTransition? in
      guard entry.topic == "owntracks/pi/car/event", case .transition(let t) = entry.message else {
        return nil
      }
      return t
    }
    #expect(transitions.map(\.event) == [.enter, .leave])
    #expect(
      transitions.allSatisfy { $0.name == "home" && $0.waypointTimestamp == waypoint.timestamp })
    #expect(transitions.allSatisfy { $0.regionID == waypoint.regionID && $0.trackerID == "pc" })
    #expect(transitions.first?.latitude == 52.0001 && transitions.first?.accuracy == 5)

    // The same region added again is not a new waypoint; another radius is, with its first time.
    peer.send(.addRegion(client: 1, group: "manager", region: Self.home, initialState: .unknown))
    var wider = Self.home
    wider.radius = 250
    peer.send(.addRegion(client: 1, group: "manager", region: wider, initialState: .unknown))
    _ = try peer.sync()
    #expect(
      await eventually {
        recorder.messages.filter { $0.topic.hasSuffix("/waypoint") }.count >= 2
      })
    let waypoints = recorder.messages.compactMap { entry -> OwnTracksWaypoint? in
      guard case .waypoint(let w) = entry.message else { return nil }
      return w
    }
    #expect(waypoints.map(\.radius) == [100, 250])
    #expect(waypoints.allSatisfy { $0.timestamp == waypoint.timestamp })

    // Removed: the list of what is left (nothing) on TOPIC/waypoints, although it equals the
    // list published at start (which the recorder may or may not have seen: it is not retained).
    #expect(await eventually { (try? daemon.store.outboxDepth()) == 0 })
    func lists() -> [(topic: String, message: OwnTracksMessage)] {
      recorder.messages.filter { $0.topic == "owntracks/pi/car/waypoints" }
    }
    let listsBefore = lists().count
    peer.send(.removeRegion(group: "manager", identifier: "home"))
    _ = try peer.sync()
    #expect(await eventually { lists().count > listsBefore })
    guard case .waypoints(let list) = lists().last?.message else {
      Issue.record("no list")
      return
    }
    #expect(list.waypoints.isEmpty)
    #expect(await eventually { (try? daemon.store.outboxDepth()) == 0 })
  }

  @Test func anAppThatDidNotOptInPublishesNoRegion() async throws {
    guard try MosquittoBroker.ready() else { return }
    let broker = try MosquittoBroker()
    defer { broker.remove() }
    let recorder = try Recorder(broker)
    defer { recorder.stop() }
    #expect(try await recorder.waitUntilSubscribed(broker), "\(broker.log())")
    let daemon = try Self.daemon(broker, optIn: false)
    defer { daemon.stop() }
    let peer = try daemon.connectApp()
    peer.send(.requestAuthorization(always: true))
    peer.send(.addRegion(client: 1, group: "manager", region: Self.home, initialState: .unknown))
    _ = try peer.sync()
    for (second, latitude) in [(1.0, 52.02), (2, 52.0001), (3, 52.02)] {
      daemon.source.emit(Self.fix(latitude, second: second))
      daemon.clock.advance(by: 1)
    }
    // Every message goes through the outbox in order: once the third position has arrived, any
    // region message made before it would have too.
    #expect(await eventually { recorder.locations >= 3 })
    #expect(recorder.messages.allSatisfy { $0.topic == "owntracks/pi/car" })
  }
}
