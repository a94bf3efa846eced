// Replaced by the store (LocationStore.swift).
import CSQLite
import Geodesy

/// SQLite persistence.
public enum LocationStoreVersion {
  /// The SQLite library version the store runs on.
  public static var sqlite: String { String(cString: sqlite3_libversion()) }
}
