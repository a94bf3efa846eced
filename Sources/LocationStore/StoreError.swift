/// An error from the location store: what went wrong, in which store operation, and SQLite's code.
///
/// Our rule: the message names tables, columns, files and SQLite's own text, never a stored value,
/// so coordinates never reach a log through an error (CONTRIBUTING.md, "How the code is written").
package struct StoreError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The kind of failure, for callers that react to it.
  package enum Code: Sendable, Equatable, CaseIterable {
    /// The file or its directory cannot be created or opened (missing, a directory, an I/O error at
    /// open).
    case cannotOpen
    /// The file or its directory is not writable, or SQLite opened the database read-only.
    case readOnly
    /// The file at the path is not an SQLite database; it is left untouched.
    case notADatabase
    /// The file is an SQLite database that is damaged; it is left untouched.
    case corrupt
    /// The file is an SQLite database that some other program owns; it is left untouched.
    case foreignDatabase
    /// The store was migrated by a newer version of this package (it records migrations this
    /// version does not know); it is left untouched.
    case newerVersion
    /// Another connection held a lock for longer than the busy timeout.
    case busy
    /// The disk or the file system quota is full.
    case full
    /// An I/O error while reading or writing.
    case ioError
    /// A constraint of the schema was violated.
    case constraint
    /// A value was rejected before anything was written (NaN, out of range, too long).
    case invalidValue
    /// The record that the operation updates does not exist.
    case notFound
    /// Any other SQLite failure (out of memory, misuse, an internal error).
    case other
    /// The store was closed (the program is ending); nothing more is read or written.
    case closed
  }

  /// The kind of failure.
  package var code: Code
  /// What went wrong, in words; never contains stored values such as coordinates.
  package var message: String
  /// SQLite's extended result code, when the failure came from SQLite.
  package var sqliteCode: Int32?
  /// The store operation that failed, such as `upsertRegion` or `open`.
  package var operation: String

  /// Creates an error.
  /// - Parameters:
  ///   - code: The kind of failure.
  ///   - message: What went wrong; must not contain stored values.
  ///   - sqliteCode: SQLite's extended result code, if any.
  ///   - operation: The store operation that failed.
  package init(code: Code, message: String, sqliteCode: Int32? = nil, operation: String = "") {
    self.code = code
    self.message = message
    self.sqliteCode = sqliteCode
    self.operation = operation
  }

  /// `LocationStore.<operation>: <message> (SQLite result code <n>)`.
  package var description: String {
    var text = "LocationStore"
    if !operation.isEmpty { text += ".\(operation)" }
    text += ": \(message)"
    if let sqliteCode { text += " (SQLite result code \(sqliteCode))" }
    return text
  }

  /// Maps an SQLite result code (primary or extended) to a `Code`.
  static func code(forSQLite result: Int32) -> Code {
    switch result & 0xFF {
    case SQLiteResult.corrupt: return .corrupt
    case SQLiteResult.notADatabase: return .notADatabase
    case SQLiteResult.cannotOpen, SQLiteResult.permission: return .cannotOpen
    case SQLiteResult.readOnly: return .readOnly
    case SQLiteResult.busy, SQLiteResult.locked: return .busy
    case SQLiteResult.full: return .full
    case SQLiteResult.ioError: return .ioError
    case SQLiteResult.constraint: return .constraint
    case SQLiteResult.tooBig, SQLiteResult.range, SQLiteResult.mismatch: return .invalidValue
    default: return .other
    }
  }
}
