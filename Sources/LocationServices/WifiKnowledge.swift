import Foundation
import LocationEngine
import LocationModel
import LocationSources
import LocationStore
import Synchronization

/// What this machine knows of the Wi-Fi access points around it, learned from its own fixes
/// (README, "Wi-Fi"): one per process and store, shared by every hub (embedded mode) or by the
/// source pool (`locationd`), because the access points are the machine's, not an app's.
///
/// The rules are the engine's pure types: ``WifiLearner`` pairs a scan with a GNSS-class fix and
/// adds observations, ``WifiLocator`` turns a scan into a position, ``AccessPointTable`` holds the
/// records. This object only holds them behind a lock, loads them from the store at first use and
/// commits what changed. Nothing leaves the machine.
package final class WifiKnowledge: Sendable {
  struct State {
    var table: AccessPointTable?
    var learner: WifiLearner
    var scans = 0
  }

  /// Whether scans taken with a good fix are learned from (`wifi-learning`,
  /// `CORELOCATION_WIFI_LEARNING`); positioning from what is known works either way.
  package let learning: Bool
  /// The optional Ichnaea-compatible service asked when a scan cannot be located from what is
  /// known (off unless configured: `wifi-fallback-url`, `CORELOCATION_WIFI_FALLBACK_URL`).
  package let fallback: IchnaeaClient?
  private let store: LocationStore?
  private let state: Mutex<State>

  /// Knowledge kept in `store` (nil: in memory only), with an optional fallback service.
  package init(store: LocationStore?, learning: Bool = true, fallback: IchnaeaClient? = nil) {
    self.store = store
    self.learning = learning
    self.fallback = fallback
    state = Mutex(State(learner: WifiLearner()))
  }

  /// Notes a fix from any source: a GNSS-class one is what scans are learned against, the scan
  /// made just before it included (``WifiLearner/scanBeforeLastFix``). ``learn(_:)`` and
  /// ``store(_:)`` in one call.
  package func note(_ fix: Fix) {
    store(learn(fix))
  }

  /// What a fix taught, in memory, not yet written to the store (``store(_:)``).
  package struct Learned: Sendable {
    fileprivate let changed: [AccessPointRecord]
    /// Nothing to write.
    package static let nothing = Learned(changed: [])
  }

  /// ``note(_:)`` without the store's write: the fix is noted and a scan waiting for it learned in
  /// memory (so that ``awaitsScan(at:)`` and positioning see it at once); the caller writes what
  /// changed with ``store(_:)`` once the fix has reached its clients. A commit waits for the disk
  /// (`synchronous=FULL`: an `fsync`, milliseconds on an SD card), which must not stand between a
  /// receiver's fix and every app (`locbench latency`, issue 19).
  package func learn(_ fix: Fix) -> Learned {
    guard learning else { return .nothing }
    return state.withLock { state -> Learned in
      state.learner.note(fix)
      guard let scan = state.learner.scanBeforeLastFix else { return .nothing }
      return Learned(changed: state.withTable(load) { $1.learn(scan, into: &$0) })
    }
  }

  /// Writes what ``learn(_:)`` learned to the store.
  package func store(_ learned: Learned) {
    commit(learned.changed, [])
  }

  /// ``note(_:)`` when it cannot touch the store: no scan waits for a fix (the usual case, between
  /// scans), so noting the fix teaches nothing yet.
  /// - Returns: false, having done nothing, when a scan waits: the caller notes the fix where the
  ///   store may be used (an app's thread may not wait for it).
  package func noteWithoutStore(_ fix: Fix) -> Bool {
    guard learning else { return true }
    return state.withLock { state in
      guard !state.learner.hasPendingScan else { return false }
      state.learner.note(fix)
      return true
    }
  }

  /// Whether a scan made now (`time`, seconds since 1970) would be learned from: learning is on,
  /// a good fix is that recent and no scan has met it yet. While this holds, a hub about to stop
  /// its receiver keeps it on for the scanner's next scan (README, "Wi-Fi").
  package func awaitsScan(at time: Double) -> Bool {
    guard learning else { return false }
    return state.withLock { $0.learner.awaitsScan(at: time) }
  }

  /// Learns from a scan (when learning is on and a good fix coincides), then locates the device
  /// from it. Returns the position, or nil when the known access points heard do not suffice.
  package func scan(_ scan: WifiScan) -> Fix? {
    let (fix, changed, expired) = learnAndLocate(scan)
    commit(changed, expired)
    return fix
  }

  /// ``scan(_:)`` in memory: the position, and what to write to the store.
  private func learnAndLocate(_ scan: WifiScan) -> (Fix?, [AccessPointRecord], [UInt64]) {
    state.withLock { state in
      state.scans += 1
      let learning = learning
      let expires = state.scans % 100 == 1
      return state.withTable(load) { table, learner in
        let changed = learning ? learner.learn(scan, into: &table) : []
        let expired = expires ? learner.expire(&table, now: scan.time) : []
        return (WifiLocator.locate(scan, in: table), changed, expired)
      }
    }
  }

  /// What a scanner's scan comes to, for a hub or `locationd`'s pool: learned from, then located
  /// (`emit` hears the position at once, and what the scan taught is written to the store after
  /// it); or not located: an outage (`fail` hears ``notLocated(_:)``, unless the source is
  /// `failing` already, so it is reported once) and the fallback service asked (`emit` hears its
  /// answer later, as the scanner's own fix).
  package func receive(
    _ scan: WifiScan, failing: Bool, emit: @escaping @Sendable (Fix) -> Void,
    fail: (SourceError) -> Void
  ) {
    let (fix, changed, expired) = learnAndLocate(scan)
    if let fix {
      emit(fix)
      commit(changed, expired)
      return
    }
    commit(changed, expired)
    if !failing { fail(Self.notLocated(scan)) }
    askFallback(scan, completion: emit)
  }

  /// Asks the fallback service, if one is configured, for a scan that could not be located; the
  /// completion hears the position (on the client's queue), or nothing when there is no service,
  /// it is rate-limited, or it does not know the access points.
  package func askFallback(_ scan: WifiScan, completion: @escaping @Sendable (Fix) -> Void) {
    guard let fallback else { return }
    fallback.locate(scan) { result in
      switch result {
      case .success(let fix): completion(fix)
      case .failure(let error):
        if error != .rateLimited, error != .tooFewAccessPoints {
          HubLog.write(.info, "wifi", "fallback service: \(error)")
        }
      }
    }
  }

  /// The outage a Wi-Fi source reports while its scans cannot be located.
  package static func notLocated(_ scan: WifiScan) -> SourceError {
    SourceError(
      .notLocated,
      "\(scan.source.isEmpty ? "wifi" : scan.source): the \(scan.readings.count) access points "
        + "heard are not known well enough yet (they are learned from good fixes)",
      isPermanent: false)
  }

  /// What `locationctl wifi` shows: access points known, mobile ones, the newest learned.
  package func status() -> (known: Int, mobile: Int, lastLearned: Double?) {
    state.withLock { state in
      let table = state.table ?? load()
      state.table = table
      let records = table.records
      return (
        records.count, records.reduce(0) { $0 + ($1.mobile ? 1 : 0) },
        records.map(\.lastSeen).max()
      )
    }
  }

  /// Forgets every access point, in memory and in the store (`locationctl wifi forget`).
  /// - Returns: How many were forgotten.
  /// - Throws: `StoreError` when the store cannot commit (nothing is forgotten then).
  @discardableResult
  package func forget() throws(StoreError) -> Int {
    try state.withLock { (state) throws(StoreError) -> Int in
      // The store counts what it deletes; the table is read only when there is no store.
      let known = try store?.forgetAccessPoints() ?? (state.table?.count ?? 0)
      state.table = AccessPointTable(records: [])
      return known
    }
  }

  /// Adds imported records of access points not known yet (what was learned here is kept), in
  /// memory and in the store (all or none).
  /// - Returns: How many were added.
  /// - Throws: `StoreError` when the store cannot commit (nothing is added then).
  @discardableResult
  package func importRecords(_ records: [AccessPointRecord]) throws(StoreError) -> Int {
    try state.withLock { (state) throws(StoreError) -> Int in
      if state.table == nil { state.table = load() }
      let added = records.filter { state.table?[bssid: $0.bssid] == nil }
      try store?.upsertAccessPoints(added)
      state.withTable(load) { table, _ in for record in added { table.upsert(record) } }
      return added.count
    }
  }

  /// The table in the store (empty when there is none or it cannot be read: learning starts over
  /// in memory, and what is learned is written when the store takes writes again).
  private func load() -> AccessPointTable {
    AccessPointTable(records: (try? store?.accessPoints()) ?? [])
  }

  private func commit(_ changed: [AccessPointRecord], _ expired: [UInt64]) {
    guard let store, !changed.isEmpty || !expired.isEmpty else { return }
    do {
      try store.upsertAccessPoints(changed)
      try store.deleteAccessPoints(expired)
    } catch {
      HubLog.write(.info, "wifi", "learned access points not stored: \(error.message)")
    }
  }
}

extension WifiKnowledge.State {
  /// Runs `body` on the table (loaded by `load` at first use) and the learner. The table is taken
  /// out of the state while `body` changes it, so that it is changed in place rather than copied.
  mutating func withTable<Result>(
    _ load: () -> AccessPointTable,
    _ body: (inout AccessPointTable, inout WifiLearner) -> Result
  ) -> Result {
    var table = self.table ?? load()
    self.table = nil
    defer { self.table = table }
    return body(&table, &learner)
  }
}
