extension LocationStore {
  /// Appends an event for an app that is not running; committed on return.
  /// - Parameter event: The event; its `sequence` is ignored, `time` must be finite.
  /// - Returns: The sequence number the store assigned: greater than every number assigned before
  ///   in this store, never reused.
  /// - Throws: `StoreError` `.invalidValue` for a non-finite time, or a write failure.
  package func appendEvent(_ event: PendingEvent) throws(StoreError) -> Int64 {
    guard event.time.isFinite else {
      throw StoreError(
        code: .invalidValue, message: "event time is not a finite number", operation: "appendEvent")
    }
    return try writing("appendEvent") { (connection) throws(StoreError) in
      try connection.withStatement(
        "INSERT INTO events (app, kind, payload, time) VALUES (?, ?, ?, ?)"
      ) { (statement) throws(StoreError) in
        try statement.bind(event.app, at: 1)
        try statement.bind(event.kind, at: 2)
        try statement.bind(event.payload, at: 3)
        try statement.bind(event.time, at: 4)
        while try statement.step() {}
        return connection.lastInsertRowID
      }
    }
  }

  /// The events waiting for `app`, in ascending sequence (the order they were appended).
  ///
  /// Reading does not remove them: after delivering, acknowledge with
  /// `deleteEvents(app:throughSequence:)`, so that an event is delivered exactly once even if the
  /// deliverer stops between reading and delivering.
  /// - Parameter app: The app.
  /// - Returns: The events.
  /// - Throws: `StoreError` if the store cannot be read.
  package func pendingEvents(app: String) throws(StoreError) -> [PendingEvent] {
    try locked("pendingEvents") { (connection) throws(StoreError) in
      try connection.withStatement(
        "SELECT sequence, app, kind, payload, time FROM events WHERE app = ? ORDER BY sequence"
      ) { (statement) throws(StoreError) in
        try statement.bind(app, at: 1)
        var events: [PendingEvent] = []
        while try statement.step() {
          events.append(
            PendingEvent(
              sequence: statement.int64(at: 0), app: statement.text(at: 1),
              kind: statement.text(at: 2), payload: statement.text(at: 3),
              time: statement.double(at: 4)))
        }
        return events
      }
    }
  }

  /// Removes the events of `app` with a sequence number up to and including `throughSequence`
  /// (the acknowledgement of their delivery); committed on return. Repeating it is harmless.
  /// - Parameters:
  ///   - app: The app.
  ///   - throughSequence: The last delivered sequence number.
  /// - Throws: `StoreError` if the write fails.
  ///   - kind: Only events of this kind (nil: every kind).
  package func deleteEvents(app: String, throughSequence: Int64, kind: String? = nil)
    throws(StoreError)
  {
    try writing("deleteEvents") { (connection) throws(StoreError) in
      try connection.withStatement(
        "DELETE FROM events WHERE app = ? AND sequence <= ? AND (?3 IS NULL OR kind = ?3)"
      ) { (statement) throws(StoreError) in
        try statement.bind(app, at: 1)
        try statement.bind(throughSequence, at: 2)
        if let kind { try statement.bind(kind, at: 3) } else { try statement.bindNull(at: 3) }
        while try statement.step() {}
      }
    }
  }

  /// Keeps at most the `keeping` newest events of `app` (by sequence), deleting older ones;
  /// committed on return.
  /// - Returns: How many were deleted.
  package func trimEvents(app: String, keeping: Int) throws(StoreError) -> Int {
    try writing("trimEvents") { (connection) throws(StoreError) in
      try connection.withStatement(
        """
        DELETE FROM events WHERE app = ?1 AND sequence NOT IN
          (SELECT sequence FROM events WHERE app = ?1 ORDER BY sequence DESC LIMIT ?2)
        """
      ) { (statement) throws(StoreError) in
        try statement.bind(app, at: 1)
        try statement.bind(Int64(max(0, keeping)), at: 2)
        while try statement.step() {}
      }
      return connection.changes
    }
  }

  /// Deletes every event made before `time` (seconds since 1970), whoever it waited for;
  /// committed on return.
  /// - Returns: How many were deleted.
  package func expireEvents(before time: Double) throws(StoreError) -> Int {
    try writing("expireEvents") { (connection) throws(StoreError) in
      try connection.withStatement("DELETE FROM events WHERE time < ?") {
        (statement) throws(StoreError) in
        try statement.bind(time, at: 1)
        while try statement.step() {}
      }
      return connection.changes
    }
  }

  /// Changes the kind of one event (an event that can no longer be read is set aside under
  /// another kind, kept for a person to look at, instead of being acknowledged unseen).
  package func setEventKind(app: String, sequence: Int64, kind: String) throws(StoreError) {
    try writing("setEventKind") { (connection) throws(StoreError) in
      try connection.withStatement("UPDATE events SET kind = ? WHERE app = ? AND sequence = ?") {
        (statement) throws(StoreError) in
        try statement.bind(kind, at: 1)
        try statement.bind(app, at: 2)
        try statement.bind(sequence, at: 3)
        while try statement.step() {}
      }
    }
  }
}
