extension LocationStore {
  /// Sets up a freshly opened connection: result codes, busy timeout, checks that the file is a
  /// location store this version can use (reading only), then journal mode, durability, foreign
  /// keys, and the migrations.
  static func configure(_ connection: Connection, isFile: Bool) throws(StoreError) {
    try connection.enableExtendedResultCodes()
    try connection.setBusyTimeout(milliseconds: 5_000)
    // Nothing is written before this check passes, so a file that is not ours stays untouched.
    let found = try inspect(connection)
    if isFile {
      // WAL needs shared memory; where the file system cannot provide it (some network file
      // systems) SQLite keeps the rollback journal, which is as durable, and the store goes on.
      try connection.run("PRAGMA journal_mode=WAL")
    }
    // FULL, not NORMAL: see the type's documentation ("every write that an event depends on is
    // committed before the event is delivered").
    try connection.run("PRAGMA synchronous=FULL")
    try connection.run("PRAGMA foreign_keys=ON")
    let upToDate =
      found.applicationID == applicationID
      && found.applied == Migration.all.map(\.name)
    if !upToDate { try migrate(connection) }
  }

  /// What `inspect` found in an existing file.
  private struct Inspection {
    var applicationID: Int64
    var applied: [String]
  }

  /// Reads the header and schema: refuses files that are not location stores, and stores migrated
  /// by a newer version. Writes nothing.
  private static func inspect(_ connection: Connection) throws(StoreError) -> Inspection {
    // Reading the schema reads page 1: a file that is not a database fails here (SQLITE_NOTADB),
    // a damaged schema with SQLITE_CORRUPT.
    let objects = try count(connection, "SELECT count(*) FROM sqlite_master")
    let applicationID = try count(connection, "PRAGMA application_id")
    let hasMigrations =
      try count(
        connection,
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'migrations'"
      ) > 0
    if applicationID != 0 && applicationID != self.applicationID {
      throw StoreError(
        code: .foreignDatabase,
        message:
          "the file is an SQLite database of another program (application_id \(applicationID))"
      )
    }
    if objects > 0 && !hasMigrations {
      throw StoreError(
        code: .foreignDatabase,
        message: "the file is an SQLite database without a migrations table, not a location store")
    }
    let applied = hasMigrations ? try appliedNames(connection) : []
    try refuseUnknown(applied)
    return Inspection(applicationID: applicationID, applied: applied)
  }

  private static func count(_ connection: Connection, _ sql: String) throws(StoreError) -> Int64 {
    try connection.withStatement(sql) { (statement) throws(StoreError) in
      try statement.step() ? statement.int64(at: 0) : 0
    }
  }

  private static func appliedNames(_ connection: Connection) throws(StoreError) -> [String] {
    try connection.withStatement("SELECT name FROM migrations ORDER BY rowid") {
      (statement) throws(StoreError) in
      var names: [String] = []
      while try statement.step() { names.append(statement.text(at: 0)) }
      return names
    }
  }

  /// Throws `.newerVersion` when `applied` names a migration this version does not know.
  private static func refuseUnknown(_ applied: [String]) throws(StoreError) {
    let known = Set(Migration.all.map(\.name))
    let unknown = applied.filter { !known.contains($0) }
    guard unknown.isEmpty else {
      throw StoreError(
        code: .newerVersion,
        message: "the store was migrated by a newer version (unknown migrations: "
          + unknown.joined(separator: ", ") + "); this version cannot use it and left it untouched"
      )
    }
  }

  /// Applies the missing migrations in order, in one write transaction, each recorded with the
  /// time it was applied; re-checks inside the transaction in case another process migrated.
  private static func migrate(_ connection: Connection) throws(StoreError) {
    try connection.run("BEGIN IMMEDIATE")
    do throws(StoreError) {
      try connection.execute(
        "CREATE TABLE IF NOT EXISTS migrations (name TEXT NOT NULL PRIMARY KEY, applied REAL NOT NULL)"
      )
      let applied = try appliedNames(connection)
      try refuseUnknown(applied)
      for migration in Migration.all where !applied.contains(migration.name) {
        try connection.execute(migration.sql)
        try connection.withStatement(
          "INSERT INTO migrations (name, applied) VALUES (?, (julianday('now') - 2440587.5) * 86400.0)"
        ) { (statement) throws(StoreError) in
          try statement.bind(migration.name, at: 1)
          while try statement.step() {}
        }
      }
      try connection.execute("PRAGMA application_id = \(applicationID)")
      try connection.run("COMMIT")
    } catch {
      if !connection.isAutocommit { try? connection.run("ROLLBACK") }
      throw error
    }
  }
}
