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
