import Foundation
import LocationControl
import LocationDaemon
import LocationFormats
import LocationModel
import LocationProtocol
import LocationSources
import Synchronization
import TestSupport
import Testing

/// `[publish]` end to end in-process: the daemon's own positions reach a real Mosquitto broker
/// as OwnTracks `location` messages (minimum interval and distance applied), approximate ones
/// snapped; the section's parsing and its errors.
@Suite(.serialized) struct DaemonPublishTests {
  @Test func theSectionIsParsedAndBadValuesAreErrors() throws {
    var configuration = DaemonConfiguration(socketPath: "/tmp/s", storePath: "/tmp/d")
    try configuration.apply(
      file: """
        policy = grant
        [publish]
        broker = mqtts://broker.example
        topic = owntracks/pi/car
        minimum-interval = 30
        approximate = yes
        """, path: "test.conf")
    let publish = try #require(configuration.publish)
    #expect(publish.host == "broker.example" && publish.port == 8883 && publish.tls)
    #expect(publish.minimumInterval == 30 && publish.approximate)
    #expect(publish.effectiveTrackerID == "ar")
    for bad in [
      "[publish]\nbroker = http://x\ntopic = t", "[publish]\ntopic = t",
      "[publish]\nbroker = mqtt://x", "[publish]\nbroker = mqtt://x\ntopic = a/+/b",
      "[publish]\nbroker = mqtt://u:p@x\ntopic = t",
      "[publish]\nbroker = mqtt://x\ntopic = t\nqos = 0",
      "[publish]\nbroker = mqtt://x\ntopic = t\ncolour = red",
      "[publish]\nbroker = mqtt://x\ntopic = t\ncertificate-file = /c.pem",
    ] {
      var other = DaemonConfiguration(socketPath: "/tmp/s", storePath: "/tmp/d")
      #expect(throws: DaemonConfigurationError.self, "\(bad)") {
        try other.apply(file: bad, path: "test.conf")
      }
    }
    #expect(DaemonConfiguration(socketPath: "/tmp/s", storePath: "/tmp/d").publish == nil)
  }

  /// Records the OwnTracks messages on one topic.
  final class Subscriber: Sendable {
    let messages = Mutex<[OwnTracksMessage]>([])
    let client = Mutex<MQTTClient?>(nil)
    /// Whether a message on `MQTTProbe.topic` came (not recorded as a message).
    let probed = Mutex(false)

    init(_ broker: MosquittoBroker, topic: String) throws {
      let made = try MQTTClient(
        MQTTClient.Configuration(
          host: "127.0.0.1", port: Int32(broker.port), clientID: "recorder")
      ) { [weak self] event in
        guard let self else { return }
        switch event {
        case .connected:
          try? client.withLock { $0 }?.subscribe(topic)
          try? client.withLock { $0 }?.subscribe(MQTTProbe.topic)
        case .message(let received, let payload):
          if received == MQTTProbe.topic {
            probed.withLock { $0 = true }
          } else if let message = try? OwnTracksMessage.decode(payload) {
            messages.withLock { $0.append(message) }
          }
        case .refused, .disconnected, .acknowledged: break
        }
      }
      client.withLock { $0 = made }
      made.start()
    }

    var locations: [OwnTracksLocation] {
      messages.withLock { $0 }.compactMap {
        if case .location(let location) = $0 { return location }
        return nil
      }
    }
  }

  @Test func theDevicesPositionsReachTheBroker() async throws {
    guard try MosquittoBroker.ready() else { return }
    let broker = try MosquittoBroker()
    defer { broker.remove() }
    let subscriber = try Subscriber(broker, topic: "owntracks/pi/car")
    defer { subscriber.client.withLock { $0 }?.stop() }
    #expect(
      try await MQTTProbe.waitUntilSubscribed(port: broker.port) {
        subscriber.probed.withLock { $0 }
      }, "\(broker.log())")
    let daemon = try DaemonFixture { configuration in
      var publish = PublishSettings()
      publish.host = "127.0.0.1"
      publish.port = broker.port
      publish.topic = "owntracks/pi/car"
      publish.trackerID = "pc"
      publish.minimumInterval = 10
      publish.minimumDistance = 0
      configuration.publish = publish
    }
    defer { daemon.stop() }
    #expect(await eventually { daemon.source.isRunning }, "the daemon asks for locations")
    // 1 Hz for 30 s: one published every 10 s.
    let start = 1_767_225_600.0
    for second in 0..<30 {
      daemon.source.emit(
        Fix(
          latitude: 52.37 + Double(second) * 1e-4, longitude: 4.89, horizontalAccuracy: 4.6,
          speed: 5, course: 10, time: start + Double(second), quality: .autonomous))
      daemon.clock.advance(by: 1)
    }
    #expect(
      await eventually { subscriber.locations.count >= 3 },
      "\(subscriber.messages.withLock { $0 }) \(broker.log())")
    let published = subscriber.locations
    #expect(published.map(\.timestamp) == [0, 10, 20].map { Int(start) + $0 })
    #expect(published.allSatisfy { $0.trackerID == "pc" && $0.accuracy == 5 && $0.velocity == 18 })
    #expect(await eventually { (try? daemon.store.outboxDepth()) == 0 })
    // locationctl status: the publisher's state.
    let (control, _) = try daemon.peer(.control)
    control.send(.status(id: 7))
    guard case .reply(7, .status(let status)) = try control.next() else {
      Issue.record("no status")
      return
    }
    let publish = try #require(status.publish)
    #expect(publish.connected && publish.topic == "owntracks/pi/car" && publish.depth == 0)
    #expect(publish.broker == "127.0.0.1:\(broker.port)" && publish.acknowledged >= 3)
    #expect(ControlFormatter.status(status).contains("Publishing: owntracks/pi/car on 127.0.0.1"))
  }
}
