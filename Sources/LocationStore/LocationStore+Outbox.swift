import LocationModel

/// A message waiting in `locationd`'s MQTT outbox (issue 18): committed before it is published,
/// deleted once the broker has acknowledged it.
package struct OutboxMessage: Sendable, Equatable {
  /// What a message is, for thinning a full outbox.
  package enum Kind: Int64, Sendable {
    /// A position: the oldest are thinned first when the outbox is full.
    case position = 0
    /// An event (a region transition, the region list): never thinned.
    case event = 1
  }

  /// Its place in the outbox (the order of publication); 0 before it is stored.
  package var sequence: Int64
  /// The MQTT topic.
  package var topic: String
  /// The payload (JSON text).
  package var payload: String
  /// Position or event.
  package var kind: Kind
  /// Whether the broker keeps it as the topic's last message.
  package var retain: Bool
  /// When it was made, seconds since 1970.
  package var time: Double

  /// Creates a message (sequence 0 until stored).
  package init(
    sequence: Int64 = 0, topic: String, payload: String, kind: Kind, retain: Bool = false,
    time: Double
  ) {
    self.sequence = sequence
    self.topic = topic
    self.payload = payload
    self.kind = kind
    self.retain = retain
    self.time = time
  }
}

extension LocationStore {
  /// Adds messages to the outbox in one transaction (all or none), then, when it holds more
  /// than `limit`, thins it: the oldest positions go first, every other one (so an old stretch of
  /// track keeps its shape at half the points), then the rest of the oldest; events are never
  /// removed, so an outbox of events alone may hold more than `limit`.
  /// - Parameters:
  ///   - messages: The messages, in order.
  ///   - limit: The most messages kept (`publish` `outbox-limit`).
  /// - Returns: The sequences given to the messages, and how many positions were thinned.
  /// - Throws: `StoreError` if the write fails (nothing is added then).
  @discardableResult
  package func appendOutbox(_ messages: [OutboxMessage], limit: Int) throws(StoreError)
    -> (sequences: [Int64], thinned: Int)
  {
    guard messages.allSatisfy({ $0.time.isFinite }) else {
      throw StoreError(
        code: .invalidValue, message: "an outbox message has a non-finite time",
        operation: "appendOutbox")
    }
    return try writing("appendOutbox") { (connection) throws(StoreError) in
      var sequences: [Int64] = []
      try connection.withStatement(
        "INSERT INTO publish_outbox (topic, payload, kind, retain, time) VALUES (?, ?, ?, ?, ?)"
      ) { (statement) throws(StoreError) in
        for message in messages {
          try statement.bind(message.topic, at: 1)
          try statement.bind(message.payload, at: 2)
          try statement.bind(message.kind.rawValue, at: 3)
          try statement.bind(Int64(message.retain ? 1 : 0), at: 4)
          try statement.bind(message.time, at: 5)
          while try statement.step() {}
          statement.reset()
          sequences.append(connection.lastInsertRowID)
        }
      }
      // The span of sequences bounds the count from above and is read from the ends of the
      // table's b-tree; the count itself (a scan of an index) is needed only when the span is
      // over the limit, so a backlog under the limit costs no scan per message.
      guard try Self.outboxSpan(connection) > limit else { return (sequences, 0) }
      let count = try Self.outboxCount(connection)
      guard count > limit else { return (sequences, 0) }
      let excess = count - max(0, limit)
      // The oldest 2 × excess positions: every other one first, then the rest, oldest first.
      var oldest: [Int64] = []
      try connection.withStatement(
        "SELECT sequence FROM publish_outbox WHERE kind = 0 ORDER BY sequence LIMIT ?"
      ) { (statement) throws(StoreError) in
        try statement.bind(Int64(2 * excess), at: 1)
        while try statement.step() { oldest.append(statement.int64(at: 0)) }
      }
      let alternate = stride(from: 0, to: oldest.count, by: 2).map { oldest[$0] }
      let others = stride(from: 1, to: oldest.count, by: 2).map { oldest[$0] }
      let doomed = Array((alternate + others).prefix(excess))
      try Self.deleteOutbox(doomed, connection)
      return (sequences, doomed.count)
    }
  }

  /// The oldest messages of the outbox after `sequence`, in order.
  /// - Parameters:
  ///   - sequence: Messages after this one (0: from the start).
  ///   - limit: The most returned.
  /// - Returns: The messages.
  /// - Throws: `StoreError` if the store cannot be read.
  package func outbox(after sequence: Int64 = 0, limit: Int) throws(StoreError) -> [OutboxMessage] {
    try locked("outbox") { (connection) throws(StoreError) in
      try connection.withStatement(
        """
        SELECT sequence, topic, payload, kind, retain, time FROM publish_outbox
        WHERE sequence > ? ORDER BY sequence LIMIT ?
        """
      ) { (statement) throws(StoreError) in
        try statement.bind(sequence, at: 1)
        try statement.bind(Int64(max(0, limit)), at: 2)
        var messages: [OutboxMessage] = []
        while try statement.step() {
          messages.append(
            OutboxMessage(
              sequence: statement.int64(at: 0), topic: statement.text(at: 1),
              payload: statement.text(at: 2),
              kind: OutboxMessage.Kind(rawValue: statement.int64(at: 3)) ?? .event,
              retain: statement.int64(at: 4) != 0, time: statement.double(at: 5)))
        }
        return messages
      }
    }
  }

  /// Deletes acknowledged messages in one transaction; unknown sequences are ignored.
  /// - Throws: `StoreError` if the write fails.
  package func deleteOutbox(_ sequences: [Int64]) throws(StoreError) {
    guard !sequences.isEmpty else { return }
    try writing("deleteOutbox") { (connection) throws(StoreError) in
      try Self.deleteOutbox(sequences, connection)
    }
  }

  /// How many messages wait in the outbox.
  /// - Throws: `StoreError` if the store cannot be read.
  package func outboxDepth() throws(StoreError) -> Int {
    try locked("outboxDepth") { (connection) throws(StoreError) in
      try Self.outboxCount(connection)
    }
  }

  /// The newest sequence less the oldest, plus one: at least the number of messages.
  private static func outboxSpan(_ connection: Connection) throws(StoreError) -> Int {
    try connection.withStatement(
      "SELECT (SELECT max(sequence) FROM publish_outbox) - (SELECT min(sequence) FROM publish_outbox) + 1"
    ) { (statement) throws(StoreError) in
      guard try statement.step() else { return 0 }
      return Int(statement.int64(at: 0))
    }
  }

  private static func outboxCount(_ connection: Connection) throws(StoreError) -> Int {
    try connection.withStatement("SELECT count(*) FROM publish_outbox") {
      (statement) throws(StoreError) in
      guard try statement.step() else { return 0 }
      return Int(statement.int64(at: 0))
    }
  }

  private static func deleteOutbox(_ sequences: [Int64], _ connection: Connection)
    throws(StoreError)
  {
    try connection.withStatement("DELETE FROM publish_outbox WHERE sequence = ?") {
      (statement) throws(StoreError) in
      for sequence in sequences {
        try statement.bind(sequence, at: 1)
        while try statement.step() {}
        statement.reset()
      }
    }
  }
}
