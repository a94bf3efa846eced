#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// What `LocationStore.open(path:vfs:)` did besides opening.
package struct StoreOpening: Sendable {
  /// The open store.
  package var store: LocationStore
  /// What the user is told: a damaged file moved aside, the store kept in memory.
  package var notices: [StoreNotice]
  /// Whether SQLite's integrity check ran (a small store, or after an unclean shutdown).
  package var checkedIntegrity: Bool
  /// Whether the last shutdown was not clean (a log was left beside the file).
  package var uncleanShutdown = false
}

extension LocationStore {
  /// Opens the store at `path` as a program does, so that persistence resumes after damage:
  ///
  /// - A file that is damaged (`.corrupt`) or is not an SQLite database (`.notADatabase`, such as
  ///   a header overwritten) is moved aside to `PATH.corrupt-YYYYMMDDTHHMMSSZ` with its `-wal`,
  ///   `-journal` and `-shm` files (kept, never deleted: `sqlite3 FILE .recover` may salvage it),
  ///   and a new store is created at `path`.
  /// - When the last shutdown was not clean (a `-wal` or `-journal` file was there before
  ///   opening: SQLite removes the log when the last connection closes), SQLite's
  ///   `PRAGMA quick_check` reads the whole file first; damage it finds is moved aside the same
  ///   way. (Another process that has the store open leaves its log too: the check then runs
  ///   needlessly, at the cost `locbench store` measures.) A store of at most `alwaysCheckUpTo`
  ///   bytes (``alwaysCheckedSize``, 16 MiB: some 200,000 regions, checked in well under 0.1 s)
  ///   is checked at every start, so that a damaged page of a cleanly closed store is found and
  ///   moved aside too; in a larger one such damage is reported by the reads that reach it.
  /// - A file that cannot be written (a read-only file system, no permission) is read into a
  ///   copy in memory, and tried again at most once a minute (`keepingInMemory`); the notice
  ///   says so.
  /// - Anything else (a directory at the path, another program's database, a store of a newer
  ///   version, a directory that cannot be created) is thrown as by `init(path:vfs:)`, and the
  ///   file is left as it is.
  ///
  /// - Parameters:
  ///   - path: The database file; `":memory:"` for a store in memory.
  ///   - vfs: The SQLite VFS (tests); nil for the default.
  /// - Returns: The store, what happened, and whether the integrity check ran.
  /// - Throws: `StoreError` as `init(path:vfs:)` does, except for damage.
  package static func open(
    path: String, vfs: String? = nil, alwaysCheckUpTo: Int = alwaysCheckedSize
  ) throws(StoreError) -> StoreOpening {
    guard path != memoryPath else {
      return StoreOpening(
        store: try LocationStore(path: path), notices: [], checkedIntegrity: false)
    }
    let unclean =
      FileSystem.exists(path)
      && (FileSystem.exists(path + "-wal") || FileSystem.exists(path + "-journal"))
    var notices: [StoreNotice] = []
    let store: LocationStore
    do {
      store = try LocationStore(path: path, vfs: vfs)
    } catch {
      if error.code == .readOnly {
        let (store, notice) = try keepingInMemory(path, vfs: vfs, cause: error)
        return StoreOpening(store: store, notices: [notice], checkedIntegrity: false)
      }
      guard error.code == .corrupt || error.code == .notADatabase else { throw error }
      notices.append(try moveAside(path, cause: error))
      return StoreOpening(
        store: try LocationStore(path: path, vfs: vfs), notices: notices, checkedIntegrity: false)
    }
    let small = FileSystem.size(path).map { $0 <= alwaysCheckUpTo } ?? false
    guard unclean || small else {
      return StoreOpening(store: store, notices: [], checkedIntegrity: false)
    }
    do {
      try store.checkIntegrity()
    } catch {
      guard error.code == .corrupt || error.code == .notADatabase else { throw error }
      store.closeAsFound()
      notices.append(try moveAside(path, cause: error))
      return StoreOpening(
        store: try LocationStore(path: path, vfs: vfs), notices: notices, checkedIntegrity: true,
        uncleanShutdown: unclean)
    }
    return StoreOpening(
      store: store, notices: [], checkedIntegrity: true, uncleanShutdown: unclean)
  }

  /// Stores up to this many bytes are checked at every start (16 MiB).
  package static let alwaysCheckedSize = 16 << 20

  /// Renames a damaged database and its companion files to `PATH.corrupt-DATE` (a suffix `-2`,
  /// `-3`, ... when that name is taken).
  /// - Returns: The notice naming where it went.
  /// - Throws: `.cannotOpen` when it cannot be renamed (nothing is deleted in any case).
  static func moveAside(_ path: String, cause: StoreError) throws(StoreError) -> StoreNotice {
    let stamp = FileSystem.utcStamp(FileSystem.wallSeconds())
    var target = "\(path).corrupt-\(stamp)"
    var number = 2
    while FileSystem.exists(target) {
      target = "\(path).corrupt-\(stamp)-\(number)"
      number += 1
    }
    // The log first: a new store at `path` must never replay the damaged file's log.
    for suffix in ["-wal", "-journal", "-shm", ""] where FileSystem.exists(path + suffix) {
      if rename(path + suffix, target + suffix) != 0 {
        let error = errno
        throw StoreError(
          code: .cannotOpen,
          message: "\(path) is damaged (\(cause.message)) and cannot be moved aside to \(target) "
            + "(\(systemErrorDescription(error)))", operation: "open")
      }
    }
    return StoreNotice(path: path, kind: .movedAside(movedTo: target, cause: cause))
  }
}
