import LocationModel

extension LocationStore {
  private static let accessPointColumns =
    "bssid, weight, x, y, z, observations, first_seen, last_seen, mobile"

  /// Every learned Wi-Fi access point, by BSSID.
  /// - Returns: The records.
  /// - Throws: `StoreError` if the store cannot be read.
  package func accessPoints() throws(StoreError) -> [AccessPointRecord] {
    try locked("accessPoints") { (connection) throws(StoreError) in
      try connection.withStatement(
        "SELECT \(Self.accessPointColumns) FROM wifi_access_points ORDER BY bssid"
      ) { (statement) throws(StoreError) in
        var records: [AccessPointRecord] = []
        while try statement.step() {
          records.append(
            AccessPointRecord(
              bssid: UInt64(truncatingIfNeeded: statement.int64(at: 0)),
              weight: statement.double(at: 1), x: statement.double(at: 2),
              y: statement.double(at: 3), z: statement.double(at: 4),
              observations: Int(statement.int64(at: 5)), firstSeen: statement.double(at: 6),
              lastSeen: statement.double(at: 7), mobile: statement.int64(at: 8) != 0))
        }
        return records
      }
    }
  }

  /// How many access points are known, and how many of them are mobile.
  /// - Returns: The counts.
  /// - Throws: `StoreError` if the store cannot be read.
  package func accessPointCounts() throws(StoreError) -> (known: Int, mobile: Int) {
    try locked("accessPointCounts") { (connection) throws(StoreError) in
      try connection.withStatement(
        "SELECT count(*), coalesce(sum(mobile), 0) FROM wifi_access_points"
      ) { (statement) throws(StoreError) in
        guard try statement.step() else { return (0, 0) }
        return (Int(statement.int64(at: 0)), Int(statement.int64(at: 1)))
      }
    }
  }

  /// Saves access points in one transaction (all or none), each replacing its BSSID's record.
  /// - Parameter records: The records; every number must be finite.
  /// - Throws: `StoreError` `.invalidValue` for a non-finite number, or if the write fails.
  package func upsertAccessPoints(_ records: [AccessPointRecord]) throws(StoreError) {
    for record in records {
      let numbers = [
        record.weight, record.x, record.y, record.z, record.firstSeen, record.lastSeen,
      ]
      guard numbers.allSatisfy(\.isFinite), record.weight >= 0 else {
        throw StoreError(
          code: .invalidValue, message: "an access point record has a non-finite number",
          operation: "upsertAccessPoints")
      }
    }
    guard !records.isEmpty else { return }
    try writing("upsertAccessPoints") { (connection) throws(StoreError) in
      try connection.withStatement(
        """
        INSERT OR REPLACE INTO wifi_access_points (\(Self.accessPointColumns))
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
        """
      ) { (statement) throws(StoreError) in
        for record in records {
          try statement.bind(Int64(bitPattern: record.bssid & 0xFFFF_FFFF_FFFF), at: 1)
          try statement.bind(record.weight, at: 2)
          try statement.bind(record.x, at: 3)
          try statement.bind(record.y, at: 4)
          try statement.bind(record.z, at: 5)
          try statement.bind(Int64(record.observations), at: 6)
          try statement.bind(record.firstSeen, at: 7)
          try statement.bind(record.lastSeen, at: 8)
          try statement.bind(Int64(record.mobile ? 1 : 0), at: 9)
          while try statement.step() {}
          statement.reset()
        }
      }
    }
  }

  /// Removes the access points of these BSSIDs (expired ones) in one transaction.
  /// - Parameter bssids: The BSSIDs.
  /// - Throws: `StoreError` if the write fails.
  package func deleteAccessPoints(_ bssids: [UInt64]) throws(StoreError) {
    guard !bssids.isEmpty else { return }
    try writing("deleteAccessPoints") { (connection) throws(StoreError) in
      try connection.withStatement("DELETE FROM wifi_access_points WHERE bssid = ?") {
        (statement) throws(StoreError) in
        for bssid in bssids {
          try statement.bind(Int64(bitPattern: bssid & 0xFFFF_FFFF_FFFF), at: 1)
          while try statement.step() {}
          statement.reset()
        }
      }
    }
  }

  /// Forgets every learned access point (`locationctl wifi forget`); committed on return.
  /// - Returns: How many were forgotten.
  /// - Throws: `StoreError` if the write fails.
  @discardableResult
  package func forgetAccessPoints() throws(StoreError) -> Int {
    let count = try accessPointCounts().known
    try writing("forgetAccessPoints") { (connection) throws(StoreError) in
      try connection.execute("DELETE FROM wifi_access_points")
    }
    return count
  }
}
