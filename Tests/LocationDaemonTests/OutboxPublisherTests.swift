import Foundation
import LocationDaemon
import LocationSources
import LocationStore
import Synchronization
import TestSupport
import Testing

/// `locationd`'s store-and-forward publisher against a real Mosquitto broker on loopback: in
/// order, deleted when acknowledged, nothing lost when the broker goes away mid-stream or when
/// the publisher stops with a full outbox, refused credentials said in the status.
@Suite(.serialized) struct OutboxPublisherTests {
  /// A subscriber that records the `n` of every message on `owntracks/test/#`.
  final class Subscriber: Sendable {
    let numbers = Mutex<[Int]>([])
    let connections = Mutex(0)
    let client = Mutex<MQTTClient?>(nil)

    init(_ broker: MosquittoBroker, persistent: Bool = false) throws {
      var configuration = MQTTClient.Configuration(
        host: "127.0.0.1", port: Int32(broker.port), clientID: "subscriber")
      configuration.cleanSession = !persistent
      let made = try MQTTClient(configuration) { [weak self] event in
        guard let self else { return }
        switch event {
        case .connected:
          connections.withLock { $0 += 1 }
          try? client.withLock { $0 }?.subscribe("owntracks/test/#", qos: 1)
        case .message(_, let payload):
          let text = String(decoding: payload, as: UTF8.self)
          if let n = Int(text.filter(\.isNumber)) { numbers.withLock { $0.append(n) } }
        case .refused, .disconnected, .acknowledged:
          break
        }
      }
      client.withLock { $0 = made }
      made.start()
    }

    /// The numbers received, each once, in the order of their first arrival.
    var firstArrivals: [Int] {
      var seen = Set<Int>()
      return numbers.withLock { $0 }.filter { seen.insert($0).inserted }
    }

    func stop() { client.withLock { $0 }?.stop() }
  }

  static func broker(persistent: Bool = false, users: [String: String] = [:]) throws
    -> MosquittoBroker?
  {
    guard try MosquittoBroker.ready() else { return nil }
    return try MosquittoBroker(users: users, persistent: persistent)
  }

  static func messages(_ range: ClosedRange<Int>) -> [OutboxMessage] {
    range.map {
      OutboxMessage(
        topic: "owntracks/test/device", payload: "{\"n\":\($0)}", kind: .position, time: 100)
    }
  }

  static func publisher(
    _ store: LocationStore, port: Int, user: String? = nil, password: String? = nil
  ) throws -> OutboxPublisher {
    try OutboxPublisher(
      store: store,
      mqtt: MQTTClient.Configuration(
        host: "127.0.0.1", port: Int32(port), clientID: "locationd-test", username: user,
        password: password), window: 50)
  }

  /// Waits until the subscriber's subscription is in place (a probe gets through).
  static func ready(_ subscriber: Subscriber, _ broker: MosquittoBroker) async throws -> Bool {
    let probe = try MQTTClient(
      MQTTClient.Configuration(host: "127.0.0.1", port: Int32(broker.port), clientID: "probe"),
      events: { _ in })
    probe.start()
    defer { probe.stop() }
    return await eventually(interval: 0.1) {
      _ = try? probe.publish(topic: "owntracks/test/probe", payload: Array("{\"n\":0}".utf8))
      return subscriber.numbers.withLock { $0.contains(0) }
    }
  }

  @Test func everythingArrivesInOrderAndIsDeletedWhenAcknowledged() async throws {
    guard let broker = try Self.broker() else { return }
    defer { broker.remove() }
    let subscriber = try Subscriber(broker)
    defer { subscriber.stop() }
    #expect(try await Self.ready(subscriber, broker), "\(broker.log())")
    let store = try LocationStore.inMemory()
    let publisher = try Self.publisher(store, port: broker.port)
    publisher.start()
    defer { publisher.stop() }
    try publisher.submit(Self.messages(1...1000))
    #expect(await eventually { subscriber.firstArrivals.filter { $0 > 0 } == Array(1...1000) })
    #expect(await eventually { (try? store.outboxDepth()) == 0 })
    #expect(publisher.status.connected && publisher.status.acknowledged == 1000)
  }

  @Test func theBrokerGoingAwayMidStreamLosesNothing() async throws {
    guard let broker = try Self.broker(persistent: true) else { return }
    defer { broker.remove() }
    let subscriber = try Subscriber(broker, persistent: true)
    defer { subscriber.stop() }
    #expect(try await Self.ready(subscriber, broker), "\(broker.log())")
    let store = try LocationStore.inMemory()
    let publisher = try Self.publisher(store, port: broker.port)
    publisher.start()
    defer { publisher.stop() }
    try publisher.submit(Self.messages(1...500))
    #expect(await eventually { subscriber.firstArrivals.count >= 50 })
    broker.stop()
    #expect(await eventually { !publisher.status.connected })
    try publisher.submit(Self.messages(501...1000))
    #expect(try store.outboxDepth() >= 500, "kept while the broker is away")
    try broker.start()
    #expect(
      await eventually(timeout: 120) {
        subscriber.firstArrivals.filter { $0 > 0 } == Array(1...1000)
      }, "\(subscriber.firstArrivals.count) of 1000")
    #expect(await eventually { (try? store.outboxDepth()) == 0 })
  }

  @Test func anOutboxLeftByAStoppedPublisherIsSentByTheNextOne() async throws {
    guard let broker = try Self.broker() else { return }
    defer { broker.remove() }
    let directory = NSTemporaryDirectory() + "outbox-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let path = directory + "/store.sqlite"
    do {
      // No broker on this port: everything stays in the outbox.
      let store = try LocationStore(path: path)
      let publisher = try Self.publisher(store, port: try Loopback.freePort())
      publisher.start()
      try publisher.submit(Self.messages(1...100))
      publisher.stop()
      #expect(try store.outboxDepth() == 100)
    }
    let subscriber = try Subscriber(broker)
    defer { subscriber.stop() }
    #expect(try await Self.ready(subscriber, broker), "\(broker.log())")
    let store = try LocationStore(path: path)
    let publisher = try Self.publisher(store, port: broker.port)
    publisher.start()
    defer { publisher.stop() }
    #expect(await eventually { subscriber.firstArrivals.filter { $0 > 0 } == Array(1...100) })
    #expect(await eventually { (try? store.outboxDepth()) == 0 })
  }

  @Test func refusedCredentialsAreInTheStatusNotACrash() async throws {
    guard let broker = try Self.broker(users: ["locationd": "right"]) else { return }
    defer { broker.remove() }
    let store = try LocationStore.inMemory()
    let publisher = try Self.publisher(
      store, port: broker.port, user: "locationd", password: "wrong")
    publisher.start()
    defer { publisher.stop() }
    try publisher.submit(Self.messages(1...3))
    #expect(
      await eventually { publisher.status.lastError?.contains("not authorised") == true },
      "\(publisher.status)")
    #expect(!publisher.status.connected)
    #expect(publisher.status.depth == 3, "kept for when the credentials are fixed")
  }
}
