import Foundation
import LocationFormats
import LocationModel
import Synchronization
import TestSupport
import Testing

@testable import LocationSources

/// `owntracks+mqtt://`: the URL, and another device's positions through a real Mosquitto broker
/// on loopback (fresh ones become fixes; stale, malformed and other messages are counted and
/// skipped; refused credentials are a non-permanent denial).
@Suite(.serialized) struct OwnTracksSourceTests {
  @Test func urlsAreParsedAndWrittenBack() throws {
    let plain = try SourceURL.parse("owntracks+mqtt://broker.example/owntracks/alice/phone")
    #expect(
      plain
        == .ownTracks(
          OwnTracksSubscription(
            host: "broker.example", port: 1883, tls: false, topic: "owntracks/alice/phone")))
    #expect(plain.text == "owntracks+mqtt://broker.example:1883/owntracks/alice/phone")
    let tls = try SourceURL.parse(
      "owntracks+mqtts://10.0.0.2:8884/owntracks/bob/car?ca=/etc/ca.pem&credentials=/etc/cred&max-age=60"
    )
    guard case .ownTracks(let subscription) = tls else {
      Issue.record("\(tls)")
      return
    }
    #expect(subscription.tls && subscription.port == 8884 && subscription.maximumAge == 60)
    #expect(subscription.caFile == "/etc/ca.pem" && subscription.credentialsFile == "/etc/cred")
    #expect(try SourceURL.parse(tls.text) == tls)
    for bad in [
      "owntracks+mqtt://broker", "owntracks+mqtt://broker/", "owntracks+mqtt://broker/owntracks/#",
      "owntracks+mqtt://broker/owntracks/+/phone", "owntracks+mqtt://broker/t?ca=/x.pem",
      "owntracks+mqtt://broker/t?max-age=-1", "owntracks+mqtt://broker/t?colour=red",
      "owntracks+mqtt://broker:99999/t",
    ] {
      #expect(throws: SourceError.self, "\(bad)") { try SourceURL.parse(bad) }
    }
    #expect(SourceFactory.make(plain).descriptor.power == .low)
  }

  static func broker(users: [String: String] = [:]) throws -> MosquittoBroker? {
    guard try MosquittoBroker.ready() else { return nil }
    return try MosquittoBroker(users: users)
  }

  /// Publishes payloads to the device's topic (retained: what a new subscriber gets first).
  static func publish(_ broker: MosquittoBroker, _ payloads: [String], retain: Bool = false)
    async throws
  {
    let acknowledged = Mutex(0)
    let connected = Mutex(false)
    let client = try MQTTClient(
      MQTTClient.Configuration(host: "127.0.0.1", port: Int32(broker.port), clientID: "phone")
    ) { event in
      if case .acknowledged = event { acknowledged.withLock { $0 += 1 } }
      if case .connected = event { connected.withLock { $0 = true } }
    }
    client.start()
    defer { client.stop() }
    #expect(await eventually { connected.withLock { $0 } })
    for payload in payloads {
      try client.publish(
        topic: "owntracks/alice/phone", payload: Array(payload.utf8), retain: retain)
    }
    #expect(await eventually { acknowledged.withLock { $0 } == payloads.count })
  }

  static func location(age: Double, accuracy: Int = 12) -> String {
    let tst = Int(Date().timeIntervalSince1970 - age)
    return
      #"{"_type":"location","lat":52.3702,"lon":4.8952,"acc":\#(accuracy),"vel":36,"cog":90,"tst":\#(tst),"tid":"ph"}"#
  }

  @Test func freshPositionsBecomeFixesAndTheRestIsSkipped() async throws {
    guard let broker = try Self.broker() else { return }
    defer { broker.remove() }
    // The retained last position is what the source hears first.
    try await Self.publish(broker, [Self.location(age: 5)], retain: true)
    let source = OwnTracksSource(
      OwnTracksSubscription(
        host: "127.0.0.1", port: broker.port, tls: false, topic: "owntracks/alice/phone"))
    let context = RecordingContext(clock: .dispatch)
    source.start(context: context)
    defer { source.stop() }
    #expect(
      await eventually(timeout: 60) { context.state.withLock { $0.fixes.count } == 1 },
      "\(source.counts) \(context.state.withLock { $0.failures }) \(broker.log())")
    let fix = try #require(context.state.withLock { $0.fixes.first })
    #expect(fix.horizontalAccuracy == 12 && fix.quality == .network)
    #expect(abs(fix.speed - 10) < 1e-9 && fix.course == 90)
    #expect(fix.source == source.descriptor.url)
    try await Self.publish(
      broker,
      [
        "not json", #"{"_type":"location","lat":"north"}"#,
        #"{"_type":"transition","event":"enter","lat":52,"lon":4,"tst":1,"wtst":1,"acc":5,"t":"c"}"#,
        Self.location(age: 3600), Self.location(age: 1, accuracy: 30),
      ])
    #expect(await eventually { source.counts.accepted == 2 })
    #expect(source.counts.stale == 1 && source.counts.skipped == 3)
    #expect(context.state.withLock { $0.fixes.last?.horizontalAccuracy } == 30)
    #expect(context.state.withLock { $0.failures }.isEmpty)
  }

  @Test func refusedCredentialsAreADenialThatIsRetried() async throws {
    guard let broker = try Self.broker(users: ["alice": "secret"]) else { return }
    defer { broker.remove() }
    let credentials = broker.directory + "/credentials"
    try "alice:wrong\n".write(toFile: credentials, atomically: true, encoding: .utf8)
    let source = OwnTracksSource(
      OwnTracksSubscription(
        host: "127.0.0.1", port: broker.port, tls: false, topic: "owntracks/alice/phone",
        credentialsFile: credentials))
    let context = RecordingContext(clock: .dispatch)
    source.start(context: context)
    defer { source.stop() }
    #expect(await eventually { !context.state.withLock { $0.failures }.isEmpty })
    let failure = try #require(context.state.withLock { $0.failures.first })
    #expect(failure.code == .denied && !failure.isPermanent, "\(failure)")
  }

  @Test func anUnreadableCredentialsFileIsAConfigurationError() {
    let source = OwnTracksSource(
      OwnTracksSubscription(
        host: "127.0.0.1", port: 1, tls: false, topic: "t", credentialsFile: "/nonexistent"))
    let context = RecordingContext(clock: .dispatch)
    source.start(context: context)
    source.stop()
    let failure = context.state.withLock { $0.failures.first }
    #expect(failure?.code == .configuration && failure?.isPermanent == true)
  }
}
