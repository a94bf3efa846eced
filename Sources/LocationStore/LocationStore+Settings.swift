extension LocationStore {
  /// The value of setting `key` (such as `"servicesEnabled"`), or nil if it is not set.
  /// - Parameter key: The setting's name.
  /// - Returns: The value, or nil.
  /// - Throws: `StoreError` if the store cannot be read.
  package func setting(_ key: String) throws(StoreError) -> String? {
    try locked("setting") { (connection) throws(StoreError) in
      try connection.withStatement("SELECT value FROM settings WHERE key = ?") {
        (statement) throws(StoreError) in
        try statement.bind(key, at: 1)
        return try statement.step() ? statement.text(at: 0) : nil
      }
    }
  }

  /// Sets setting `key` to `value`, or removes it when `value` is nil; committed on return.
  /// - Parameters:
  ///   - key: The setting's name.
  ///   - value: The new value, or nil to remove the setting.
  /// - Throws: `StoreError` if the write fails.
  package func setSetting(_ key: String, _ value: String?) throws(StoreError) {
    try writing("setSetting") { (connection) throws(StoreError) in
      if let value {
        try connection.withStatement(
          """
          INSERT INTO settings (key, value) VALUES (?, ?)
          ON CONFLICT (key) DO UPDATE SET value = excluded.value
          """
        ) { (statement) throws(StoreError) in
          try statement.bind(key, at: 1)
          try statement.bind(value, at: 2)
          while try statement.step() {}
        }
      } else {
        try connection.withStatement("DELETE FROM settings WHERE key = ?") {
          (statement) throws(StoreError) in
          try statement.bind(key, at: 1)
          while try statement.step() {}
        }
      }
    }
  }
}
