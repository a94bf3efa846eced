/// An event kept for an app that is not running, delivered to its next manager exactly once.
///
/// Delivery protocol: read with `LocationStore.pendingEvents(app:)` (ascending `sequence`),
/// deliver, then acknowledge with `LocationStore.deleteEvents(app:throughSequence:)` using the
/// last delivered sequence number.
package struct PendingEvent: Sendable, Equatable {
  /// The store's sequence number: 0 before `appendEvent`, then unique and increasing across the
  /// store, never reused.
  package var sequence: Int64
  /// The app the event is for.
  package var app: String
  /// What happened, such as `"enter"`, `"exit"`, `"state"`, `"visit"`; the store does not interpret
  /// it.
  package var kind: String
  /// The event's details as JSON; the store does not interpret it.
  package var payload: String
  /// Wall-clock time of the event, seconds since 1970.
  package var time: Double

  /// Creates an event.
  /// - Parameters:
  ///   - sequence: 0 for a new event; the store assigns the number.
  ///   - app: The app the event is for.
  ///   - kind: What happened.
  ///   - payload: The details as JSON.
  ///   - time: Seconds since 1970.
  package init(sequence: Int64 = 0, app: String, kind: String, payload: String, time: Double) {
    self.sequence = sequence
    self.app = app
    self.kind = kind
    self.payload = payload
    self.time = time
  }
}
