import LocationModel

extension LocationStore {
  /// The stored authorization of `app`, or nil if none was stored.
  /// - Parameter app: The app's identity.
  /// - Returns: The record, or nil.
  /// - Throws: `StoreError` if the store cannot be read.
  package func authorization(app: String) throws(StoreError) -> StoredAuthorization? {
    try locked("authorization") { (connection) throws(StoreError) in
      try connection.withStatement(
        "SELECT status, accuracy, updated, once FROM authorization WHERE app = ?"
      ) { (statement) throws(StoreError) -> StoredAuthorization? in
        try statement.bind(app, at: 1)
        guard try statement.step() else { return nil }
        // A raw value this version does not know (a row written by hand) counts as no decision;
        // an unknown accuracy as reduced, the safe side.
        guard
          let status = AuthorizationStatus(
            rawValue: Int32(truncatingIfNeeded: statement.int64(at: 0)))
        else { return nil }
        return StoredAuthorization(
          status: status,
          accuracy: AccuracyAuthorization(rawValue: Int(truncatingIfNeeded: statement.int64(at: 1)))
            ?? .reducedAccuracy,
          updated: statement.double(at: 2), once: statement.int64(at: 3) != 0)
      }
    }
  }

  /// Stores `value` as the authorization of `app`, replacing any earlier one; committed on return.
  /// - Parameters:
  ///   - value: The record; `updated` must be finite.
  ///   - app: The app's identity.
  /// - Throws: `StoreError` `.invalidValue` for a non-finite time, or if the write fails.
  package func setAuthorization(_ value: StoredAuthorization, app: String) throws(StoreError) {
    guard value.updated.isFinite else {
      throw StoreError(
        code: .invalidValue, message: "authorization time is not finite",
        operation: "setAuthorization")
    }
    try writing("setAuthorization") { (connection) throws(StoreError) in
      try connection.withStatement(
        """
        INSERT INTO authorization (app, status, accuracy, updated, once) VALUES (?, ?, ?, ?, ?)
        ON CONFLICT (app) DO UPDATE SET
          status = excluded.status, accuracy = excluded.accuracy, updated = excluded.updated,
          once = excluded.once
        """
      ) { (statement) throws(StoreError) in
        try statement.bind(app, at: 1)
        try statement.bind(Int64(value.status.rawValue), at: 2)
        try statement.bind(Int64(value.accuracy.rawValue), at: 3)
        try statement.bind(value.updated, at: 4)
        try statement.bind(Int64(value.once ? 1 : 0), at: 5)
        while try statement.step() {}
      }
    }
  }

  /// Removes the authorization of `app` (it becomes "not determined"); no error if there is none.
  /// - Parameter app: The app's identity.
  /// - Throws: `StoreError` if the write fails.
  package func removeAuthorization(app: String) throws(StoreError) {
    try writing("removeAuthorization") { (connection) throws(StoreError) in
      try connection.withStatement("DELETE FROM authorization WHERE app = ?") {
        (statement) throws(StoreError) in
        try statement.bind(app, at: 1)
        while try statement.step() {}
      }
    }
  }

  /// The apps that have a stored authorization, sorted by their identity (byte order).
  /// - Returns: The apps.
  /// - Throws: `StoreError` if the store cannot be read.
  package func apps() throws(StoreError) -> [String] {
    try locked("apps") { (connection) throws(StoreError) in
      try connection.withStatement("SELECT app FROM authorization ORDER BY app") {
        (statement) throws(StoreError) in
        var apps: [String] = []
        while try statement.step() { apps.append(statement.text(at: 0)) }
        return apps
      }
    }
  }

  /// The apps whose stored decision is an "allow once".
  /// - Returns: The apps, sorted by their identity (byte order).
  /// - Throws: `StoreError` if the store cannot be read.
  package func onceApps() throws(StoreError) -> [String] {
    try locked("onceApps") { (connection) throws(StoreError) in
      try connection.withStatement("SELECT app FROM authorization WHERE once != 0 ORDER BY app") {
        (statement) throws(StoreError) in
        var apps: [String] = []
        while try statement.step() { apps.append(statement.text(at: 0)) }
        return apps
      }
    }
  }
}
