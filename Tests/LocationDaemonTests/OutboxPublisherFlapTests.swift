import Foundation
import LocationDaemon
import LocationSources
import LocationStore
import TestSupport
import Testing

/// The store-and-forward publisher on a network that flaps (issue 18: "when the broker is back,
/// every message arrives, in order"): the broker stays up, and a `FlappingProxy` between the
/// publisher and the broker cuts the connection (some cuts with messages stuck in flight),
/// refuses new connections for a while, and stalls a connection until the publisher's
/// keep-alive gives up on it. The subscriber is connected to the broker directly.
///
/// QoS 1 is "at least once": a message whose acknowledgement was cut off is published again,
/// so the subscriber may get it twice. The tests check that the first arrivals are every
/// message, in order, and report how many duplicates came.
@Suite(.serialized) struct OutboxPublisherFlapTests {
  typealias Subscriber = OutboxPublisherTests.Subscriber

  /// A publisher connected through `proxy`: a 5 s keep-alive (libmosquitto's least), so that a
  /// stalled connection is given up in seconds, and at most 2 s between attempts to connect.
  static func publisher(_ store: LocationStore, through proxy: FlappingProxy) throws
    -> OutboxPublisher
  {
    var mqtt = MQTTClient.Configuration(
      host: "127.0.0.1", port: Int32(proxy.port), clientID: "locationd-flap")
    mqtt.keepAlive = 5
    mqtt.maximumReconnectDelay = 2
    return try OutboxPublisher(store: store, mqtt: mqtt, window: 50)
  }

  /// Submits the messages `range` ten at a time, as positions come.
  static func submit(_ publisher: OutboxPublisher, _ range: ClosedRange<Int>) throws {
    for start in stride(from: range.lowerBound, through: range.upperBound, by: 10) {
      try publisher.submit(
        OutboxPublisherTests.messages(start...min(start + 9, range.upperBound)))
    }
  }

  /// The numbers the subscriber got (the probe's 0 left out), and how many came more than once.
  static func arrivals(_ subscriber: Subscriber) -> (first: [Int], duplicates: Int) {
    let all = subscriber.numbers.withLock { $0 }.filter { $0 > 0 }
    let first = subscriber.firstArrivals.filter { $0 > 0 }
    return (first, all.count - first.count)
  }

  @Test func everyMessageArrivesInOrderAcrossCutsARefusedWindowAndAStall() async throws {
    guard let broker = try OutboxPublisherTests.broker() else { return }
    defer { broker.remove() }
    let subscriber = try Subscriber(broker)
    defer { subscriber.stop() }
    #expect(try await OutboxPublisherTests.ready(subscriber, broker), "\(broker.log())")
    let proxy = try FlappingProxy(targetPort: broker.port)
    defer { proxy.stop() }
    let store = try LocationStore.inMemory()
    let publisher = try Self.publisher(store, through: proxy)
    publisher.start()
    defer { publisher.stop() }
    func seen() -> Int { Self.arrivals(subscriber).first.count }
    func connected() async -> Bool {
      await eventually { publisher.status.connected && proxy.counts.open == 1 }
    }

    var last = 0
    for cut in 1...5 {
      switch cut {
      case 1, 5:
        // Messages stuck in flight: published into a stalled connection, then cut.
        #expect(await connected(), "cut \(cut): \(publisher.status)")
        #expect(proxy.stall() == 1)
        try Self.submit(publisher, last + 1...last + 100)
        last += 100
        #expect(await eventually { proxy.stalledBytes() > 0 }, "cut \(cut): nothing in flight")
      case 3:
        // Acknowledgements lost: the broker has the messages, the publisher never hears so.
        // Everything before is acknowledged first, so that the window is free for this batch.
        let before = last
        #expect(
          await eventually { (try? store.outboxDepth()) == 0 && seen() >= before },
          "cut \(cut): \(seen()) seen, \(publisher.status)")
        #expect(await connected(), "cut \(cut): \(publisher.status)")
        #expect(proxy.stall(.toClient) == 1)
        try Self.submit(publisher, last + 1...last + 100)
        last += 100
        // A window's worth (50) is published, delivered, and its acknowledgements held.
        #expect(
          await eventually { seen() >= before + 50 && proxy.stalledBytes() > 0 },
          "cut \(cut): \(seen()) seen, \(publisher.status), \(proxy.counts)")
      default:
        // Mid-stream: cut once the subscriber has the first of a batch.
        let before = last
        try Self.submit(publisher, last + 1...last + 400)
        last += 400
        #expect(await eventually { seen() >= before + 50 }, "cut \(cut): \(seen()) seen")
      }
      #expect(proxy.cut(reset: cut != 4) >= 1, "cut \(cut)")
    }

    // Refused: every new connection is reset at once; messages keep coming meanwhile.
    proxy.refuse(true)
    proxy.cut()
    let refusedBefore = proxy.counts.refused
    try Self.submit(publisher, last + 1...last + 200)
    last += 200
    #expect(
      await eventually { proxy.counts.refused >= refusedBefore + 2 }, "\(proxy.counts)")
    #expect(!publisher.status.connected, "\(publisher.status)")
    #expect(try store.outboxDepth() > 0, "kept while refused")
    proxy.refuse(false)

    // Stalled for good (half-open): the keep-alive gives up on it and connects again.
    #expect(await connected(), "after the refusals: \(publisher.status)")
    let forwardedBefore = proxy.counts.forwarded
    #expect(proxy.stall() == 1)
    try Self.submit(publisher, last + 1...last + 200)
    last += 200
    #expect(
      await eventually { proxy.counts.forwarded > forwardedBefore }, "\(proxy.counts)")
    // The stalled connection's bytes go through late, after the new connection's.
    proxy.resume()
    try Self.submit(publisher, last + 1...last + 100)
    last += 100

    let total = last
    #expect(
      await eventually(timeout: 120) { Self.arrivals(subscriber).first.count >= total },
      "\(seen()) of \(total); \(publisher.status); \(proxy.counts)")
    let (first, duplicates) = Self.arrivals(subscriber)
    #expect(first == Array(1...total), "first arrivals out of order or incomplete")
    #expect(duplicates > 0, "the messages whose acknowledgements were cut are sent again")
    #expect(await eventually { (try? store.outboxDepth()) == 0 }, "\(publisher.status)")
    print(
      "OutboxPublisherFlapTests: \(total) messages, all arrived in order, \(duplicates) "
        + "duplicates (QoS 1 redelivery); proxy: \(proxy.counts)")
  }

  @Test func theStatusSaysDisconnectedWhileRefusedAndConnectedAfterwards() async throws {
    guard let broker = try OutboxPublisherTests.broker() else { return }
    defer { broker.remove() }
    let proxy = try FlappingProxy(targetPort: broker.port)
    defer { proxy.stop() }
    let store = try LocationStore.inMemory()
    let publisher = try Self.publisher(store, through: proxy)
    publisher.start()
    defer { publisher.stop() }
    #expect(await eventually { publisher.status.connected }, "\(publisher.status)")

    proxy.refuse(true)
    proxy.cut()
    #expect(await eventually { !publisher.status.connected }, "\(publisher.status)")
    // Still disconnected after attempts that reached the proxy and were reset.
    #expect(await eventually { proxy.counts.refused >= 2 }, "\(proxy.counts)")
    try Self.submit(publisher, 1...20)
    let refused = publisher.status
    #expect(!refused.connected && refused.lastError != nil, "\(refused)")
    #expect(refused.depth == 20, "\(refused)")

    proxy.refuse(false)
    #expect(await eventually { publisher.status.connected }, "\(publisher.status)")
    #expect(await eventually { publisher.status.depth == 0 }, "\(publisher.status)")
    #expect(publisher.status.lastError == nil, "\(publisher.status)")
  }
}
