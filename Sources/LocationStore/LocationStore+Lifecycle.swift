import CSQLite
import Synchronization

extension LocationStore {
  /// Copies the write-ahead log into the database file and empties the log (`PRAGMA
  /// wal_checkpoint(TRUNCATE)`), so that the file alone holds every committed transaction (a
  /// backup of `store.sqlite` without its `-wal` misses nothing). `locationd` calls it
  /// periodically; closing does the same.
  /// - Returns: How many WAL frames were in the log (-1 when the store is not in WAL mode).
  /// - Throws: `StoreError` (`.busy` when a reader of another process holds the log longer than
  ///   the busy timeout).
  @discardableResult
  package func checkpoint() throws(StoreError) -> Int {
    try locked("checkpoint") { (connection) throws(StoreError) in
      // A passive pass copies what it can and counts the frames (a truncating pass reports the
      // log it leaves, empty); the truncating pass then empties the file.
      let frames = try connection.checkpoint(truncate: false).log
      try connection.checkpoint(truncate: true)
      return Int(frames)
    }
  }

  /// Closes the connection: the write-ahead log is checkpointed into the database file and, when
  /// this was the last connection to it, removed. Waits for a call in progress on another thread;
  /// every later call throws `.closed`. Safe to call more than once.
  ///
  /// Programs close their stores when they end: `locationd` when it stops (`SIGTERM`, `SIGINT`),
  /// embedded mode at `exit` (`closeAll()`), `whereami` on `SIGINT` and `SIGTERM` too.
  package func close() {
    exclusively {
      let connection = currentConnection
      guard connection.isOpen else { return }
      if connection.transactionDepth == 0 {
        // A failure (a full disk) leaves the log in place; SQLite replays it at the next open.
        _ = try? connection.checkpoint(truncate: true)
      }
      connection.close()
    }
    OpenStores.remove(self)
  }

  /// Closes the connection without copying the write-ahead log into the file: a damaged store is
  /// moved aside with its log as they were found.
  func closeAsFound() {
    exclusively { currentConnection.close(checkpoint: false) }
    OpenStores.remove(self)
  }

  /// Whether `close()` has run.
  package var isClosed: Bool { exclusively { !connectionIsOpen } }

  /// Closes every store of the process that is still open (`close()` on each): for an `atexit`
  /// handler, so that a program that ends without closing its stores leaves no data in a
  /// write-ahead log.
  package static func closeAll() {
    for store in OpenStores.all() { store.close() }
  }
}

/// The file stores of the process that are open, weakly held, for `LocationStore.closeAll()`.
enum OpenStores {
  private final class Weak: @unchecked Sendable {
    // @unchecked Sendable: `store` is only read and written under `stores`' lock.
    weak var store: LocationStore?
    init(_ store: LocationStore) { self.store = store }
  }

  private static let stores = Mutex<[ObjectIdentifier: Weak]>([:])

  static func add(_ store: LocationStore) {
    stores.withLock { stores in
      stores = stores.filter { $0.value.store != nil }
      stores[ObjectIdentifier(store)] = Weak(store)
    }
  }

  static func remove(_ store: LocationStore) {
    _ = stores.withLock { $0.removeValue(forKey: ObjectIdentifier(store)) }
  }

  static func all() -> [LocationStore] {
    stores.withLock { $0.values.compactMap(\.store) }
  }
}
