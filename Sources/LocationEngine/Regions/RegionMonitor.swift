import Geodesy
import LocationModel

/// Monitors many circular regions against a stream of fixes: the engine half of Apple's region
/// monitoring (`startMonitoring(for:)`, `CLMonitor`). A value type: pure, deterministic, no I/O.
///
/// The rule (README, "Behaviour beyond Apple's documentation", Regions). A fix with centre distance `d` (geodesic on WGS-84,
/// `Geodesic.wgs84.distance` from the fix to the centre) from a circle of radius `r`, horizontal
/// accuracy `a` and the region's hysteresis `h` is evidence of *inside* when `d <= r - max(a, h)`
/// and of *outside* when `d >= r + max(a, h)`; anything between is no evidence, and so is a fix with
/// a negative (invalid) accuracy. For each region (`RegionStateMachine`):
/// - the first decisive fix sets the state and reports `.determined(state)` only;
/// - a later change reports `.entered` or `.exited` followed by `.determined(newState)`; every event
///   carries the region's `notifyOnEntry` / `notifyOnExit` flags, and the caller decides delivery;
/// - a region added with a persisted state (`initialState` `.inside` or `.outside`) starts in it, so
///   a decisive fix of the other state reports the crossing that happened while the app was not
///   running, and a fix that agrees reports nothing;
/// - `requestState(identifier:)` answers the current state (`.unknown` before any decisive fix).
///
/// Events of one call come in the order of `specs` (the order in which identifiers were first
/// added); a region's `.entered`/`.exited` precedes its `.determined`.
///
/// How it stays fast with a million regions: each fix touches only regions whose state could
/// change. Regions in state unknown are kept in a list (normally empty after the first fix); regions
/// inside are kept in a list (normally a handful) and checked for exit; regions outside are found
/// through a spatial index (`RegionGrid`) over bounding boxes of their circles, since only a fix
/// within `r` of the centre can be evidence of inside. A cheap, rigorous bound on the geodesic
/// distance (`RegionGeometry`) discards the candidates whose state cannot change; every change is
/// decided with the exact `Geodesic.wgs84.distance` on the region's `Double` values. Regions outside
/// and far away cost nothing.
///
/// Storage is a structure of arrays: 24 bytes of hot data (`Float` unit vector, radius, hysteresis,
/// state and flags), 32 bytes of exact `Double` values, the identifiers in one UTF-8 buffer with
/// 4-byte offsets, an open-addressing identifier table of `Int32` slots, and the cell index.
/// Removed regions leave a tombstone until more than 1,024 slots and more than half of all slots are
/// dead (or none is left), then the storage is compacted (renumbering preserves order). Added or
/// replaced regions wait in a short list, scanned with every fix, until `evaluate` rebuilds the
/// index once that list exceeds max(1,024, count / 256) (or `buildIndex()` is called).
package struct RegionMonitor: Sendable {
  /// Hot per-region data, read for every candidate: 24 bytes.
  struct Hot {
    var x: Float
    var y: Float
    var z: Float
    var radius: Float
    var hysteresis: Float
    var bits: UInt32
  }

  /// The exact values the decision uses: 32 bytes.
  struct Exact {
    var latitude: Double
    var longitude: Double
    var radius: Double
    var hysteresis: Double
  }

  /// A change of state found while evaluating a fix.
  struct Change {
    var slot: Int32
    var action: RegionStateMachine.Action
  }

  // Layout of `Hot.bits`.
  static let stateMask: UInt32 = 0b11
  static let notifyOnEntryBit: UInt32 = 1 << 2
  static let notifyOnExitBit: UInt32 = 1 << 3
  static let aliveBit: UInt32 = 1 << 4
  static let inUnknownListBit: UInt32 = 1 << 5
  static let inInsideListBit: UInt32 = 1 << 6
  static let inDirtyListBit: UInt32 = 1 << 7
  static let listBits = inUnknownListBit | inInsideListBit | inDirtyListBit

  // Identifier table markers.
  static let emptyEntry: Int32 = -1
  static let deletedEntry: Int32 = -2

  /// The most regions one monitor holds (2^28, about 268 million: some 30 GB of storage).
  package static let maximumCount = RegionGridIndex.maximumSlots

  /// The largest radius `add` accepts, metres (`maximumRegionMonitoringDistance`).
  package let maximumRadius: Double

  var hot: [Hot] = []
  var exact: [Exact] = []
  var identifierBytes: [UInt8] = []
  var identifierStarts: [UInt32] = [0]
  var identifierTable: [Int32] = []
  var identifierTableUsed = 0
  /// Slots that may be in state unknown (`inUnknownListBit`), possibly stale.
  var unknownList: [Int32] = []
  /// Slots that may be inside (`inInsideListBit`), possibly stale.
  var insideList: [Int32] = []
  /// Slots whose current geometry is not in `index` (`inDirtyListBit`).
  var dirtyList: [Int32] = []
  var index = RegionGridIndex()
  var liveCount = 0
  var deadCount = 0
  var lastFix: (latitude: Double, longitude: Double, accuracy: Double)?

  /// Creates an empty monitor.
  /// - Parameter maximumRadius: The largest radius accepted, metres (default 10,000 km).
  package init(maximumRadius: Double = RegionSpec.defaultMaximumRadius) {
    self.maximumRadius = maximumRadius
  }

  // The stored layout is shared with `RegionMonitor+Identifiers.swift` (identifiers and
  // compaction), so its members are internal rather than private.

  // MARK: - Queries

  /// The number of regions monitored.
  package var count: Int { liveCount }

  /// The regions, in the order their identifiers were first added.
  package var specs: [RegionSpec] {
    var result: [RegionSpec] = []
    result.reserveCapacity(liveCount)
    for slot in 0..<hot.count where hot[slot].bits & Self.aliveBit != 0 {
      result.append(spec(ofSlot: slot))
    }
    return result
  }

  /// The regions' states, in the order of `specs`.
  package var states: [RegionState] {
    var result: [RegionState] = []
    result.reserveCapacity(liveCount)
    for slot in 0..<hot.count where hot[slot].bits & Self.aliveBit != 0 {
      result.append(Self.state(hot[slot].bits))
    }
    return result
  }

  /// The region with an identifier.
  /// - Parameter identifier: The region's identifier.
  /// - Returns: The region, or nil if none has that identifier.
  package func spec(of identifier: String) -> RegionSpec? {
    slot(of: identifier).map { spec(ofSlot: $0) }
  }

  /// The current state of a region.
  /// - Parameter identifier: The region's identifier.
  /// - Returns: The state (`.unknown` before any decisive fix), or nil if no region has that
  ///   identifier.
  package func state(of identifier: String) -> RegionState? {
    slot(of: identifier).map { Self.state(hot[$0].bits) }
  }

  /// Answers Apple's `requestState(for:)`: a determination of the region's current state.
  /// - Parameter identifier: The region's identifier.
  /// - Returns: `.determined(state)` with the region's flags (`.unknown` before any decisive fix),
  ///   or nil if no region has that identifier.
  package func requestState(identifier: String) -> RegionEvent? {
    guard let slot = slot(of: identifier) else { return nil }
    return event(slot: slot, kind: .determined(Self.state(hot[slot].bits)))
  }

  /// Bytes held by the monitor's storage (array capacities, identifiers included).
  package var storageBytes: Int {
    hot.capacity * MemoryLayout<Hot>.stride + exact.capacity * MemoryLayout<Exact>.stride
      + identifierBytes.capacity + identifierStarts.capacity * 4 + identifierTable.capacity * 4
      + (unknownList.capacity + insideList.capacity + dirtyList.capacity) * 4
      + index.storageBytes
  }

  // MARK: - Changes

  /// Reserves storage for a number of regions (optional; avoids growth when adding many).
  /// - Parameters:
  ///   - regions: The number of regions expected.
  ///   - identifierBytes: The expected total UTF-8 length of their identifiers.
  package mutating func reserveCapacity(_ regions: Int, identifierBytes bytes: Int = 0) {
    hot.reserveCapacity(regions)
    exact.reserveCapacity(regions)
    identifierStarts.reserveCapacity(regions + 1)
    identifierBytes.reserveCapacity(bytes)
    unknownList.reserveCapacity(regions)
    dirtyList.reserveCapacity(regions)
    var capacity = 16
    while capacity < regions * 2 { capacity <<= 1 }
    if capacity > identifierTable.count { rehashIdentifiers(capacity: capacity) }
  }

  /// Adds a region, or replaces the region with the same identifier, and evaluates it against the
  /// most recent valid fix, if any.
  ///
  /// A replaced region keeps its place in `specs` and takes the new geometry, flags and
  /// `initialState`. `initialState` is `.unknown` for a new region, or the state persisted for a
  /// region restored at launch: then a decisive fix of the other state reports the crossing.
  /// - Parameters:
  ///   - spec: The region.
  ///   - initialState: The state it starts in.
  /// - Returns: The events of evaluating it against the last fix given to `evaluate` (none when
  ///   there is no such fix, see `forgetLastFix()`).
  /// - Throws: `RegionSpecError` when `spec.validate(maximumRadius:)` finds a reason, or
  ///   `.tooManyRegions` when a new identifier would exceed `maximumCount`; the monitor is then
  ///   unchanged.
  @discardableResult
  package mutating func add(_ spec: RegionSpec, initialState: RegionState = .unknown)
    throws(RegionSpecError) -> [RegionEvent]
  {
    if let error = spec.validate(maximumRadius: maximumRadius) { throw error }
    let v = RegionGeometry.unitVector(latitude: spec.latitude, longitude: spec.longitude)
    var bits = Self.aliveBit | UInt32(initialState.rawValue)
    if spec.notifyOnEntry { bits |= Self.notifyOnEntryBit }
    if spec.notifyOnExit { bits |= Self.notifyOnExitBit }
    let exactValues = Exact(
      latitude: spec.latitude, longitude: spec.longitude, radius: spec.radius,
      hysteresis: spec.hysteresis)
    let slot: Int
    let found: Int? = Self.withBytes(of: spec.identifier) { bytes in
      let hash = Self.hash(bytes)
      if let slot = findSlot(bytes, hash: hash) { return slot }
      if hot.count >= Self.maximumCount && deadCount > 0 { compact() }
      if hot.count >= Self.maximumCount { return nil }
      let slot = hot.count
      identifierBytes.append(contentsOf: bytes)
      identifierStarts.append(UInt32(truncatingIfNeeded: identifierBytes.count))
      insertIdentifier(slot: slot, hash: hash)
      hot.append(Hot(x: 0, y: 0, z: 0, radius: 0, hysteresis: 0, bits: 0))
      exact.append(exactValues)
      liveCount += 1
      return slot
    }
    guard let found else {
      throw RegionSpecError(
        code: .tooManyRegions,
        message:
          "region '\(spec.identifier)': the monitor already holds \(Self.maximumCount) regions")
    }
    slot = found
    bits |= hot[slot].bits & Self.listBits
    hot[slot] = Hot(
      x: Float(v.x), y: Float(v.y), z: Float(v.z), radius: Float(spec.radius),
      hysteresis: Float(spec.hysteresis), bits: bits)
    exact[slot] = exactValues
    enlist(slot)
    if hot[slot].bits & Self.inDirtyListBit == 0 {
      hot[slot].bits |= Self.inDirtyListBit
      dirtyList.append(Int32(truncatingIfNeeded: slot))
    }
    guard let fix = lastFix else { return [] }
    var changes: [Change] = []
    let evidence = exactEvidence(
      slot: slot, latitude: fix.latitude, longitude: fix.longitude, accuracy: fix.accuracy)
    apply(evidence, slot: slot, changes: &changes)
    return events(changes)
  }

  /// Stops monitoring a region.
  /// - Parameter identifier: The region's identifier.
  /// - Returns: The removed region, or nil if none had that identifier.
  @discardableResult
  package mutating func remove(identifier: String) -> RegionSpec? {
    let position = Self.withBytes(of: identifier) { bytes in
      findPosition(bytes, hash: Self.hash(bytes))
    }
    guard let position else { return nil }
    let slot = Int(identifierTable[position])
    let removed = spec(ofSlot: slot)
    identifierTable[position] = Self.deletedEntry
    hot[slot].bits &= ~Self.aliveBit
    liveCount -= 1
    deadCount += 1
    if liveCount == 0 || (deadCount > 1024 && deadCount > liveCount) { compact() }
    return removed
  }

  /// Forgets the most recent fix, so that `add` reports nothing until the next `evaluate` (for a
  /// caller that considers that fix stale).
  package mutating func forgetLastFix() {
    lastFix = nil
  }

  /// Builds the spatial index now; `evaluate` does it by itself when many regions were added since
  /// the last build, so calling this only moves that cost out of the next `evaluate`.
  package mutating func buildIndex() {
    do {
      let hot = self.hot
      let exact = self.exact
      index = RegionGridIndex(slotCount: hot.count, expectedEntries: liveCount * 6) { slot, emit in
        guard hot[slot].bits & Self.aliveBit != 0 else { return -1 }
        let e = exact[slot]
        let box = RegionGeometry.boundingBox(
          latitude: e.latitude, longitude: e.longitude, radius: e.radius)
        return RegionGrid.forEachCell(of: box, emit)
      }
    }
    for slot in dirtyList { hot[Int(slot)].bits &= ~Self.inDirtyListBit }
    dirtyList = []
  }

  // MARK: - Evaluation

  /// Evaluates a fix against every region and returns the changes.
  /// - Parameter fix: The fix; one without a valid coordinate (`hasValidCoordinate`) is no evidence.
  /// - Returns: The events, in the order of `specs`; empty when no state changed.
  package mutating func evaluate(_ fix: Fix) -> [RegionEvent] {
    guard fix.hasValidCoordinate else { return [] }
    return evaluate(
      latitude: fix.latitude, longitude: fix.longitude, accuracy: fix.horizontalAccuracy)
  }

  /// Evaluates a position against every region and returns the changes.
  /// - Parameters:
  ///   - latitude: Degrees (WGS-84), -90...90.
  ///   - longitude: Degrees, -180...180.
  ///   - accuracy: Horizontal accuracy (68 % radius), metres; negative or NaN: no evidence.
  /// - Returns: The events, in the order of `specs`; empty when no state changed (and for an
  ///   invalid position, which is also not remembered as the last fix).
  package mutating func evaluate(latitude: Double, longitude: Double, accuracy: Double)
    -> [RegionEvent]
  {
    guard latitude.isFinite, longitude.isFinite, abs(latitude) <= 90, abs(longitude) <= 180,
      accuracy >= 0
    else { return [] }
    lastFix = (latitude, longitude, accuracy)
    if liveCount == 0 { return [] }
    if dirtyList.count > max(1024, liveCount >> 8) { buildIndex() }
    let q = RegionGeometry.unitVector(latitude: latitude, longitude: longitude)
    var changes: [Change] = []

    // 1. Regions in state unknown: any decisive fix changes them.
    if !unknownList.isEmpty {
      var kept = 0
      for read in 0..<unknownList.count {
        let slot = Int(unknownList[read])
        let bits = hot[slot].bits
        if bits & Self.aliveBit == 0 || bits & Self.stateMask != 0 {
          hot[slot].bits = bits & ~Self.inUnknownListBit
          continue
        }
        let evidence = exactEvidence(
          slot: slot, latitude: latitude, longitude: longitude, accuracy: accuracy)
        if evidence == .none {
          unknownList[kept] = Int32(truncatingIfNeeded: slot)
          kept += 1
        } else {
          hot[slot].bits = bits & ~Self.inUnknownListBit
          apply(evidence, slot: slot, changes: &changes)
        }
      }
      if kept == 0 {
        unknownList = []  // after the first fix: give back the storage
      } else {
        unknownList.removeLast(unknownList.count - kept)
      }
    }

    // 2. Regions inside: only evidence of outside changes them.
    if !insideList.isEmpty {
      var kept = 0
      let insideRaw = UInt32(RegionState.inside.rawValue)
      for read in 0..<insideList.count {
        let slot = Int(insideList[read])
        let h = hot[slot]
        if h.bits & Self.aliveBit == 0 || h.bits & Self.stateMask != insideRaw {
          hot[slot].bits = h.bits & ~Self.inInsideListBit
          continue
        }
        if !Self.surelyNotOutside(h, q, accuracy: accuracy) {
          let evidence = exactEvidence(
            slot: slot, latitude: latitude, longitude: longitude, accuracy: accuracy)
          if evidence == .outside {
            hot[slot].bits = h.bits & ~Self.inInsideListBit
            apply(evidence, slot: slot, changes: &changes)
            continue
          }
        }
        insideList[kept] = Int32(truncatingIfNeeded: slot)
        kept += 1
      }
      insideList.removeLast(insideList.count - kept)
    }

    // 3. Regions outside: only a fix within the circle can change them; the index finds those.
    let index = self.index
    var levels = index.levelMask
    while levels != 0 {
      let level = levels.trailingZeroBitCount
      levels &= levels - 1
      let key = RegionGrid.key(latitude: latitude, longitude: longitude, level: level)
      for position in index.entries(inCell: key) {
        considerOutside(
          slot: index.slot(at: position), q, latitude: latitude, longitude: longitude,
          accuracy: accuracy, changes: &changes)
      }
    }
    var i = 0
    while i < dirtyList.count {
      considerOutside(
        slot: Int(dirtyList[i]), q, latitude: latitude, longitude: longitude,
        accuracy: accuracy, changes: &changes)
      i += 1
    }
    return events(changes)
  }

  @inline(__always)
  mutating func considerOutside(
    slot: Int, _ q: (x: Double, y: Double, z: Double), latitude: Double, longitude: Double,
    accuracy: Double, changes: inout [Change]
  ) {
    let h = hot[slot]
    guard h.bits & (Self.aliveBit | Self.stateMask) == Self.aliveBit | 2 else { return }
    if Self.surelyNotInside(h, q, accuracy: accuracy) { return }
    let evidence = exactEvidence(
      slot: slot, latitude: latitude, longitude: longitude, accuracy: accuracy)
    if evidence == .inside { apply(evidence, slot: slot, changes: &changes) }
  }

  // MARK: - Filters

  /// Squared chord between the fix's and the region's unit vectors.
  @inline(__always)
  static func chordSquared(_ h: Hot, _ q: (x: Double, y: Double, z: Double)) -> Double {
    let dx = q.x - Double(h.x)
    let dy = q.y - Double(h.y)
    let dz = q.z - Double(h.z)
    return dx * dx + dy * dy + dz * dz
  }

  /// True when the fix cannot be evidence of inside (`d > r - max(a, h)` for sure).
  ///
  /// `d >= M_min θ >= M_min c` for the true chord `c`; the stored `Float` unit vector moves `c` by
  /// at most 5.2e-8 (0.33 m), the `Float` radius and hysteresis move the threshold by at most
  /// 6e-8 of their sum: a slack of 1 m plus 1e-6 of that sum covers both.
  @inline(__always)
  static func surelyNotInside(
    _ h: Hot, _ q: (x: Double, y: Double, z: Double), accuracy: Double
  ) -> Bool {
    let r = Double(h.radius)
    let hysteresis = Double(h.hysteresis)
    let t = r - max(accuracy, hysteresis) + 1e-6 * (r + hysteresis) + 1
    if t <= 0 { return true }
    let s = t / RegionGeometry.minimumCurvatureRadius
    return chordSquared(h, q) > s * s
  }

  /// True when the fix cannot be evidence of outside (`d < r + max(a, h)` for sure).
  ///
  /// `d <= M_max θ` and `θ = 2 asin(c/2) <= c / √(1 - c²/4) <= c (1 + c²/4)` for `c <= 1`; the
  /// `Float` errors cost at most 0.6 m there, covered by a slack of 2 m plus 1e-6 of `r + h`.
  @inline(__always)
  static func surelyNotOutside(
    _ h: Hot, _ q: (x: Double, y: Double, z: Double), accuracy: Double
  ) -> Bool {
    let r = Double(h.radius)
    let hysteresis = Double(h.hysteresis)
    let t = r + max(accuracy, hysteresis) - 1e-6 * (r + hysteresis) - 2
    guard t > 0 else { return false }
    let c2 = chordSquared(h, q)
    guard c2 <= 1 else { return false }
    let f = 1 + c2 / 4
    let u = t / RegionGeometry.maximumCurvatureRadius
    return c2 * f * f < u * u
  }

  // MARK: - State

  @inline(__always)
  static func state(_ bits: UInt32) -> RegionState {
    RegionState(rawValue: Int(bits & stateMask)) ?? .unknown
  }

  /// The rule on the exact values: distance from the fix to the centre.
  @inline(__always)
  func exactEvidence(slot: Int, latitude: Double, longitude: Double, accuracy: Double)
    -> RegionEvidence
  {
    let e = exact[slot]
    let d = Geodesic.wgs84.distance(
      latitude1: latitude, longitude1: longitude, latitude2: e.latitude, longitude2: e.longitude)
    return .of(distance: d, radius: e.radius, accuracy: accuracy, hysteresis: e.hysteresis)
  }

  /// Runs the region's state machine and records a change.
  mutating func apply(_ evidence: RegionEvidence, slot: Int, changes: inout [Change]) {
    let bits = hot[slot].bits
    var machine = RegionStateMachine(state: Self.state(bits))
    let action = machine.observe(evidence)
    if action == .none { return }
    hot[slot].bits = (bits & ~Self.stateMask) | UInt32(machine.state.rawValue)
    enlist(slot)
    changes.append(Change(slot: Int32(truncatingIfNeeded: slot), action: action))
  }

  /// Puts a slot on the list its state needs (unknown or inside), unless it is there already.
  mutating func enlist(_ slot: Int) {
    let bits = hot[slot].bits
    switch Self.state(bits) {
    case .unknown:
      if bits & Self.inUnknownListBit == 0 {
        hot[slot].bits = bits | Self.inUnknownListBit
        unknownList.append(Int32(truncatingIfNeeded: slot))
      }
    case .inside:
      if bits & Self.inInsideListBit == 0 {
        hot[slot].bits = bits | Self.inInsideListBit
        insideList.append(Int32(truncatingIfNeeded: slot))
      }
    case .outside:
      break
    }
  }

  func events(_ changes: [Change]) -> [RegionEvent] {
    if changes.isEmpty { return [] }
    var changes = changes
    var sorted = true
    for i in 1..<max(1, changes.count) where changes[i - 1].slot > changes[i].slot {
      sorted = false
      break
    }
    if !sorted { changes.sort { $0.slot < $1.slot } }
    var result: [RegionEvent] = []
    result.reserveCapacity(changes.count * 2)
    for change in changes {
      let slot = Int(change.slot)
      switch change.action {
      case .none:
        break
      case .determine(let state):
        result.append(event(slot: slot, kind: .determined(state)))
      case .enter:
        result.append(event(slot: slot, kind: .entered))
        result.append(event(slot: slot, kind: .determined(.inside)))
      case .exit:
        result.append(event(slot: slot, kind: .exited))
        result.append(event(slot: slot, kind: .determined(.outside)))
      }
    }
    return result
  }

  func event(slot: Int, kind: RegionEvent.Kind) -> RegionEvent {
    let bits = hot[slot].bits
    return RegionEvent(
      identifier: identifier(ofSlot: slot), kind: kind,
      notifyOnEntry: bits & Self.notifyOnEntryBit != 0,
      notifyOnExit: bits & Self.notifyOnExitBit != 0)
  }

  func spec(ofSlot slot: Int) -> RegionSpec {
    let e = exact[slot]
    let bits = hot[slot].bits
    return RegionSpec(
      identifier: identifier(ofSlot: slot), latitude: e.latitude, longitude: e.longitude,
      radius: e.radius, hysteresis: e.hysteresis,
      notifyOnEntry: bits & Self.notifyOnEntryBit != 0,
      notifyOnExit: bits & Self.notifyOnExitBit != 0)
  }
}
