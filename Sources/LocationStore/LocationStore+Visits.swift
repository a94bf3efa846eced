extension LocationStore {
  /// Whether `app` monitors visits.
  /// - Parameter app: The app's identity.
  /// - Returns: True when visit monitoring is on for it.
  /// - Throws: `StoreError` if the store cannot be read.
  package func monitorsVisits(app: String) throws(StoreError) -> Bool {
    try locked("monitorsVisits") { (connection) throws(StoreError) in
      try connection.withStatement("SELECT 1 FROM visit_monitoring WHERE app = ?") {
        (statement) throws(StoreError) in
        try statement.bind(app, at: 1)
        return try statement.step()
      }
    }
  }

  /// Every app that monitors visits, in order.
  /// - Returns: The apps' identities.
  /// - Throws: `StoreError` if the store cannot be read.
  package func visitMonitoringApps() throws(StoreError) -> [String] {
    try locked("visitMonitoringApps") { (connection) throws(StoreError) in
      try connection.withStatement("SELECT app FROM visit_monitoring ORDER BY app") {
        (statement) throws(StoreError) in
        var apps: [String] = []
        while try statement.step() { apps.append(statement.text(at: 0)) }
        return apps
      }
    }
  }

  /// Turns visit monitoring on (keeping the first `since`) or off for `app`; committed on return.
  /// - Parameters:
  ///   - on: Whether the app monitors visits.
  ///   - app: The app's identity.
  ///   - since: Wall-clock seconds since 1970 when it started; must be finite.
  /// - Throws: `StoreError` `.invalidValue` for a non-finite time, or if the write fails.
  package func setVisitMonitoring(_ on: Bool, app: String, since: Double) throws(StoreError) {
    guard since.isFinite else {
      throw StoreError(
        code: .invalidValue, message: "visit monitoring time is not finite",
        operation: "setVisitMonitoring")
    }
    try writing("setVisitMonitoring") { (connection) throws(StoreError) in
      let sql =
        on
        ? "INSERT INTO visit_monitoring (app, since) VALUES (?1, ?2) ON CONFLICT (app) DO NOTHING"
        : "DELETE FROM visit_monitoring WHERE app = ?1"
      try connection.withStatement(sql) { (statement) throws(StoreError) in
        try statement.bind(app, at: 1)
        if on { try statement.bind(since, at: 2) }
        while try statement.step() {}
      }
    }
  }
}
