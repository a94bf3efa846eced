import Foundation
import LocationSources
import Synchronization
import TestSupport
import Testing

/// `MQTTClient` (libmosquitto) against a real Mosquitto broker on loopback: QoS 1 messages are
/// acknowledged and delivered, TLS with a certificate authority made at test time, refused
/// credentials reported (and retried with backoff, never a crash). Skipped outside CI when the
/// broker is not installed.
@Suite(.serialized) struct MQTTClientTests {
  /// Events of one client, in order.
  final class Recorder: Sendable {
    let events = Mutex<[MQTTClient.Event]>([])
    func record(_ event: MQTTClient.Event) { events.withLock { $0.append(event) } }
    var snapshot: [MQTTClient.Event] { events.withLock { $0 } }
    var messages: [String] {
      snapshot.compactMap {
        if case .message(_, let payload) = $0 { return String(decoding: payload, as: UTF8.self) }
        return nil
      }
    }
    var connections: Int { snapshot.filter { $0 == .connected }.count }
  }

  static func broker(tls: Bool = false, users: [String: String] = [:]) throws -> MosquittoBroker? {
    guard try MosquittoBroker.ready() else { return nil }
    return try MosquittoBroker(tls: tls, users: users)
  }

  static func client(
    _ broker: MosquittoBroker, id: String, tls: MQTTClient.Configuration.TLS? = nil,
    user: String? = nil, password: String? = nil, recorder: Recorder
  ) throws -> MQTTClient {
    try MQTTClient(
      MQTTClient.Configuration(
        host: "127.0.0.1", port: Int32(broker.port), clientID: id, username: user,
        password: password, tls: tls), events: recorder.record)
  }

  /// Publishes three messages from one client to another subscribed one.
  func exchange(
    _ broker: MosquittoBroker, tls: MQTTClient.Configuration.TLS? = nil
  ) async throws {
    let received = Recorder()
    let subscriber = try Self.client(broker, id: "subscriber", tls: tls, recorder: received)
    subscriber.start()
    defer { subscriber.stop() }
    #expect(await eventually { received.connections == 1 }, "\(broker.log())")
    try subscriber.subscribe("owntracks/test/#")
    let sent = Recorder()
    let publisher = try Self.client(broker, id: "publisher", tls: tls, recorder: sent)
    publisher.start()
    defer { publisher.stop() }
    #expect(await eventually { sent.connections == 1 })
    // The subscription is in place once a first message gets through.
    #expect(
      await eventually(interval: 0.1) {
        _ = try? publisher.publish(topic: "owntracks/test/probe", payload: Array("probe".utf8))
        return received.messages.contains("probe")
      })
    var ids: [Int32] = []
    for text in ["one", "two", "three"] {
      ids.append(try publisher.publish(topic: "owntracks/test/device", payload: Array(text.utf8)))
    }
    #expect(await eventually { received.messages.suffix(3) == ["one", "two", "three"] })
    #expect(
      await eventually {
        Set(ids).isSubset(
          of: sent.snapshot.compactMap {
            if case .acknowledged(let id) = $0 { return id }
            return nil
          })
      })
  }

  @Test func qos1MessagesAreAcknowledgedAndDelivered() async throws {
    guard let broker = try Self.broker() else { return }
    defer { broker.remove() }
    try await exchange(broker)
  }

  @Test func tlsWithTheBrokersAuthority() async throws {
    guard let broker = try Self.broker(tls: true), let certificates = broker.certificates else {
      return
    }
    defer { broker.remove() }
    try await exchange(broker, tls: .init(caFile: certificates.caFile))
  }

  @Test func tlsWithAnotherAuthorityNeverConnects() async throws {
    guard let broker = try Self.broker(tls: true), let certificates = broker.certificates else {
      return
    }
    defer { broker.remove() }
    // The broker's own certificate is not an authority that signed it.
    let recorder = Recorder()
    let client = try Self.client(
      broker, id: "stranger", tls: .init(caFile: certificates.certificateFile), recorder: recorder)
    client.start()
    defer { client.stop() }
    #expect(
      await eventually {
        recorder.snapshot.contains {
          if case .disconnected = $0 { return true }
          return false
        }
      })
    #expect(recorder.connections == 0)
  }

  @Test func refusedCredentialsAreSaidAndRetriedWithBackoff() async throws {
    guard let broker = try Self.broker(users: ["alice": "secret"]) else { return }
    defer { broker.remove() }
    let refused = Recorder()
    let client = try Self.client(
      broker, id: "mallory", user: "alice", password: "wrong", recorder: refused)
    client.start()
    #expect(
      await eventually {
        refused.snapshot.contains {
          if case .refused(let reason) = $0 { return reason.contains("not authorised") }
          return false
        }
      }, "\(refused.snapshot)")
    client.stop()
    #expect(refused.connections == 0)
    let accepted = Recorder()
    let good = try Self.client(
      broker, id: "alice", user: "alice", password: "secret", recorder: accepted)
    good.start()
    defer { good.stop() }
    #expect(await eventually { accepted.connections == 1 })
  }

  @Test func stoppingFromAnEventHandlerDoesNotWaitForItself() async throws {
    guard let broker = try Self.broker() else { return }
    defer { broker.remove() }
    // What a hub does when a fix from the source makes it stop the source, on the same thread.
    let holder = Mutex<MQTTClient?>(nil)
    let stopped = Mutex(false)
    let client = try MQTTClient(
      MQTTClient.Configuration(host: "127.0.0.1", port: Int32(broker.port), clientID: "self-stop")
    ) { event in
      guard event == .connected else { return }
      holder.withLock { $0 }?.stop()
      stopped.withLock { $0 = true }
    }
    holder.withLock { $0 = client }
    client.start()
    #expect(await eventually { stopped.withLock { $0 } })
    client.stop()
    holder.withLock { $0 = nil }
  }

  /// A connection that stalls (half-open: nothing comes back, nothing is closed) is given up by
  /// the keep-alive, which says so, and the client connects again.
  @Test func aStalledConnectionIsGivenUpByTheKeepAliveAndSaidSo() async throws {
    guard let broker = try Self.broker() else { return }
    defer { broker.remove() }
    let proxy = try FlappingProxy(targetPort: broker.port)
    defer { proxy.stop() }
    var configuration = MQTTClient.Configuration(
      host: "127.0.0.1", port: Int32(proxy.port), clientID: "stalled")
    configuration.keepAlive = 5
    configuration.maximumReconnectDelay = 2
    let recorder = Recorder()
    let client = try MQTTClient(configuration, events: recorder.record)
    client.start()
    defer { client.stop() }
    #expect(await eventually { recorder.connections == 1 }, "\(broker.log())")
    #expect(proxy.stall() == 1)
    func losses() -> [String] {
      recorder.snapshot.compactMap {
        if case .disconnected(let reason) = $0 { return reason }
        return nil
      }
    }
    #expect(await eventually { !losses().isEmpty }, "\(proxy.counts)")
    #expect(losses().first?.contains("keep-alive") == true, "\(losses())")
    #expect(await eventually { recorder.connections == 2 }, "\(recorder.snapshot)")
    proxy.resume()
  }

  @Test func aMissingAuthorityFileIsAnErrorAtOnce() {
    #expect(throws: MQTTError.self) {
      _ = try MQTTClient(
        MQTTClient.Configuration(
          host: "127.0.0.1", port: 1, clientID: "x", tls: .init(caFile: "/nonexistent/ca.pem")),
        events: { _ in })
    }
  }
}
