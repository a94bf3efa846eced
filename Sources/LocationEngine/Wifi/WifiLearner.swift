import LocationModel

/// Learns where access points are from the device's own GNSS fixes: each Wi-Fi scan made while a
/// good fix is at hand adds, to every access point it heard, one observation at the fix's place.
/// A value type: pure, no clock of its own (time is the fixes' and the scans').
///
/// The rule (ours):
/// - **Fixes.** ``note(_:)`` keeps the last GNSS-class fix: quality `autonomous`, `differential`,
///   `precise`, `rtkFixed` or `rtkFloat` (a `network` fix may come from Wi-Fi itself, and learning
///   from it would feed the estimate back into itself; `estimated`, `manual` and `simulated` are
///   not measurements of where the radio is), with a valid coordinate and `horizontalAccuracy` in
///   0...``Configuration/maximumFixAccuracy`` (20 m). Other fixes are ignored and do not replace it.
/// - **Coincidence.** A scan is learned from when `|scan.time − fix.time|` ≤
///   ``Configuration/coincidenceWindow`` (2 s): at town speeds the device moves at most a few
///   tens of metres in that time, comparable to the fix's own accuracy. Either may come first: a
///   scan that meets no fix is kept (the last one only) and learned when a fix within the window
///   follows (``scanBeforeLastFix``), so that a receiver's first fix of a burst meets the scan made
///   while it searched. Each scan is learned at most once.
/// - **Opt-out.** A reading whose SSID ends in `_nomap` is never recorded, not even its BSSID.
/// - **Estimator: weighted centroid** (J. Blumenthal et al., "Weighted centroid localization in
///   ZigBee-based sensor networks", IEEE WISP 2007), turned around: the access point's estimate
///   is the centroid of the fixes it was heard at, each weighted `1 / d^g` with `d` from the
///   log-distance model of the reading's signal (``WifiSignalModel``: `P₀` −40 dBm, `n` 3,
///   `g` 2). Loud readings are made near the access point, so they pull the estimate towards it;
///   `g` = 2 rather than the linear power's 3 keeps 4 dB of shadowing from letting one reading
///   outweigh the rest. The centroid is what `AccessPointRecord` keeps (sums of weighted unit
///   vectors), so each observation is one addition and the learned table is as small as its
///   records. It places the access point where it is heard from (the street in front of a house
///   rather than the house): exactly what locating a device that hears it needs.
/// - **Mobile access points.** An observation farther than ``Configuration/mobileDistance`` (1 km,
///   several times any Wi-Fi range) from an estimate of at least
///   ``Configuration/mobileMinimumObservations`` (2) observations marks the record `mobile` (a
///   phone's hotspot, a bus's Wi-Fi): it is never used for positioning, and it stays mobile (its
///   `lastSeen` is still updated, so that it does not expire and come back as new while heard).
/// - **Moved access points.** A record that is not mobile and was last heard more than
///   ``Configuration/relocationAge`` (30 days) before a far observation is taken to have moved
///   house with its owner: it is reset to that one observation instead of being marked mobile.
/// - **Expiry.** ``expire(_:now:)`` drops records not heard for ``Configuration/expiry``
///   (365 days).
package struct WifiLearner: Sendable {
  /// The learner's constants.
  package struct Configuration: Sendable, Equatable {
    /// The largest `|scan.time − fix.time|`, seconds, at which a scan is placed at a fix.
    package var coincidenceWindow: Double = 2
    /// The worst `horizontalAccuracy`, metres, of a fix learned from.
    package var maximumFixAccuracy: Double = 20
    /// An observation this far (metres) from an established estimate marks it mobile.
    package var mobileDistance: Double = 1_000
    /// How many observations an estimate needs before a far one marks it mobile.
    package var mobileMinimumObservations = 2
    /// A record not heard for this long (seconds) that is heard far away has moved: it is reset.
    package var relocationAge: Double = 30 * 86_400
    /// Records not heard for this long (seconds) are dropped by ``WifiLearner/expire(_:now:)``.
    package var expiry: Double = 365 * 86_400
    /// The weights of the readings.
    package var signal = WifiSignalModel()

    /// The default constants.
    package init() {}
  }

  /// The learner's constants.
  package var configuration: Configuration
  /// The last fix good enough to learn from, if any.
  package private(set) var lastFix: Fix?
  /// The last scan that met no fix, kept for a fix that follows within the window.
  private var pendingScan: WifiScan?
  /// Whether a scan that met no fix is kept: noting a fix may then teach (``scanBeforeLastFix``).
  package var hasPendingScan: Bool { pendingScan != nil }
  /// The time of the last scan learned from.
  package private(set) var lastLearnedScan: Double?

  /// A learner with no fix yet.
  package init(configuration: Configuration = Configuration()) {
    self.configuration = configuration
  }

  /// Whether a fix is good enough to learn from: GNSS-class quality, a valid coordinate, an
  /// accuracy within ``Configuration/maximumFixAccuracy``.
  package func isLearnable(_ fix: Fix) -> Bool {
    let gnss: Bool
    switch fix.quality {
    case .autonomous, .differential, .precise, .rtkFixed, .rtkFloat: gnss = true
    case .none, .estimated, .manual, .simulated, .network: gnss = false
    }
    return gnss && fix.hasValidCoordinate && fix.time.isFinite
      && fix.horizontalAccuracy <= configuration.maximumFixAccuracy
  }

  /// Keeps `fix` as the place of the next scans when it is good enough to learn from
  /// (``isLearnable(_:)``); ignores it otherwise.
  package mutating func note(_ fix: Fix) {
    guard isLearnable(fix) else { return }
    if let lastFix, lastFix.time > fix.time { return }
    lastFix = fix
  }

  /// The scan kept for the last good fix: it met no fix when it was made, within the window
  /// before that fix. Learn it with ``learn(_:into:)`` after ``note(_:)``.
  package var scanBeforeLastFix: WifiScan? {
    guard let pendingScan, let lastFix,
      abs(pendingScan.time - lastFix.time) <= configuration.coincidenceWindow
    else { return nil }
    return pendingScan
  }

  /// Whether a scan made at `time` would teach something: the last good fix is within the window
  /// of `time` and no scan has been learned at it yet. (A hub keeps its receiver on for one more
  /// scan while this holds.)
  package func awaitsScan(at time: Double) -> Bool {
    guard let lastFix, abs(time - lastFix.time) <= configuration.coincidenceWindow else {
      return false
    }
    guard let learned = lastLearnedScan else { return true }
    return learned < lastFix.time - configuration.coincidenceWindow
  }

  /// Learns from a scan: when it coincides with the last good fix, every reading that does not
  /// opt out becomes an observation at the fix's place. Returns the records that changed (to
  /// persist), in the order of the readings; empty when the scan taught nothing (a scan that
  /// met no fix is kept for the next one, ``scanBeforeLastFix``).
  package mutating func learn(_ scan: WifiScan, into table: inout AccessPointTable)
    -> [AccessPointRecord]
  {
    guard scan.time.isFinite else { return [] }
    guard let fix = lastFix, abs(scan.time - fix.time) <= configuration.coincidenceWindow else {
      pendingScan = scan
      return []
    }
    pendingScan = nil
    lastLearnedScan = max(lastLearnedScan ?? scan.time, scan.time)
    var changed: [AccessPointRecord] = []
    var seen = Set<UInt64>()
    for reading in scan.readings where !reading.optsOut && reading.signal.isFinite {
      guard seen.insert(reading.bssid).inserted else { continue }
      let weight = configuration.signal.weight(signal: reading.signal)
      guard weight > 0 else { continue }
      let record = observe(
        table[bssid: reading.bssid], bssid: reading.bssid, at: fix, weight: weight,
        time: scan.time)
      table.upsert(record)
      changed.append(record)
    }
    return changed
  }

  /// The record of `bssid` after one observation at `fix` weighted `weight` at `time`.
  func observe(
    _ existing: AccessPointRecord?, bssid: UInt64, at fix: Fix, weight: Double, time: Double
  ) -> AccessPointRecord {
    let fresh = AccessPointRecord(
      bssid: bssid, latitude: fix.latitude, longitude: fix.longitude, weight: weight, time: time)
    guard var record = existing, record.weight > 0 else { return fresh }
    if record.mobile {
      record.lastSeen = max(record.lastSeen, time)
      return record
    }
    let far =
      record.observations >= configuration.mobileMinimumObservations
      && record.distance(latitude: fix.latitude, longitude: fix.longitude)
        > configuration.mobileDistance
    guard far else {
      return record.adding(
        latitude: fix.latitude, longitude: fix.longitude, weight: weight, time: time)
    }
    if time - record.lastSeen > configuration.relocationAge { return fresh }
    record.mobile = true
    record.lastSeen = max(record.lastSeen, time)
    return record
  }

  /// Drops from `table` the records not heard for ``Configuration/expiry`` before `now` (seconds
  /// since 1970); returns their BSSIDs, in increasing order (to delete from the store).
  package func expire(_ table: inout AccessPointTable, now: Double) -> [UInt64] {
    table.expire(now: now, notHeardFor: configuration.expiry)
  }
}
