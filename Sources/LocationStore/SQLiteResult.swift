import CSQLite

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

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
///
/// An I/O error whose system error is `EROFS` (a file system remounted read-only under an open
/// store) is `.readOnly`, and one whose system error is `ENOSPC` or `EDQUOT` is `.full`, whatever
/// SQLite's own code: the caller reacts to what the file system said.
func sqliteError(_ result: Int32, database: OpaquePointer, call: String) -> StoreError {
  var message = "\(call): \(String(cString: sqlite3_errmsg(database)))"
  var code = StoreError.code(forSQLite: result)
  switch result & 0xFF {
  case SQLiteResult.cannotOpen, SQLiteResult.ioError, SQLiteResult.full, SQLiteResult.readOnly:
    let systemError = sqlite3_system_errno(database)
    if systemError != 0 { message += " (\(systemErrorDescription(systemError)))" }
    if code == .ioError || code == .cannotOpen {
      if systemError == EROFS { code = .readOnly }
      if systemError == ENOSPC || systemError == EDQUOT { code = .full }
    }
  default:
    break
  }
  return StoreError(code: code, message: message, sqliteCode: result)
}
