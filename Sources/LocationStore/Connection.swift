import CSQLite

/// One SQLite connection: the thin layer over `sqlite3*`, one method per C call.
///
/// Not thread-safe (the library is opened with `SQLITE_OPEN_NOMUTEX`): its owner, `LocationStore`,
/// serialises every use. Prepared statements are compiled once per SQL text and cached for the
/// life of the connection. Closing (`close()`, or `deinit` for a connection nobody closed)
/// finalizes the cached statements, then closes the connection, which checkpoints the WAL into the
/// database file and removes it when it is the last connection to the file. After `close()` the
/// handle must not be used: the owner checks `isOpen` first.
final class Connection {
  /// The `sqlite3*` handle.
  let handle: OpaquePointer
  /// Cached prepared statements by SQL text.
  private var statements: [String: Statement] = [:]
  /// Nesting depth of `LocationStore.transaction` (0: none; 1: `BEGIN`; more: savepoints).
  var transactionDepth = 0
  /// False once `close()` ran.
  private(set) var isOpen = true

  private init(handle: OpaquePointer) {
    self.handle = handle
  }

  deinit {
    close()
  }

  /// `sqlite3_finalize` on every cached statement, then `sqlite3_close_v2`. Safe to call twice.
  /// - Parameter checkpoint: false to leave the write-ahead log as it is (a damaged file moved
  ///   aside keeps its log beside it, unapplied).
  func close(checkpoint: Bool = true) {
    guard isOpen else { return }
    isOpen = false
    if !checkpoint { _ = csqlite_no_checkpoint_on_close(handle) }
    for statement in statements.values { statement.finalize() }
    statements.removeAll()
    sqlite3_close_v2(handle)
  }

  /// `sqlite3_open_v2`: opens a connection with the given flags, through the named VFS (nil: the
  /// default one).
  static func open(path: String, flags: Int32, vfs: String? = nil) throws(StoreError) -> Connection
  {
    var database: OpaquePointer?
    let result = sqlite3_open_v2(path, &database, flags, vfs)
    guard let database else {
      throw StoreError(
        code: .other, message: "sqlite3_open_v2: cannot allocate a connection", sqliteCode: result)
    }
    // From here on the connection closes itself in deinit, on success and failure alike.
    let connection = Connection(handle: database)
    guard result == SQLiteResult.ok else {
      throw connection.error(result, call: "sqlite3_open_v2 \(path)")
    }
    return connection
  }

  /// `sqlite3_extended_result_codes`: turns on extended result codes.
  func enableExtendedResultCodes() throws(StoreError) {
    try check(sqlite3_extended_result_codes(handle, 1), call: "sqlite3_extended_result_codes")
  }

  /// `sqlite3_busy_timeout`: how long to wait for another connection's lock.
  func setBusyTimeout(milliseconds: Int32) throws(StoreError) {
    try check(sqlite3_busy_timeout(handle, milliseconds), call: "sqlite3_busy_timeout")
  }

  /// `sqlite3_changes`: rows changed by the last INSERT, UPDATE or DELETE.
  var changes: Int {
    Int(sqlite3_changes(handle))
  }

  /// `sqlite3_last_insert_rowid`: the rowid of the last successful INSERT.
  var lastInsertRowID: Int64 {
    sqlite3_last_insert_rowid(handle)
  }

  /// `sqlite3_get_autocommit`: true when no transaction is open.
  var isAutocommit: Bool {
    sqlite3_get_autocommit(handle) != 0
  }

  /// `sqlite3_exec`: runs one or more statements, ignoring rows (migrations; not cached).
  func execute(_ sql: String) throws(StoreError) {
    var errorText: UnsafeMutablePointer<CChar>?
    let result = sqlite3_exec(handle, sql, nil, nil, &errorText)
    // `sqlite3_errmsg` still holds the same text; release the copy.
    sqlite3_free(errorText)
    try check(result, call: "sqlite3_exec")
  }

  /// `sqlite3_prepare_v3`: compiles one statement (not cached; see `cached(_:)`).
  func prepare(_ sql: String) throws(StoreError) -> Statement {
    var statement: OpaquePointer?
    let result = sqlite3_prepare_v3(
      handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
    guard result == SQLiteResult.ok else { throw error(result, call: "sqlite3_prepare_v3") }
    guard let statement else {
      throw StoreError(code: .other, message: "sqlite3_prepare_v3: empty statement")
    }
    return Statement(handle: statement, database: handle)
  }

  /// The cached prepared statement for `sql`, compiled on first use.
  func cached(_ sql: String) throws(StoreError) -> Statement {
    if let statement = statements[sql] { return statement }
    let statement = try prepare(sql)
    statements[sql] = statement
    return statement
  }

  /// Runs `body` with the cached statement for `sql`, then resets it and clears its bindings.
  func withStatement<R>(
    _ sql: String, _ body: (Statement) throws(StoreError) -> R
  ) throws(StoreError) -> R {
    let statement = try cached(sql)
    defer {
      statement.reset()
      statement.clearBindings()
    }
    return try body(statement)
  }

  /// Runs a cached statement that returns no rows (or whose rows are ignored) to completion.
  func run(_ sql: String) throws(StoreError) {
    try withStatement(sql) { (statement) throws(StoreError) in
      while try statement.step() {}
    }
  }

  /// `sqlite3_wal_checkpoint_v2` on the main database: copies the WAL into the database file;
  /// `truncate` also empties the WAL file (waiting up to the busy timeout for readers).
  /// - Returns: The frames in the WAL and those checkpointed (both -1 when not in WAL mode).
  @discardableResult
  func checkpoint(truncate: Bool) throws(StoreError) -> (log: Int32, checkpointed: Int32) {
    var log: Int32 = -1
    var checkpointed: Int32 = -1
    let mode = truncate ? SQLITE_CHECKPOINT_TRUNCATE : SQLITE_CHECKPOINT_PASSIVE
    try check(
      sqlite3_wal_checkpoint_v2(handle, "main", mode, &log, &checkpointed),
      call: "sqlite3_wal_checkpoint_v2")
    return (log, checkpointed)
  }

  /// `sqlite3_errmsg` and `sqlite3_system_errno`: turns a result code into a `StoreError`.
  func error(_ result: Int32, call: String) -> StoreError {
    sqliteError(result, database: handle, call: call)
  }

  /// Throws the `StoreError` for `result` unless it is `SQLITE_OK`.
  func check(_ result: Int32, call: String) throws(StoreError) {
    guard result == SQLiteResult.ok else { throw error(result, call: call) }
  }
}
