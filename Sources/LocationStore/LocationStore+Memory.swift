import CSQLite

/// What a store keeps while its file cannot be written (README, "When the store fails").
struct MemoryFallback {
  /// Why the file cannot be written.
  var cause: StoreError
  /// Whether the copy in memory began as the file's contents (or the file had none), so that
  /// what changed in memory can be written back over it; otherwise the file is used as it is.
  var startedFromFile: Bool
  /// When the file is tried next (monotonic seconds).
  var nextTry: Double
}

extension LocationStore {
  /// Seconds between two tries of a file that could not be written.
  static let fileRetryInterval: Double = 60

  /// A store for `path` whose file cannot be written (`cause`: a read-only file system, a file or
  /// directory without write permission): it works on a copy in memory, loaded from the file
  /// when the file can be read, and tries the file again at most once a minute, at the start of
  /// a transaction. When the file takes writes again, the copy is written to it (SQLite's backup
  /// API) when it began as the file's contents, and dropped otherwise (the file is then used as
  /// it is); the listener hears `backOnFile`.
  static func keepingInMemory(
    _ path: String, vfs: String?, cause: StoreError
  ) throws(StoreError) -> (LocationStore, StoreNotice) {
    let memory = try Connection.open(
      path: memoryPath, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX)
    var startedFromFile = !FileSystem.exists(path)
    if !startedFromFile {
      startedFromFile = load(path, vfs: vfs, into: memory)
    }
    try configure(memory, isFile: false)
    let store = LocationStore(connection: memory, path: path, vfs: vfs)
    let now = FileSystem.wallSeconds()
    let kind = store.exclusively { () -> StoreNotice.Kind? in
      store.memoryFallback = MemoryFallback(
        cause: cause, startedFromFile: startedFromFile,
        nextTry: FileSystem.monotonicSeconds() + fileRetryInterval)
      return store.health.movedToMemory(cause, at: now)
    }
    return (store, StoreNotice(path: path, kind: kind ?? .inMemory(cause)))
  }

  /// Tries the file again when the store keeps its state in memory and a try is due (with the
  /// gate held, outside any transaction).
  func retryFileIfDue() {
    guard let fallback = memoryFallback, FileSystem.monotonicSeconds() >= fallback.nextTry
    else { return }
    memoryFallback?.nextTry = FileSystem.monotonicSeconds() + Self.fileRetryInterval
    moveToFile()
  }

  /// Moves the state in memory back to the file, if the file can be written now; otherwise
  /// nothing changes. Call with the gate held, outside any transaction.
  /// - Returns: Whether the store is on its file.
  @discardableResult
  func moveToFile() -> Bool {
    guard let fallback = memoryFallback else { return true }
    guard let file = try? Self.openFile(path, vfs: vfs) else { return false }
    if fallback.startedFromFile {
      do throws(StoreError) {
        try Self.copy(from: currentConnection, to: file)
        try file.run("PRAGMA journal_mode=WAL")
      } catch {
        file.close()
        return false
      }
    }
    replaceConnection(with: file)
    memoryFallback = nil
    note(
      health.movedToFile(at: FileSystem.wallSeconds(), keptChanges: fallback.startedFromFile))
    return true
  }

  /// Tries the file now (tests, and `locationd` at its periodic checkpoint), without waiting for
  /// the next try.
  /// - Returns: Whether the store is on its file.
  @discardableResult
  package func retryFile() -> Bool {
    exclusively { () -> Bool in
      guard currentConnection.transactionDepth == 0 else { return memoryFallback == nil }
      return moveToFile()
    }
  }

  /// Whether the store keeps its state in memory because its file cannot be written.
  package var isKeptInMemory: Bool { exclusively { memoryFallback != nil } }

  /// Reads the file into `memory`: read-only, or, where SQLite cannot set up a WAL file's shared
  /// memory (a read-only file system without the `-shm`), as an immutable file (its log, if one
  /// was left, is then not read: the copy is incomplete and is not written back).
  /// - Returns: Whether the copy is the file's whole contents.
  static func load(_ path: String, vfs: String?, into memory: Connection) -> Bool {
    let flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX
    if let file = try? Connection.open(path: path, flags: flags, vfs: vfs),
      (try? copy(from: file, to: memory)) != nil
    {
      return true
    }
    guard !FileSystem.exists(path + "-wal") else { return false }
    // A URI (RFC 3986 as SQLite reads it): `?`, `#` and `%` in the path are percent-encoded.
    let hex = Array("0123456789ABCDEF".utf8)
    var bytes = Array("file:".utf8)
    for byte in path.utf8 {
      switch byte {
      case UInt8(ascii: "?"), UInt8(ascii: "#"), UInt8(ascii: "%"):
        bytes += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 15)]]
      default:
        bytes.append(byte)
      }
    }
    guard
      let file = try? Connection.open(
        path: String(decoding: bytes, as: UTF8.self) + "?immutable=1",
        flags: flags | SQLITE_OPEN_URI, vfs: vfs)
    else { return false }
    return (try? copy(from: file, to: memory)) != nil
  }

  /// Copies a whole database over another (`sqlite3_backup_*`).
  static func copy(from source: Connection, to target: Connection) throws(StoreError) {
    guard let backup = sqlite3_backup_init(target.handle, "main", source.handle, "main") else {
      throw target.error(sqlite3_errcode(target.handle), call: "sqlite3_backup_init")
    }
    let stepped = sqlite3_backup_step(backup, -1)
    let finished = sqlite3_backup_finish(backup)
    guard stepped == SQLITE_DONE, finished == SQLiteResult.ok else {
      throw target.error(stepped == SQLITE_DONE ? finished : stepped, call: "sqlite3_backup_step")
    }
  }
}
