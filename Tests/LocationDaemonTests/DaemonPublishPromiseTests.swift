import Foundation
import LocationDaemon
import LocationEngine
import LocationFormats
import LocationModel
import LocationProtocol
import LocationServices
import LocationSources
import TestSupport
import Testing

/// What the docs promise of `[publish]` and `publish-regions` (README, locationd.conf(5)), each
/// attacked against a real Mosquitto: with `approximate = yes` no precise position leaves the
/// machine (neither a location nor a transition); a location is retained and the connection's
/// last will is published when it is lost; a beacon region never leaves the machine.
@Suite(.serialized) struct DaemonPublishPromiseTests {
  typealias Recorder = DaemonPublishRegionsTests.Recorder
  static let home = DaemonPublishRegionsTests.home

  static func daemon(
    _ port: Int, approximate: Bool = false, extraSources: [ScriptedSource] = []
  ) throws -> DaemonFixture {
    try DaemonFixture(extraSources: extraSources) { configuration in
      var publish = PublishSettings()
      publish.host = "127.0.0.1"
      publish.port = port
      publish.topic = "owntracks/pi/car"
      publish.minimumInterval = 0
      publish.minimumDistance = 0
      publish.approximate = approximate
      configuration.publish = publish
      var app = DaemonConfiguration.App(id: HubConfiguration.executablePath(), executables: [])
      app.publishesRegions = true
      configuration.apps.append(app)
    }
  }

  static func fix(_ latitude: Double, second: Double) -> Fix {
    var fix = Fix(
      latitude: latitude, longitude: 5.000_123, horizontalAccuracy: 5,
      time: 1_767_225_600 + second, quality: .autonomous)
    fix.altitude = 12
    fix.speed = 3
    fix.course = 90
    return fix
  }

  @Test func approximatePublishingSendsNoPrecisePosition() async throws {
    guard try MosquittoBroker.ready() else { return }
    let broker = try MosquittoBroker()
    defer { broker.remove() }
    let recorder = try Recorder(broker)
    defer { recorder.stop() }
    #expect(try await recorder.waitUntilSubscribed(broker), "\(broker.log())")
    let daemon = try Self.daemon(broker.port, approximate: true)
    defer { daemon.stop() }
    let peer = try daemon.connectApp()
    peer.send(.requestAuthorization(always: true))
    peer.send(.addRegion(client: 1, group: "manager", region: Self.home, initialState: .unknown))
    _ = try peer.sync()
    // Outside, then inside: a transition as well as locations.
    let sent = [Self.fix(52.02, second: 1), Self.fix(52.000_1, second: 2)]
    for fix in sent {
      daemon.source.emit(fix)
      daemon.clock.advance(by: 1)
    }
    #expect(
      await eventually {
        recorder.locations >= 2 && recorder.messages.contains { $0.topic.hasSuffix("/event") }
      })
    let precise = Set(sent.map(\.latitude))
    for (_, message) in recorder.messages {
      switch message {
      case .location(let location):
        #expect(!precise.contains(location.latitude) && location.longitude != 5.000_123)
        #expect((location.accuracy ?? 0) >= Int(ReducedAccuracy.cellSize))
        #expect(location.altitude == nil && location.velocity == nil && location.course == nil)
      case .transition(let transition):
        #expect(!precise.contains(transition.latitude ?? 52.000_1))
        #expect(transition.longitude != 5.000_123)
        #expect((transition.accuracy ?? 0) >= Int(ReducedAccuracy.cellSize))
      case .waypoint, .waypoints, .lastWill, .other:
        // The app's own region (not the device's position), and the will.
        break
      }
    }
  }

  @Test func aLocationIsRetainedAndALostConnectionPublishesTheLastWill() async throws {
    guard try MosquittoBroker.ready() else { return }
    let broker = try MosquittoBroker()
    defer { broker.remove() }
    // The daemon reaches the broker through a proxy that can cut the connection as a network
    // would (no DISCONNECT: the broker publishes the will).
    let proxy = try FlappingProxy(targetPort: broker.port)
    defer { proxy.stop() }
    let daemon = try Self.daemon(proxy.port)
    defer { daemon.stop() }
    #expect(await eventually { daemon.source.isRunning })
    daemon.source.emit(Self.fix(52.37, second: 0))
    daemon.clock.advance(by: 1)
    #expect(await eventually { (try? daemon.store.outboxDepth()) == 0 })
    // A subscriber that comes after the publication still gets the location: it was retained.
    let late = try Recorder(broker)
    defer { late.stop() }
    #expect(await eventually { late.locations == 1 })
    #expect(proxy.cut(reset: true) >= 1)
    #expect(
      await eventually {
        late.messages.contains {
          if case .lastWill = $0.message { return $0.topic == "owntracks/pi/car" }
          return false
        }
      }, "\(late.messages.map(\.topic)) \(broker.log())")
  }

  @Test func aBeaconRegionNeverLeavesTheMachine() async throws {
    guard try MosquittoBroker.ready() else { return }
    let broker = try MosquittoBroker()
    defer { broker.remove() }
    let recorder = try Recorder(broker)
    defer { recorder.stop() }
    #expect(try await recorder.waitUntilSubscribed(broker), "\(broker.log())")
    let radio = DaemonBeaconTests.radio()
    let daemon = try Self.daemon(broker.port, extraSources: [radio])
    defer { daemon.stop() }
    let peer = try daemon.connectApp()
    peer.send(.requestAuthorization(always: true))
    let region = RegionSpec.beacon(
      identifier: "desk", BeaconConstraint(uuid: DaemonBeaconTests.uuid))
    peer.send(.addRegion(client: 1, group: "manager", region: region, initialState: .unknown))
    let started = try peer.sync()
    #expect(started.contains(.regionStarted(client: 1, group: "manager", region: region)))
    #expect(try daemon.store.region(app: daemon.app, group: "manager", identifier: "desk") != nil)
    // The beacon is seen: the region is entered (an event for the app, none for the broker).
    radio.emit(DaemonBeaconTests.ad(5, rssi: -65))
    #expect(await eventually { (try? peer.sync())?.contains { $0.isRegionEvent } == true })
    // Then a location: everything made before it has reached the broker once it has.
    daemon.source.emit(Self.fix(52.37, second: 0))
    daemon.clock.advance(by: 1)
    #expect(await eventually { recorder.locations >= 1 })
    #expect(
      recorder.messages.allSatisfy { entry in
        switch entry.message {
        case .location, .waypoints(OwnTracksWaypoints(waypoints: [], creator: "locationd")): true
        default: false
        }
      }, "\(recorder.messages)")
  }
}

extension DaemonMessage {
  fileprivate var isRegionEvent: Bool {
    if case .regionEvents = self { return true }
    return false
  }
}
