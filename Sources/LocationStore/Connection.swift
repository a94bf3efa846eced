import CSQLite

/// SQLite's result codes used by the store, as Swift constants (`sqlite3.h`, "Result Codes").
enum SQLiteResult {
  static let ok = SQLITE_OK
  static let permission = SQLITE_PERM
  static let busy = SQLITE_BUSY
  static let locked = SQLITE_LOCKED
  static let readOnly = SQLITE_READONLY
  static let ioError = SQLITE_IOERR
  static let corrupt = SQLITE_CORRUPT
  static let full = SQLITE_FULL
  static let cannotOpen = SQLITE_CANTOPEN
  static let tooBig = SQLITE_TOOBIG
  static let constraint = SQLITE_CONSTRAINT
  static let mismatch = SQLITE_MISMATCH
  static let range = SQLITE_RANGE
  static let notADatabase = SQLITE_NOTADB
  static let row = SQLITE_ROW
  static let done = SQLITE_DONE
}

/// One SQLite connection: the thin layer over `sqlite3*`, one method per C call.
///
/// Not thread-safe (the library is opened with `SQLITE_OPEN_NOMUTEX`): its owner, `LocationStore`,
/// serialises every use. Prepared statements are compiled once per SQL text and cached for the
/// life of the connection. Closing happens in `deinit`: cached statements are finalized, then the
/// connection is closed (which checkpoints and removes the WAL file when it is the last one).
final class Connection {
  /// The `sqlite3*` handle.
  let handle: OpaquePointer
  /// Cached prepared statements by SQL text.
  private var statements: [String: Statement] = [:]
  /// Nesting depth of `LocationStore.transaction` (0: none; 1: `BEGIN`; more: savepoints).
  var transactionDepth = 0

  private init(handle: OpaquePointer) {
    self.handle = handle
  }

  deinit {
    for statement in statements.values { statement.finalize() }
    statements.removeAll()
    sqlite3_close_v2(handle)
  }

  /// `sqlite3_open_v2`: opens a connection with the given flags.
  static func open(path: String, flags: Int32) throws(StoreError) -> Connection {
    var database: OpaquePointer?
    let result = sqlite3_open_v2(path, &database, flags, nil)
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

  /// `sqlite3_errmsg` and `sqlite3_system_errno`: turns a result code into a `StoreError`.
  func error(_ result: Int32, call: String) -> StoreError {
    sqliteError(result, database: handle, call: call)
  }

  /// Throws the `StoreError` for `result` unless it is `SQLITE_OK`.
  func check(_ result: Int32, call: String) throws(StoreError) {
    guard result == SQLiteResult.ok else { throw error(result, call: call) }
  }
}

/// One prepared statement: the thin layer over `sqlite3_stmt*`, one method per C call.
///
/// Parameter and column indices follow SQLite: parameters count from 1, columns from 0.
final class Statement {
  private let handle: OpaquePointer
  private let database: OpaquePointer

  init(handle: OpaquePointer, database: OpaquePointer) {
    self.handle = handle
    self.database = database
  }

  /// `sqlite3_finalize`; the owning connection calls it once, before closing.
  func finalize() {
    sqlite3_finalize(handle)
  }

  /// `sqlite3_bind_double`. NaN would be stored as NULL, so callers validate first.
  func bind(_ value: Double, at index: Int32) throws(StoreError) {
    try check(sqlite3_bind_double(handle, index, value), call: "sqlite3_bind_double")
  }

  /// `sqlite3_bind_int64`.
  func bind(_ value: Int64, at index: Int32) throws(StoreError) {
    try check(sqlite3_bind_int64(handle, index, value), call: "sqlite3_bind_int64")
  }

  /// `sqlite3_bind_text` with `SQLITE_TRANSIENT` (SQLite copies the bytes); keeps embedded NULs.
  func bind(_ value: String, at index: Int32) throws(StoreError) {
    var text = value
    let result = text.withUTF8 { bytes -> Int32 in
      guard bytes.count <= Int(Int32.max) else { return SQLiteResult.tooBig }
      guard let base = bytes.baseAddress, !bytes.isEmpty else {
        // A nil pointer would bind NULL; an empty string is bound as an empty text.
        return sqlite3_bind_text(handle, index, "", 0, csqlite_transient())
      }
      return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
        sqlite3_bind_text(handle, index, $0, Int32(bytes.count), csqlite_transient())
      }
    }
    try check(result, call: "sqlite3_bind_text")
  }

  /// `sqlite3_bind_null`.
  func bindNull(at index: Int32) throws(StoreError) {
    try check(sqlite3_bind_null(handle, index), call: "sqlite3_bind_null")
  }

  /// Binds a value or NULL.
  func bind(_ value: Double?, at index: Int32) throws(StoreError) {
    if let value { try bind(value, at: index) } else { try bindNull(at: index) }
  }

  /// Binds a value or NULL.
  func bind(_ value: Int64?, at index: Int32) throws(StoreError) {
    if let value { try bind(value, at: index) } else { try bindNull(at: index) }
  }

  /// Binds a value or NULL.
  func bind(_ value: String?, at index: Int32) throws(StoreError) {
    if let value { try bind(value, at: index) } else { try bindNull(at: index) }
  }

  /// `sqlite3_step`: true when a row is ready, false when the statement is done.
  func step() throws(StoreError) -> Bool {
    let result = sqlite3_step(handle)
    if result == SQLiteResult.row { return true }
    if result == SQLiteResult.done { return false }
    throw error(result, call: "sqlite3_step")
  }

  /// `sqlite3_reset`. Its result repeats the last `step` error, already thrown there.
  func reset() {
    sqlite3_reset(handle)
  }

  /// `sqlite3_clear_bindings`: releases the copies of bound text.
  func clearBindings() {
    sqlite3_clear_bindings(handle)
  }

  /// `sqlite3_column_type` is `SQLITE_NULL`.
  func isNull(at column: Int32) -> Bool {
    sqlite3_column_type(handle, column) == SQLITE_NULL
  }

  /// `sqlite3_column_double`.
  func double(at column: Int32) -> Double {
    sqlite3_column_double(handle, column)
  }

  /// `sqlite3_column_double`, or nil for NULL.
  func optionalDouble(at column: Int32) -> Double? {
    isNull(at: column) ? nil : double(at: column)
  }

  /// `sqlite3_column_int64`.
  func int64(at column: Int32) -> Int64 {
    sqlite3_column_int64(handle, column)
  }

  /// `sqlite3_column_int64`, or nil for NULL.
  func optionalInt64(at column: Int32) -> Int64? {
    isNull(at: column) ? nil : int64(at: column)
  }

  /// `sqlite3_column_text` and `sqlite3_column_bytes`: the text (NULL reads as "").
  func text(at column: Int32) -> String {
    guard let bytes = sqlite3_column_text(handle, column) else { return "" }
    let count = Int(sqlite3_column_bytes(handle, column))
    return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
  }

  /// `sqlite3_column_text`, or nil for NULL.
  func optionalText(at column: Int32) -> String? {
    isNull(at: column) ? nil : text(at: column)
  }

  private func error(_ result: Int32, call: String) -> StoreError {
    sqliteError(result, database: database, call: call)
  }

  private func check(_ result: Int32, call: String) throws(StoreError) {
    guard result == SQLiteResult.ok else { throw error(result, call: call) }
  }
}

/// `sqlite3_errmsg` and, for file-system failures, `sqlite3_system_errno`: a `StoreError` for a
/// failed call. SQLite's messages name tables and columns, never bound values.
func sqliteError(_ result: Int32, database: OpaquePointer, call: String) -> StoreError {
  var message = "\(call): \(String(cString: sqlite3_errmsg(database)))"
  switch result & 0xFF {
  case SQLiteResult.cannotOpen, SQLiteResult.ioError, SQLiteResult.full, SQLiteResult.readOnly:
    let systemError = sqlite3_system_errno(database)
    if systemError != 0 { message += " (\(systemErrorDescription(systemError)))" }
  default:
    break
  }
  return StoreError(code: StoreError.code(forSQLite: result), message: message, sqliteCode: result)
}
