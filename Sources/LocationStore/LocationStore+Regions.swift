extension LocationStore {
  /// The columns every region query reads, in `readRegion`'s order.
  private static let regionColumns = """
    app, region_group, identifier, latitude, longitude, radius, hysteresis, notify_on_entry,
    notify_on_exit, state, state_time, extra, created
    """

  /// The regions of `app` in `group`, or in every group, ordered by group then identifier (byte
  /// order). Read through the primary key, so the cost follows the app's regions, not the store's.
  /// - Parameters:
  ///   - app: The owning app.
  ///   - group: `"manager"` or `"monitor:<name>"`; nil for every group.
  /// - Returns: The regions.
  /// - Throws: `StoreError` if the store cannot be read.
  package func regions(app: String, group: String? = nil) throws(StoreError) -> [StoredRegion] {
    try locked("regions") { (connection) throws(StoreError) in
      try connection.withStatement(
        "SELECT \(Self.regionColumns) FROM regions WHERE app = ? "
          + (group == nil ? "" : "AND region_group = ? ") + "ORDER BY region_group, identifier"
      ) { (statement) throws(StoreError) in
        try statement.bind(app, at: 1)
        if let group { try statement.bind(group, at: 2) }
        var regions: [StoredRegion] = []
        while try statement.step() { regions.append(Self.readRegion(statement)) }
        return regions
      }
    }
  }

  /// One region by its key, or nil when none is stored.
  /// - Throws: `StoreError` if the store cannot be read.
  package func region(app: String, group: String, identifier: String) throws(StoreError)
    -> StoredRegion?
  {
    try locked("region") { (connection) throws(StoreError) in
      try connection.withStatement(
        "SELECT \(Self.regionColumns) FROM regions "
          + "WHERE app = ? AND region_group = ? AND identifier = ?"
      ) { (statement) throws(StoreError) in
        try statement.bind(app, at: 1)
        try statement.bind(group, at: 2)
        try statement.bind(identifier, at: 3)
        return try statement.step() ? Self.readRegion(statement) : nil
      }
    }
  }

  /// Every stored region of every app, ordered by (app, group, identifier): what a daemon loads
  /// when it starts.
  /// - Returns: The regions.
  /// - Throws: `StoreError` if the store cannot be read (`.corrupt` if a page is damaged).
  package func allRegions() throws(StoreError) -> [StoredRegion] {
    try locked("allRegions") { (connection) throws(StoreError) in
      // One read transaction for the count and the rows, so that the capacity is right (unless
      // the caller's transaction is already open).
      let ownTransaction = connection.isAutocommit
      if ownTransaction { try connection.run("BEGIN") }
      defer { if ownTransaction { try? connection.run("COMMIT") } }
      let count = try connection.withStatement("SELECT count(*) FROM regions") {
        (statement) throws(StoreError) in
        try statement.step() ? Int(statement.int64(at: 0)) : 0
      }
      return try connection.withStatement("SELECT \(Self.regionColumns) FROM regions") {
        (statement) throws(StoreError) in
        var regions: [StoredRegion] = []
        regions.reserveCapacity(count)
        while try statement.step() { regions.append(Self.readRegion(statement)) }
        return regions
      }
    }
  }

  /// Saves `region`, replacing the stored region with the same app, group and identifier (all of
  /// its fields, state included); committed on return.
  /// - Parameter region: The region; see `upsertRegions(_:)` for the checks.
  /// - Throws: `StoreError` `.invalidValue` (nothing written) or a write failure.
  package func upsertRegion(_ region: StoredRegion) throws(StoreError) {
    try upsertRegions(CollectionOfOne(region), operation: "upsertRegion")
  }

  /// Saves `regions` in one transaction (all or none), each replacing the stored region with the
  /// same app, group and identifier; later elements win over earlier ones with the same key.
  ///
  /// Every region is checked before anything is written: latitude finite within -90...90,
  /// longitude within -180...180, radius and hysteresis finite and not negative, state 0...2,
  /// state time finite if present.
  /// - Parameter regions: The regions.
  /// - Throws: `StoreError` `.invalidValue` (nothing written) or a write failure (nothing written).
  package func upsertRegions(_ regions: [StoredRegion]) throws(StoreError) {
    try upsertRegions(regions, operation: "upsertRegions")
  }

  private func upsertRegions(
    _ regions: some Collection<StoredRegion>, operation: String
  ) throws(StoreError) {
    do throws(StoreError) {
      for region in regions { try Self.validate(region) }
    } catch {
      var error = error
      error.operation = operation
      throw error
    }
    // A region replaced by identifier keeps the time it was first stored (OwnTracks' rule for a
    // waypoint: its creation time identifies it, issue 18).
    let now = FileSystem.wallSeconds()
    try writing(operation) { (connection) throws(StoreError) in
      try connection.withStatement(
        """
        INSERT OR REPLACE INTO regions (\(Self.regionColumns))
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, COALESCE(?13, (
          SELECT created FROM regions WHERE app = ?1 AND region_group = ?2 AND identifier = ?3
        ), ?14))
        """
      ) { (statement) throws(StoreError) in
        for region in regions {
          try statement.bind(region.app, at: 1)
          try statement.bind(region.group, at: 2)
          try statement.bind(region.identifier, at: 3)
          try statement.bind(region.latitude, at: 4)
          try statement.bind(region.longitude, at: 5)
          try statement.bind(region.radius, at: 6)
          try statement.bind(region.hysteresis, at: 7)
          try statement.bind(Int64(region.notifyOnEntry ? 1 : 0), at: 8)
          try statement.bind(Int64(region.notifyOnExit ? 1 : 0), at: 9)
          try statement.bind(Int64(region.state), at: 10)
          try statement.bind(region.stateTime, at: 11)
          try statement.bind(region.extra, at: 12)
          try statement.bind(region.created, at: 13)
          try statement.bind(now, at: 14)
          while try statement.step() {}
          statement.reset()
        }
      }
    }
  }

  /// Removes one region; no error if it does not exist. Committed on return.
  /// - Parameters:
  ///   - app: The owning app.
  ///   - group: The region's group.
  ///   - identifier: The region's identifier.
  /// - Throws: `StoreError` if the write fails.
  package func deleteRegion(app: String, group: String, identifier: String) throws(StoreError) {
    try writing("deleteRegion") { (connection) throws(StoreError) in
      try connection.withStatement(
        "DELETE FROM regions WHERE app = ? AND region_group = ? AND identifier = ?"
      ) { (statement) throws(StoreError) in
        try statement.bind(app, at: 1)
        try statement.bind(group, at: 2)
        try statement.bind(identifier, at: 3)
        while try statement.step() {}
      }
    }
  }

  /// Removes every region of `app` in `group` (a `CLMonitor` that is dropped), or in every group
  /// when `group` is nil (an app that is removed). Committed on return.
  /// - Parameters:
  ///   - app: The owning app.
  ///   - group: The group, or nil for all of the app's groups.
  /// - Returns: How many regions were removed.
  /// - Throws: `StoreError` if the write fails.
  @discardableResult
  package func deleteRegions(app: String, group: String?) throws(StoreError) -> Int {
    try writing("deleteRegions") { (connection) throws(StoreError) in
      let sql =
        group == nil
        ? "DELETE FROM regions WHERE app = ?"
        : "DELETE FROM regions WHERE app = ? AND region_group = ?"
      return try connection.withStatement(sql) { (statement) throws(StoreError) in
        try statement.bind(app, at: 1)
        if let group { try statement.bind(group, at: 2) }
        while try statement.step() {}
        return connection.changes
      }
    }
  }

  /// Records a region's new state and the time of the change; committed on return, so the event
  /// that follows may be delivered.
  /// - Parameters:
  ///   - app: The owning app.
  ///   - group: The region's group.
  ///   - identifier: The region's identifier.
  ///   - state: 0 unknown, 1 inside, 2 outside.
  ///   - time: Wall-clock time of the change, seconds since 1970.
  /// - Throws: `StoreError` `.invalidValue` for a bad state or time, `.notFound` when no such
  ///   region is stored, or a write failure.
  package func setRegionState(
    app: String, group: String, identifier: String, state: Int, time: Double
  ) throws(StoreError) {
    do throws(StoreError) {
      try Validate.regionState(state)
      try Validate.finite(time, "region state time")
    } catch {
      var error = error
      error.operation = "setRegionState"
      throw error
    }
    try writing("setRegionState") { (connection) throws(StoreError) in
      let changed = try connection.withStatement(
        """
        UPDATE regions SET state = ?, state_time = ?
        WHERE app = ? AND region_group = ? AND identifier = ?
        """
      ) { (statement) throws(StoreError) in
        try statement.bind(Int64(state), at: 1)
        try statement.bind(time, at: 2)
        try statement.bind(app, at: 3)
        try statement.bind(group, at: 4)
        try statement.bind(identifier, at: 5)
        while try statement.step() {}
        return connection.changes
      }
      guard changed > 0 else {
        throw StoreError(code: .notFound, message: "no such region is stored")
      }
    }
  }

  private static func validate(_ region: StoredRegion) throws(StoreError) {
    try Validate.coordinate(latitude: region.latitude, longitude: region.longitude, of: "region")
    try Validate.nonNegative(region.radius, "region radius")
    try Validate.nonNegative(region.hysteresis, "region hysteresis")
    try Validate.regionState(region.state)
    if let time = region.stateTime { try Validate.finite(time, "region state time") }
    if let time = region.created { try Validate.finite(time, "region creation time") }
  }

  private static func readRegion(_ statement: Statement) -> StoredRegion {
    StoredRegion(
      app: statement.text(at: 0),
      group: statement.text(at: 1),
      identifier: statement.text(at: 2),
      latitude: statement.double(at: 3),
      longitude: statement.double(at: 4),
      radius: statement.double(at: 5),
      hysteresis: statement.double(at: 6),
      notifyOnEntry: statement.int64(at: 7) != 0,
      notifyOnExit: statement.int64(at: 8) != 0,
      state: Int(truncatingIfNeeded: statement.int64(at: 9)),
      stateTime: statement.optionalDouble(at: 10),
      extra: statement.optionalText(at: 11),
      created: statement.optionalDouble(at: 12))
  }
}
