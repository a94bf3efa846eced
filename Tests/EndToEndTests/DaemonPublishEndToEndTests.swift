import Foundation
import LocationFormats
import LocationSources
import Synchronization
import TestSupport
import Testing

/// Issue 18's store-and-forward through the built `locationd`: positions published while the
/// broker is away are kept in the store; `kill -9` of the daemon with a full outbox loses none of
/// them: once a broker is there, the restarted daemon delivers every one, in order.
@Suite(.serialized) struct DaemonPublishEndToEndTests {
  static let tools = [RealComponents.sqlite3, MosquittoBroker.program, MosquittoBroker.openssl]

  @Test(.enabled(if: DaemonE2E.available(tools: tools), DaemonE2E.missing(tools: tools)))
  func killNineWithAFullOutboxLosesNothing() async throws {
    try DaemonE2E.requireComponents(tools: Self.tools)
    let directory = try LocationdProcess.makeDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    try DaemonE2E.writeTrack(directory + "/track.gpx", count: 2000, step: 5)
    let port = try Loopback.freePort()
    let config = directory + "/publish.conf"
    try """
    [publish]
    broker = mqtt://127.0.0.1:\(port)
    topic = owntracks/e2e/pi
    minimum-interval = 0
    minimum-distance = 0
    """.write(toFile: config, atomically: true, encoding: .utf8)
    chmod(config, 0o600)
    let store = LocationdProcess.store(directory)
    // No broker yet: everything the daemon publishes waits in the outbox.
    var daemon = try LocationdProcess(
      LocationdProcess.arguments(
        directory, sources: ["replay://" + directory + "/track.gpx?speed=20"], config: config))
    let filled = await eventually(timeout: 120, interval: 0.05) {
      (Int((try? DaemonE2E.query(store, "SELECT count(*) FROM publish_outbox")) ?? "") ?? 0) >= 50
    }
    #expect(filled, "the outbox never filled: \(daemon.log.suffix(5))")
    guard filled else { return }
    #expect(daemon.kill(SIGKILL) == SIGKILL)
    let kept = try DaemonE2E.rows(
      store, "SELECT payload FROM publish_outbox ORDER BY sequence"
    ).compactMap { $0["payload"] as? String }
    let times = kept.compactMap { Self.timestamp($0) }
    #expect(times.count == kept.count && times.count >= 50)
    #expect(times == times.sorted())

    // A broker and a subscriber, then the daemon again (on a source that gives nothing new).
    let broker = try MosquittoBroker(port: port)
    defer { broker.remove() }
    let received = Mutex<[Int]>([])
    let connected = Mutex(false)
    let subscriber = try MQTTClient(
      MQTTClient.Configuration(host: "127.0.0.1", port: Int32(port), clientID: "e2e-recorder")
    ) { event in
      switch event {
      case .connected: connected.withLock { $0 = true }
      case .message(_, let payload):
        if let time = Self.timestamp(String(decoding: payload, as: UTF8.self)) {
          received.withLock { $0.append(time) }
        }
      case .refused, .disconnected, .acknowledged: break
      }
    }
    subscriber.start()
    defer { subscriber.stop() }
    #expect(await eventually { connected.withLock { $0 } })
    try subscriber.subscribe("owntracks/e2e/pi")
    // The subscription is in place when a probe of our own comes back.
    #expect(
      await eventually(interval: 0.1) {
        _ = try? subscriber.publish(
          topic: "owntracks/e2e/pi",
          payload: Array(#"{"_type":"location","lat":0,"lon":0,"tst":1}"#.utf8))
        return received.withLock { $0.contains(1) }
      })
    daemon = try LocationdProcess(
      LocationdProcess.arguments(
        directory, sources: ["static://" + directory + "/nothing"], config: config))
    defer { daemon.stop(SIGKILL) }
    #expect(
      await eventually(timeout: 120) {
        var seen = Set<Int>()
        let first = received.withLock { $0 }.filter { $0 != 1 && seen.insert($0).inserted }
        return first.count >= times.count && Array(first.prefix(times.count)) == times
      }, "\(received.withLock { $0.count }) received of \(times.count) kept")
    #expect(
      await eventually {
        (try? DaemonE2E.query(store, "SELECT count(*) FROM publish_outbox")) == "0"
      })
  }

  /// A location message's `tst`.
  static func timestamp(_ payload: String) -> Int? {
    guard case .location(let location) = try? OwnTracksMessage.decode(payload) else { return nil }
    return location.timestamp
  }
}
