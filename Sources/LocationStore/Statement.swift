import CSQLite

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
