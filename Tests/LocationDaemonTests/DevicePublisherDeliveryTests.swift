import Foundation
import LocationEngine
import LocationModel
import LocationServices
import LocationSources
import LocationStore
import TestSupport
import Testing

@testable import LocationDaemon

/// Issue 19: the publisher's hub runs on the source pool's fan-out, usually before the apps'
/// (it subscribes when the daemon starts), so its delivery must not wait for the outbox's commit
/// (`synchronous=FULL`: an `fsync`): it hands due locations to a queue of its own. No broker is
/// needed: the publisher is never started.
@Suite struct DevicePublisherDeliveryTests {
  func publisher(store: LocationStore) throws -> DevicePublisher {
    var settings = PublishSettings()
    settings.host = "127.0.0.1"
    settings.port = 1
    settings.topic = "owntracks/test/device"
    return try DevicePublisher(
      settings: settings, store: store, sources: .objects { [] }, clock: ManualClock(),
      reducer: ReducedAccuracy(secret: 7), daemonUID: getuid())
  }

  func fix(at time: Double) -> Fix {
    Fix(
      latitude: 52.37, longitude: 4.89, horizontalAccuracy: 5, time: time, quality: .autonomous)
  }

  @Test func aDeliveryReturnsBeforeTheOutboxCommitsAndTheCommitFollowsInOrder() throws {
    let store = try LocationStore.inMemory()
    let publisher = try publisher(store: store)
    let hub = LocationHub(
      app: "test", sources: .objects { [] }, persistence: MemoryPersistence(),
      clock: ManualClock())
    // The commit cannot run while the queue is held: a delivery that committed itself would
    // leave a message in the outbox before it returns.
    publisher.positions.suspend()
    publisher.hub(hub, deliver: .locations([fix(at: 1_767_225_600)]))
    publisher.hub(hub, deliver: .locations([fix(at: 1_767_225_610)]))  // within the interval
    publisher.hub(hub, deliver: .locations([fix(at: 1_767_225_700)]))
    #expect(try store.outboxDepth() == 0, "the deliveries committed nothing themselves")
    publisher.positions.resume()
    // `stop()` commits what is queued before it returns.
    publisher.stop()
    let messages = try store.outbox(after: 0, limit: 10)
    #expect(messages.count == 2, "one a minute (minimum-interval 60 s)")
    #expect(messages.map(\.time) == [1_767_225_600, 1_767_225_700], "in order")
  }
}
