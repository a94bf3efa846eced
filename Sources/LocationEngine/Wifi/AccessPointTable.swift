import LocationModel

/// The access points the device has learned, by BSSID: what `WifiLearner` fills and `WifiLocator`
/// reads. A value type over a hash table: a lookup is one hash of a 48-bit BSSID, so the 40
/// readings of a scan are found in microseconds in a table of a million access points (about
/// 100 MB at that size; `locbench wifi` measures it).
package struct AccessPointTable: Sendable, Equatable {
  /// The records by BSSID.
  private var byBSSID: [UInt64: AccessPointRecord]

  /// An empty table.
  package init() { byBSSID = [:] }

  /// A table of `records` (as persisted); of two records with the same BSSID the later wins.
  package init(records: some Sequence<AccessPointRecord>) {
    byBSSID = [:]
    for record in records { byBSSID[record.bssid] = record }
  }

  /// How many access points the table holds.
  package var count: Int { byBSSID.count }

  /// Every record, in no particular order (for persistence).
  package var records: some Collection<AccessPointRecord> { byBSSID.values }

  /// The record of a BSSID, or nil when it was never learned.
  package subscript(bssid bssid: UInt64) -> AccessPointRecord? { byBSSID[bssid] }

  /// Stores `record`, replacing the one with its BSSID if any.
  package mutating func upsert(_ record: AccessPointRecord) { byBSSID[record.bssid] = record }

  /// Removes the record of a BSSID; returns it, or nil when there was none.
  @discardableResult
  package mutating func remove(_ bssid: UInt64) -> AccessPointRecord? {
    byBSSID.removeValue(forKey: bssid)
  }

  /// Removes every record last heard before `now − notHeardFor` (seconds since 1970, seconds);
  /// returns their BSSIDs, in increasing order.
  package mutating func expire(now: Double, notHeardFor: Double) -> [UInt64] {
    let limit = now - notHeardFor
    let old = byBSSID.values.filter { $0.lastSeen < limit }.map(\.bssid).sorted()
    for bssid in old { byBSSID.removeValue(forKey: bssid) }
    return old
  }
}
