import Dispatch
import LocationSources
import LocationStore
import Synchronization

/// `locationd`'s store-and-forward publisher (issue 18): every message is committed to the
/// store's outbox first, then published with QoS 1, and deleted only when the broker has
/// acknowledged it.
///
/// The rules:
/// - **Commit first.** `submit` returns once the messages are in the store; a `kill -9` after
///   that loses nothing (what was published but not yet acknowledged is published again: MQTT's
///   QoS 1 is "at least once", and a consumer that must not see a message twice keeps the last
///   `tst` it saw, as OwnTracks' recorder does).
/// - **In order.** At every connection the outbox is published again from its oldest message, in
///   order, at most `window` unacknowledged at once; a broker that was away for hours gets the
///   backlog oldest first, and the first copy of each message arrives in order.
/// - **Bounded.** At most `outboxLimit` messages are kept; beyond it the oldest positions are
///   thinned first (`LocationStore.appendOutbox`), events (region transitions) never.
/// - **Acknowledged, then deleted** in batches (a transaction per 512 acknowledgements, or when
///   nothing is in flight any more).
/// - A broker that refuses the credentials, or cannot be reached, is retried with backoff by
///   `MQTTClient`; `status` says so (`locationctl status`), and the log once per change.
package final class OutboxPublisher: Sendable {
  /// What `locationctl status` shows of the publisher.
  package struct Status: Sendable, Equatable {
    /// The broker, as `host:port`.
    package var broker: String
    /// Whether the connection is up.
    package var connected: Bool
    /// Messages in the outbox (not acknowledged yet).
    package var depth: Int
    /// Messages published and acknowledged since the daemon started.
    package var acknowledged: Int
    /// Positions thinned from a full outbox since the daemon started.
    package var thinned: Int
    /// The last problem (a refusal, a lost connection, a store error), if any.
    package var lastError: String?
  }

  private struct State {
    var connected = false
    /// Unacknowledged messages of this connection: message id → outbox sequence.
    var inFlight: [Int32: Int64] = [:]
    /// The newest sequence published on this connection.
    var published: Int64 = 0
    /// Acknowledged sequences not deleted yet.
    var acknowledgedSequences: [Int64] = []
    var acknowledged = 0
    var thinned = 0
    var lastError: String?
    /// The last error is the broker's refusal (credentials).
    var refused = false
    var stopped = false
  }

  /// The most messages kept in the outbox.
  package let outboxLimit: Int
  /// The most messages published and not acknowledged at once.
  package let window: Int
  /// The messages' QoS (1 or 2: acknowledged).
  package let qos: Int32
  private let store: LocationStore
  private let queue = DispatchQueue(label: "corelocation.publish")
  private let state = Mutex(State())
  private let client = Mutex<MQTTClient?>(nil)
  private let broker: String

  /// Creates a publisher (not connected: `start()`).
  /// - Throws: `MQTTError` when the MQTT settings are refused (a missing certificate file).
  package init(
    store: LocationStore, mqtt: MQTTClient.Configuration, outboxLimit: Int = 100_000,
    window: Int = 1000, qos: Int32 = 1
  ) throws(MQTTError) {
    self.store = store
    self.qos = min(2, max(1, qos))
    self.outboxLimit = outboxLimit
    self.window = max(1, window)
    broker = "\(mqtt.host):\(mqtt.port)"
    let made = try MQTTClient(mqtt) { [weak self] event in
      guard let self else { return }
      queue.async { self.handle(event) }
    }
    client.withLock { $0 = made }
  }

  /// Connects (and keeps connecting) to the broker; the outbox is published from its oldest
  /// message once connected.
  package func start() {
    client.withLock { $0 }?.start()
  }

  /// Disconnects; acknowledged messages are deleted first. What is left stays in the outbox for
  /// the next start.
  package func stop() {
    let client = client.withLock { $0 }
    client?.stop()
    queue.sync {
      state.withLock { $0.stopped = true }
      flushAcknowledged()
    }
  }

  /// Commits messages to the outbox, then publishes them when connected.
  /// - Throws: `StoreError` when the store cannot commit them (nothing is added then).
  package func submit(_ messages: [OutboxMessage]) throws(StoreError) {
    guard !messages.isEmpty else { return }
    let (_, thinned) = try store.appendOutbox(messages, limit: outboxLimit)
    if thinned > 0 { state.withLock { $0.thinned += thinned } }
    queue.async { self.pump() }
  }

  /// What `locationctl status` shows.
  package var status: Status {
    let depth = (try? store.outboxDepth()) ?? -1
    return state.withLock {
      Status(
        broker: broker, connected: $0.connected, depth: depth, acknowledged: $0.acknowledged,
        thinned: $0.thinned, lastError: $0.lastError)
    }
  }

  /// Waits until everything submitted before has been handled on the publisher's queue (tests).
  package func settle() { queue.sync {} }

  // MARK: On the queue

  private func handle(_ event: MQTTClient.Event) {
    switch event {
    case .connected:
      state.withLock { state in
        state.connected = true
        state.inFlight.removeAll()
        state.published = 0
        state.lastError = nil
        state.refused = false
      }
      DaemonLog.write("publish: connected to \(broker)")
      pump()
    case .refused(let reason), .disconnected(let reason):
      let refused = if case .refused = event { true } else { false }
      let (changed, stopped) = state.withLock { state -> (Bool, Bool) in
        // A refusal is followed by the connection's end: the refusal is what the status says.
        if !refused, !state.connected, state.refused { return (false, state.stopped) }
        let changed = state.connected || state.lastError != reason
        state.connected = false
        state.lastError = reason
        state.refused = refused
        return (changed, state.stopped)
      }
      if changed, !stopped { DaemonLog.write("publish: \(broker): \(reason)") }
    case .acknowledged(let mid):
      let flush = state.withLock { state -> Bool in
        guard let sequence = state.inFlight.removeValue(forKey: mid) else { return false }
        state.acknowledgedSequences.append(sequence)
        state.acknowledged += 1
        return state.acknowledgedSequences.count >= 512 || state.inFlight.isEmpty
      }
      if flush { flushAcknowledged() }
      // Refill when half the window is free (or nothing is in flight), not at every
      // acknowledgement: one read of the outbox per batch, not per message.
      let refill = state.withLock { $0.inFlight.count <= window / 2 }
      if refill { pump() }
    case .message:
      // The publisher subscribes to nothing.
      break
    }
  }

  /// Publishes the next messages of the outbox while the window has room.
  private func pump() {
    guard let client = client.withLock({ $0 }) else { return }
    while true {
      let (connected, room, after) = state.withLock {
        ($0.connected && !$0.stopped, window - $0.inFlight.count, $0.published)
      }
      guard connected, room > 0 else { return }
      let batch: [OutboxMessage]
      do {
        batch = try store.outbox(after: after, limit: room)
      } catch {
        state.withLock { $0.lastError = "the outbox cannot be read: \(error.message)" }
        return
      }
      guard !batch.isEmpty else { return }
      for message in batch {
        do {
          let mid = try client.publish(
            topic: message.topic, payload: Array(message.payload.utf8), qos: qos,
            retain: message.retain)
          state.withLock { state in
            state.inFlight[mid] = message.sequence
            state.published = message.sequence
          }
        } catch  where error.notConnected {
          // The connection went: everything from here is published again at the next one.
          return
        } catch {
          // A topic the protocol refuses can never be sent: it is dropped, said once.
          DaemonLog.write("publish: message \(message.sequence) dropped: \(error.message)")
          state.withLock { state in
            state.published = message.sequence
            state.acknowledgedSequences.append(message.sequence)
          }
        }
      }
    }
  }

  /// Deletes the acknowledged messages from the outbox (kept for later when the store fails).
  private func flushAcknowledged() {
    let sequences = state.withLock { $0.acknowledgedSequences }
    guard !sequences.isEmpty else { return }
    do {
      try store.deleteOutbox(sequences)
      state.withLock { $0.acknowledgedSequences.removeFirst(sequences.count) }
    } catch {
      state.withLock { $0.lastError = "acknowledged messages not deleted: \(error.message)" }
    }
  }
}
