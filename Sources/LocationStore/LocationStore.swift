import CSQLite
import Geodesy
import Synchronization

/// The SQLite store behind the location services: per-app authorization, settings, the last known
/// location, monitored regions with their last state, and events pending for apps that are not
/// running (`docs/architecture.md`, "Store").
///
/// Rules of this store:
/// - One database per user at `defaultPath(environment:)`, or a path the caller gives (the system
///   daemon uses e.g. `/var/lib/locationd/store.sqlite`). Missing parent directories are created
///   with mode 0700 and a new database file with mode 0600.
/// - WAL journal mode (readers never block the writer; other processes may open the same file),
///   a busy timeout of 5 s, foreign keys on.
/// - `synchronous=FULL`: every commit is on stable storage when the call returns. The architecture (`docs/architecture.md`, "Store") asks
///   that every write an event depends on be committed before the event is delivered; with
///   `NORMAL`, a power loss may roll back the last commits in WAL mode, so a region state change
///   or an appended pending event could vanish after its event was delivered, and the event would
///   be delivered twice or lost. The cost is one `fsync` per transaction; bulk changes go in one
///   transaction (`upsertRegions`, `transaction`).
/// - Named, append-only migrations, recorded in the `migrations` table. A store that records a
///   migration this version does not know was written by a newer version: it is refused with
///   `.newerVersion` and left untouched.
/// - Bad files are never deleted, repaired or overwritten: a file that is not an SQLite database
///   fails with `.notADatabase`, a damaged one with `.corrupt` (at open, or at the first operation
///   that reads the damaged part; `checkIntegrity()` checks everything), another program's SQLite
///   database with `.foreignDatabase`.
/// - Values are validated before anything is written: NaN, infinite or out-of-range numbers fail
///   with `.invalidValue`. Error messages never contain stored values.
package final class LocationStore: @unchecked Sendable {
  // @unchecked Sendable: the SQLite connection is not thread-safe (opened with
  // SQLITE_OPEN_NOMUTEX). Every use of `connection` after `init` happens inside `exclusively(_:)`
  // (directly or through `locked`/`writing`/`transaction`), which holds `gate` for the call; a
  // call made inside `transaction`'s body on the thread that already holds `gate` (recognised
  // through `owner`) runs without taking it again. So at most one thread uses the connection at
  // any time, and `connection`, `connection.transactionDepth` and `health` are only touched under
  // the gate. `deinit` (the connection closes itself) runs when no other reference, hence no
  // other user, exists.
  private var connection: Connection
  /// Whether the last transaction committed, and since when it has not (under the gate).
  var health = StoreHealth()
  /// While the file cannot be written: the store works on a copy in memory, and the file is
  /// tried again from time to time (`LocationStore+Memory.swift`; under the gate).
  var memoryFallback: MemoryFallback?
  /// Serialises every call on the connection.
  private let gate = Mutex<Void>(())
  /// The thread that holds `gate`, or 0. Only that thread stores its own identifier, so a thread
  /// that reads its own identifier here holds the gate.
  private let owner = Atomic<UInt>(0)
  /// Who hears about the store's episodes (`StoreNotice`); set by the owner.
  private let listener = Mutex<(@Sendable (StoreNotice) -> Void)?>(nil)
  /// The path of the database file, or ":memory:".
  package let path: String
  /// The SQLite VFS the file is opened through (nil: the default; tests name a fault-injecting one).
  package let vfs: String?

  /// The name of the database file inside its directory.
  package static let fileName = "store.sqlite"

  /// The `application_id` written into the database header: "CLoc".
  static let applicationID: Int64 = 0x434C_6F63

  /// Opens (creating if needed) the store at `path` and brings its schema up to date.
  ///
  /// - Parameters:
  ///   - path: The database file. Missing parent directories are created with mode 0700;
  ///   a new file gets mode 0600. The path `":memory:"` opens a new store in memory, as
  ///   `inMemory()` does.
  /// - Throws: `StoreError` with `.readOnly` when the directory or the file is not writable,
  ///   `.cannotOpen` when it cannot be created or opened, `.notADatabase`, `.corrupt` or
  ///   `.foreignDatabase` for a file that is not a healthy location store (left untouched),
  ///   `.newerVersion` for a store migrated by a newer version, `.busy` when another process
  ///   holds it longer than the busy timeout.
  ///   - vfs: The SQLite VFS to open the file through; nil for the default one.
  package init(path: String, vfs: String? = nil) throws(StoreError) {
    do throws(StoreError) {
      connection = try path == Self.memoryPath ? Self.openInMemory() : Self.openFile(path, vfs: vfs)
      self.path = path
      self.vfs = vfs
    } catch {
      var error = error
      error.operation = "open"
      throw error
    }
    if path != Self.memoryPath { OpenStores.add(self) }
  }

  /// A store on a connection opened by the caller (the copy in memory of a file that cannot be
  /// written).
  init(connection: Connection, path: String, vfs: String?) {
    self.connection = connection
    self.path = path
    self.vfs = vfs
    OpenStores.add(self)
  }

  /// Opens a new, empty store that lives in memory and disappears with the object.
  ///
  /// Each call gives an independent store with the same schema; for tests and for programs that
  /// must not leave state behind.
  /// - Throws: `StoreError` if SQLite cannot allocate the database.
  package static func inMemory() throws(StoreError) -> LocationStore {
    try LocationStore(path: memoryPath)
  }

  /// SQLite's name for a private in-memory database.
  static let memoryPath = ":memory:"

  static func openFile(_ path: String, vfs: String?) throws(StoreError) -> Connection {
    guard !path.isEmpty, !path.utf8.contains(0) else {
      throw StoreError(code: .invalidValue, message: "the path is empty or contains a NUL byte")
    }
    let directory = FileSystem.directory(of: path)
    try FileSystem.createDirectories(directory)
    try FileSystem.checkWritable(directory, what: "the directory")
    if FileSystem.exists(path) {
      if FileSystem.isDirectory(path) {
        throw StoreError(code: .cannotOpen, message: "\(path) is a directory")
      }
      try FileSystem.checkWritable(path, what: "the file")
    } else {
      try FileSystem.createPrivateFile(path)
    }
    // No SQLITE_OPEN_CREATE: the file exists now, with our mode. No SQLITE_OPEN_URI: the path is
    // a plain file name.
    let connection = try Connection.open(
      path: path, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, vfs: vfs)
    try configure(connection, isFile: true)
    return connection
  }

  private static func openInMemory() throws(StoreError) -> Connection {
    let connection = try Connection.open(
      path: memoryPath, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX)
    try configure(connection, isFile: false)
    return connection
  }

  /// The per-user store path: `$XDG_STATE_HOME/corelocation/store.sqlite`.
  ///
  /// Follows the XDG Base Directory Specification: `XDG_STATE_HOME` is used when it is set to an
  /// absolute path; otherwise `$HOME/.local/state`. When `HOME` is unset or empty, the home
  /// directory comes from the user database (`getpwuid_r`), and as a last resort the path is
  /// relative to the working directory.
  /// - Parameter environment: The process environment (pass `ProcessInfo.processInfo.environment`).
  /// - Returns: The path of the database file.
  package static func defaultPath(environment: [String: String]) -> String {
    let state: String
    if let xdg = environment["XDG_STATE_HOME"], xdg.hasPrefix("/") {
      state = xdg
    } else if let home = environment["HOME"], !home.isEmpty {
      state = join(home, ".local/state")
    } else if let home = FileSystem.passwordDatabaseHome() {
      state = join(home, ".local/state")
    } else {
      state = ".local/state"
    }
    return join(join(state, "corelocation"), fileName)
  }

  private static func join(_ directory: String, _ name: String) -> String {
    directory.hasSuffix("/") ? directory + name : directory + "/" + name
  }

  /// The SQLite library version the store runs on.
  package static var sqliteVersion: String {
    String(cString: sqlite3_libversion())
  }

  /// The names of the migrations this version knows, in order.
  package static var knownMigrations: [String] {
    Migration.all.map(\.name)
  }

  // MARK: Serialisation

  /// Runs `body` with the connection, holding the gate unless this thread already holds it (inside
  /// `transaction`). The error's `operation` is set to `operation` when it has none.
  func locked<R>(
    _ operation: String, _ body: (Connection) throws(StoreError) -> R
  ) throws(StoreError) -> R {
    do throws(StoreError) {
      return try exclusively { () throws(StoreError) -> R in
        guard connection.isOpen else {
          throw StoreError(code: .closed, message: "the store was closed")
        }
        return try body(connection)
      }
    } catch {
      var error = error
      if error.operation.isEmpty { error.operation = operation }
      throw error
    }
  }

  /// Runs `body` while this thread holds the gate; reentrant on the holding thread.
  func exclusively<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
    let me = FileSystem.currentThread()
    // Relaxed is enough: only this thread ever stores `me`, so seeing it means we stored it.
    if owner.load(ordering: .relaxed) == me { return try body() }
    var outcome: Result<R, E>?
    gate.withLock { _ in
      owner.store(me, ordering: .relaxed)
      defer { owner.store(0, ordering: .relaxed) }
      do throws(E) {
        outcome = .success(try body())
      } catch {
        outcome = .failure(error)
      }
    }
    switch outcome {
    case .success(let value): return value
    case .failure(let error): throw error
    case nil: preconditionFailure("the locked body neither returned nor threw")
    }
  }

  // MARK: Transactions

  /// Runs `body` as one transaction: everything it writes through this store is committed
  /// together, or nothing is if it throws.
  ///
  /// Transactions nest (inner ones are savepoints: an inner failure that the outer body catches
  /// undoes only the inner part). The store stays locked for other threads while `body` runs, so
  /// keep it short, and call the store from the same thread only: a call from another thread would
  /// wait for the transaction to end (a deadlock if `body` waits for it).
  /// - Parameter body: The work; may call any method of this store.
  /// - Returns: What `body` returns.
  /// - Throws: What `body` throws (after rolling back), or a `StoreError` from beginning or
  ///   committing (after rolling back).
  package func transaction<T>(_ body: () throws -> T) throws -> T {
    try exclusively { () throws -> T in
      let depth = connection.transactionDepth
      guard depth == 0 else { return try run(body, depth: depth) }
      retryFileIfDue()
      do {
        let value = try run(body, depth: 0)
        note(health.committed(at: FileSystem.wallSeconds()))
        return value
      } catch let error as StoreError {
        note(health.failed(error, at: FileSystem.wallSeconds()))
        throw error
      }
    }
  }

  /// One transaction (`depth` 0) or savepoint, with the gate held.
  private func run<T>(_ body: () throws -> T, depth: Int) throws -> T {
    try locked("transaction") { (connection) throws(StoreError) in
      try connection.run(depth == 0 ? "BEGIN IMMEDIATE" : "SAVEPOINT nested\(depth)")
    }
    connection.transactionDepth = depth + 1
    let value: T
    do {
      value = try body()
    } catch {
      connection.transactionDepth = depth
      rollback(depth: depth)
      throw error
    }
    connection.transactionDepth = depth
    do {
      try locked("transaction") { (connection) throws(StoreError) in
        try connection.run(depth == 0 ? "COMMIT" : "RELEASE nested\(depth)")
      }
    } catch {
      rollback(depth: depth)
      throw error
    }
    return value
  }

  // MARK: Notices

  /// Sets who hears about the store's episodes (failing and recovered, in memory and back on the
  /// file, moved aside): once each, on the thread that saw it, while the store is locked (so the
  /// listener must not call the store, nor wait for a thread that does).
  package func setListener(_ listener: (@Sendable (StoreNotice) -> Void)?) {
    self.listener.withLock { $0 = listener }
  }

  /// Tells the listener, if there is something to tell.
  func note(_ kind: StoreNotice.Kind?) {
    guard let kind, let listener = listener.withLock({ $0 }) else { return }
    listener(StoreNotice(path: path, kind: kind))
  }

  /// Whether the connection is open (call with the gate held).
  var connectionIsOpen: Bool { connection.isOpen }

  /// The connection (call with the gate held).
  var currentConnection: Connection { connection }

  /// Replaces the connection (call with the gate held, outside any transaction); the old one is
  /// closed.
  func replaceConnection(with new: Connection) {
    let old = connection
    connection = new
    old.close()
  }

  /// The store's condition now (`locationctl status`).
  package var condition: StoreHealth.Condition {
    exclusively { health.condition }
  }

  /// Undoes the transaction or savepoint at `depth`; errors are ignored (SQLite may already have
  /// rolled back, for example after `SQLITE_FULL`).
  private func rollback(depth: Int) {
    guard connection.isOpen else { return }
    if depth == 0 {
      if !connection.isAutocommit { try? connection.run("ROLLBACK") }
    } else {
      try? connection.run("ROLLBACK TO nested\(depth)")
      try? connection.run("RELEASE nested\(depth)")
    }
  }

  /// Runs `body` in a transaction of its own, or as part of the caller's.
  func writing<R>(
    _ operation: String, _ body: (Connection) throws(StoreError) -> R
  ) throws(StoreError) -> R {
    do {
      return try transaction { () throws -> R in try locked(operation, body) }
    } catch let error as StoreError {
      throw error
    } catch {
      throw StoreError(code: .other, message: "\(error)", operation: operation)
    }
  }

  // MARK: Maintenance

  /// The migrations recorded in the store, in the order they were applied.
  /// - Throws: `StoreError` if the table cannot be read.
  package func appliedMigrations() throws(StoreError) -> [AppliedMigration] {
    try locked("appliedMigrations") { (connection) throws(StoreError) in
      try connection.withStatement("SELECT name, applied FROM migrations ORDER BY rowid") {
        (statement) throws(StoreError) in
        var result: [AppliedMigration] = []
        while try statement.step() {
          result.append(
            AppliedMigration(name: statement.text(at: 0), applied: statement.double(at: 1)))
        }
        return result
      }
    }
  }

  /// Checks the whole file with `PRAGMA quick_check` (time grows with the size of the store).
  ///
  /// Opening checks only what it reads; a daemon may call this at start-up to find damage early.
  /// - Throws: `StoreError` `.corrupt` naming the first problem SQLite reports.
  package func checkIntegrity() throws(StoreError) {
    try locked("checkIntegrity") { (connection) throws(StoreError) in
      let report = try connection.withStatement("PRAGMA quick_check(1)") {
        (statement) throws(StoreError) in
        try statement.step() ? statement.text(at: 0) : "no result"
      }
      guard report == "ok" else {
        throw StoreError(code: .corrupt, message: "PRAGMA quick_check: \(report)")
      }
    }
  }
}
