import Foundation
import LocationSources
import Synchronization
import TestSupport

/// Whether a test's MQTT recorder is subscribed yet: the broker acknowledges a SUBSCRIBE to the
/// subscriber alone, and what the daemon publishes before the subscription is in place is lost to
/// the recorder (all of it when not retained; every position but the last when retained). The
/// recorder also subscribes to `topic` and notes a message there in `seen`; `waitUntilSubscribed`
/// publishes to `topic` until one comes back, before the test starts the daemon.
enum MQTTProbe {
  /// The probe's topic, apart from every topic the daemon publishes on.
  static let topic = "corelocation-test/probe"

  /// Publishes to `topic` on the broker at `port` until `seen` holds.
  ///
  /// - Returns: Whether it held in time.
  static func waitUntilSubscribed(port: Int, seen: () -> Bool) async throws -> Bool {
    let probe = try MQTTClient(
      MQTTClient.Configuration(
        host: "127.0.0.1", port: Int32(port), clientID: "probe-\(UUID().uuidString.prefix(8))"),
      events: { _ in })
    probe.start()
    defer { probe.stop() }
    return await eventually(interval: 0.1) {
      _ = try? probe.publish(topic: topic, payload: Array("probe".utf8))
      return seen()
    }
  }
}
