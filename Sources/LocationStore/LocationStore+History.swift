import LocationModel

/// Where a page of the track history ended: the time and the sequence (the order of recording)
/// of its last point. The next page starts after it, so points that share a time are neither
/// skipped nor repeated at a page boundary.
package struct HistoryCursor: Sendable, Equatable {
  /// The last point's time, seconds since 1970.
  package var time: Double
  /// The last point's sequence.
  package var sequence: Int64

  /// Creates a cursor.
  package init(time: Double, sequence: Int64) {
    self.time = time
    self.sequence = sequence
  }
}

/// One page of the track history, oldest first.
package struct HistoryPage: Sendable, Equatable {
  /// The points. Each keeps the time, the coordinate, the altitude, the horizontal and vertical
  /// accuracy, the speed and the course of the fix it was recorded from; the other members of
  /// `Fix` are their "unknown" values.
  package var fixes: [Fix]
  /// Where the next page starts; nil when this page is the last (it held fewer points than asked
  /// for).
  package var next: HistoryCursor?

  /// Creates a page.
  package init(fixes: [Fix], next: HistoryCursor?) {
    self.fixes = fixes
    self.next = next
  }
}

// The device's track history (issue 18, migration `0006-track-history`): `locationd`'s own
// positions, recorded in batches when `history = yes`, read back a page at a time in time order,
// and pruned past the retention.
extension LocationStore {
  /// Appends points to the history in one transaction (all or none).
  /// - Parameter fixes: The points. Each coordinate must be valid (latitude within -90...90,
  ///   longitude within -180...180); time, accuracies, speed, course and a known altitude must
  ///   be finite.
  /// - Throws: `StoreError` `.invalidValue` naming the field when one point is not (nothing is
  ///   added), or a write failure.
  package func appendHistory(_ fixes: [Fix]) throws(StoreError) {
    guard !fixes.isEmpty else { return }
    do throws(StoreError) {
      for fix in fixes { try Self.validateHistory(fix) }
    } catch {
      var error = error
      error.operation = "appendHistory"
      throw error
    }
    try writing("appendHistory") { (connection) throws(StoreError) in
      try connection.withStatement(
        """
        INSERT INTO track_history (time, latitude, longitude, altitude, horizontal_accuracy,
          vertical_accuracy, speed, course)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?)
        """
      ) { (statement) throws(StoreError) in
        for fix in fixes {
          try statement.bind(fix.time, at: 1)
          try statement.bind(fix.latitude, at: 2)
          try statement.bind(fix.longitude, at: 3)
          try statement.bind(fix.altitude, at: 4)
          try statement.bind(fix.horizontalAccuracy, at: 5)
          try statement.bind(fix.verticalAccuracy, at: 6)
          try statement.bind(fix.speed, at: 7)
          try statement.bind(fix.course, at: 8)
          while try statement.step() {}
          statement.reset()
        }
      }
    }
  }

  /// A page of the history in time order (points recorded at the same time in the order they
  /// were recorded).
  /// - Parameters:
  ///   - since: The earliest time, included; nil: from the first point.
  ///   - until: The latest time, excluded; nil: to the last point.
  ///   - cursor: Points after this one (the previous page's `next`); nil: from `since`.
  ///   - limit: The most points returned (at least 1).
  /// - Returns: The page; its `next` is set when it holds `limit` points.
  /// - Throws: `StoreError` `.invalidValue` for a bound or cursor that is not finite, or a read
  ///   failure.
  package func history(
    since: Double? = nil, until: Double? = nil, after cursor: HistoryCursor? = nil, limit: Int
  ) throws(StoreError) -> HistoryPage {
    do throws(StoreError) {
      if let since { try Validate.finite(since, "history since") }
      if let until { try Validate.finite(until, "history until") }
      if let cursor { try Validate.finite(cursor.time, "history cursor time") }
    } catch {
      var error = error
      error.operation = "history"
      throw error
    }
    let limit = max(1, limit)
    // The scan starts at the later of `since` and the cursor, so a deep page does not walk the
    // index from the start again.
    var lower = since ?? -Double.greatestFiniteMagnitude
    if let cursor { lower = max(lower, cursor.time) }
    let upper = until ?? Double.greatestFiniteMagnitude
    return try locked("history") { (connection) throws(StoreError) in
      try connection.withStatement(
        """
        SELECT sequence, time, latitude, longitude, altitude, horizontal_accuracy,
          vertical_accuracy, speed, course
        FROM track_history
        WHERE time >= ?1 AND time < ?2 AND (time > ?3 OR (time = ?3 AND sequence > ?4))
        ORDER BY time, sequence LIMIT ?5
        """
      ) { (statement) throws(StoreError) in
        try statement.bind(lower, at: 1)
        try statement.bind(upper, at: 2)
        try statement.bind(cursor?.time ?? -Double.greatestFiniteMagnitude, at: 3)
        try statement.bind(cursor?.sequence ?? Int64.min, at: 4)
        try statement.bind(Int64(limit), at: 5)
        var fixes: [Fix] = []
        var last: HistoryCursor?
        while try statement.step() {
          let fix = Fix(
            latitude: statement.double(at: 2), longitude: statement.double(at: 3),
            altitude: statement.optionalDouble(at: 4),
            horizontalAccuracy: statement.double(at: 5),
            verticalAccuracy: statement.double(at: 6), speed: statement.double(at: 7),
            course: statement.double(at: 8), time: statement.double(at: 1))
          fixes.append(fix)
          last = HistoryCursor(time: fix.time, sequence: statement.int64(at: 0))
        }
        return HistoryPage(fixes: fixes, next: fixes.count == limit ? last : nil)
      }
    }
  }

  /// Deletes the points older than `time` (the retention's edge), in one transaction.
  /// - Parameter time: Points before this time go, seconds since 1970.
  /// - Returns: How many were deleted.
  /// - Throws: `StoreError` `.invalidValue` for a time that is not finite, or a write failure.
  @discardableResult
  package func pruneHistory(before time: Double) throws(StoreError) -> Int {
    guard time.isFinite else {
      throw StoreError(
        code: .invalidValue, message: "history prune time is not a finite number",
        operation: "pruneHistory")
    }
    return try writing("pruneHistory") { (connection) throws(StoreError) in
      try connection.withStatement("DELETE FROM track_history WHERE time < ?") {
        (statement) throws(StoreError) in
        try statement.bind(time, at: 1)
        while try statement.step() {}
      }
      return connection.changes
    }
  }

  /// How many points the history holds.
  /// - Throws: `StoreError` if the store cannot be read.
  package func historyCount() throws(StoreError) -> Int {
    try locked("historyCount") { (connection) throws(StoreError) in
      try connection.withStatement("SELECT count(*) FROM track_history") {
        (statement) throws(StoreError) in
        guard try statement.step() else { return 0 }
        return Int(statement.int64(at: 0))
      }
    }
  }

  /// How many points the history holds, and the times of its oldest and newest (nil when empty).
  /// - Throws: `StoreError` if the store cannot be read.
  package func historyExtent() throws(StoreError) -> (count: Int, oldest: Double?, newest: Double?)
  {
    try locked("historyExtent") { (connection) throws(StoreError) in
      try connection.withStatement("SELECT count(*), min(time), max(time) FROM track_history") {
        (statement) throws(StoreError) in
        guard try statement.step() else { return (0, nil, nil) }
        return (
          Int(statement.int64(at: 0)), statement.optionalDouble(at: 1),
          statement.optionalDouble(at: 2)
        )
      }
    }
  }

  private static func validateHistory(_ fix: Fix) throws(StoreError) {
    try Validate.coordinate(latitude: fix.latitude, longitude: fix.longitude, of: "history point")
    try Validate.finite(fix.time, "history point time")
    try Validate.finite(fix.horizontalAccuracy, "history point horizontal accuracy")
    try Validate.finite(fix.verticalAccuracy, "history point vertical accuracy")
    try Validate.finite(fix.speed, "history point speed")
    try Validate.finite(fix.course, "history point course")
    if let altitude = fix.altitude { try Validate.finite(altitude, "history point altitude") }
  }
}
