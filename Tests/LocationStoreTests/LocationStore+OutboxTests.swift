import LocationModel
import Testing

@testable import LocationStore

/// The MQTT outbox (migration `0005-publish-outbox`): order, deletion, and thinning when full.
@Suite struct LocationStoreOutboxTests {
  static func position(_ n: Int) -> OutboxMessage {
    OutboxMessage(topic: "owntracks/u/d", payload: "{\"n\":\(n)}", kind: .position, time: 100)
  }

  static func event(_ n: Int) -> OutboxMessage {
    OutboxMessage(
      topic: "owntracks/u/d/event", payload: "{\"e\":\(n)}", kind: .event, retain: true,
      time: 100)
  }

  @Test func keptInOrderAndDeletedWhenAcknowledged() throws {
    let store = try LocationStore.inMemory()
    let (sequences, thinned) = try store.appendOutbox((1...5).map(Self.position), limit: 100)
    #expect(thinned == 0)
    #expect(sequences == sequences.sorted() && Set(sequences).count == 5)
    #expect(try store.outbox(limit: 10).map(\.payload) == (1...5).map { "{\"n\":\($0)}" })
    #expect(
      try store.outbox(after: sequences[2], limit: 10).map(\.sequence) == [
        sequences[3], sequences[4],
      ])
    try store.deleteOutbox([sequences[0], sequences[3], 999])
    #expect(try store.outboxDepth() == 3)
    let first = try #require(try store.outbox(limit: 1).first)
    #expect(first.sequence == sequences[1] && first.kind == .position && !first.retain)
  }

  @Test func aFullOutboxThinsTheOldestPositionsEveryOtherOneAndNeverEvents() throws {
    let store = try LocationStore.inMemory()
    try store.appendOutbox([Self.event(0)] + (1...10).map(Self.position), limit: 100)
    // 11 kept, limit 8: three of the oldest positions go, every other one (1, 3, 5).
    let (_, thinned) = try store.appendOutbox([], limit: 8)
    #expect(thinned == 3)
    let left = try store.outbox(limit: 100)
    #expect(left.first?.payload == "{\"e\":0}")
    #expect(left.dropFirst().map(\.payload) == [2, 4, 6, 7, 8, 9, 10].map { "{\"n\":\($0)}" })
    // Events alone are never thinned, even beyond the limit.
    let events = try LocationStore.inMemory()
    try events.appendOutbox((1...5).map(Self.event), limit: 2)
    #expect(try events.outboxDepth() == 5)
  }

  @Test func aNonFiniteTimeIsRefusedAndNothingAdded() throws {
    let store = try LocationStore.inMemory()
    var bad = Self.position(1)
    bad.time = .nan
    #expect(throws: StoreError.self) { try store.appendOutbox([Self.position(0), bad], limit: 10) }
    #expect(try store.outboxDepth() == 0)
  }
}
