import Geodesy
import LocationModel

/// The deterministic core: `handle(_:at:) -> [EngineEffect]` (`docs/architecture.md`, "The engine is a step
/// function"). No I/O, no threads, no clock: time comes in with each event.
///
/// Rules it implements (documented in the public API as well):
/// - Distance filter: a location is delivered when it is at least `distanceFilter` metres (geodesic,
///   WGS-84) from the last one delivered to that client; zero or negative delivers every fix.
/// - `requestLocation`: see `UpdateSession.satisfies`; the deadline is `requestTimeout` seconds, after
///   which the most accurate fix seen is delivered, or `locationUnknown` when there was none.
/// - A cached last known location no older than `cachedLocationMaxAge` seconds is delivered first
///   when updates start (with its old timestamp), as Apple's "cached value".
/// - Fixes with an invalid coordinate (NaN, out of range, negative accuracy) are dropped and counted.
/// - Not authorized: starting gives `denied` and nothing else; losing authorization stops updates
///   with `denied`.
package struct LocationEngine: Sendable {
  /// Seconds `requestLocation` waits for a satisfying fix (Apple documents no figure; ours is 10 s).
  package var requestTimeout: Double = 10
  /// The oldest cached location (in seconds of wall-clock age) delivered when updates start.
  package var cachedLocationMaxAge: Double = 300
  /// Minimum monotonic seconds between two `saveLastKnownLocation` effects.
  package var saveInterval: Double = 5

  /// The largest region radius accepted (metres): `maximumRegionMonitoringDistance`.
  package var maximumRegionRadius: Double = RegionSpec.defaultMaximumRadius
  /// The accuracy asked of the sources while regions are monitored (metres).
  package var regionAccuracy: Double = 100
  /// The most regions monitored at once, every group together; nil: no limit. A new region
  /// beyond it is rejected (`CLError.regionMonitoringFailure`); replacing one is not a new one.
  /// Regions restored from the store are not counted against it.
  package var maximumRegionCount: Int?
  /// The regions monitored now, every group together.
  package var regionCount: Int {
    regions.values.reduce(0) { $0 + $1.count } + beaconRegions.values.reduce(0) { $0 + $1.count }
  }

  var sessions = SessionTable()
  private var fixArbiter = FixArbiter()
  var regions: [String: RegionMonitor] = [:]
  /// Beacon regions, per group (`LocationEngine+Beacons`).
  var beaconRegions: [String: BeaconRegionMonitor] = [:]
  /// Beacon ranging of every client.
  var beaconRanging = BeaconRanging()
  var lastBeaconDemand = false
  var beaconTickArmed = false
  var headingSessions: [ClientID: HeadingPipeline] = [:]
  var deferrals: [ClientID: DeferredUpdates] = [:]
  /// Auto-pause of streaming clients that asked for it.
  var autoPauses: [ClientID: AutoPause] = [:]
  /// Significant-change monitoring, per client.
  var dutyCycles: [ClientID: DutyCycle] = [:]
  /// Visit monitoring, for the app (nil: off).
  var visitMonitoring: VisitDutyCycle?
  var lastHeadingDemand: Bool?
  private(set) var allowed: Bool
  /// Whether headings may be delivered (`AuthorizationSnapshot.allowsHeadings`).
  package var headingsAllowed = true
  /// The reduction of an app with reduced accuracy: no region is evaluated, and true north comes
  /// from the reduced location; nil for full accuracy.
  package var reduction: ReducedAccuracy?
  /// Whether the app has full accuracy (beacons need it, in every mode).
  package var fullAccuracy = true
  var sources: [SourceInfo] = []
  private var bestPossible: Double = 0
  private var lastDemand: Double?? = .none
  private var lastSave: Double = -.infinity
  /// Every source has ended for good (until sources run again): clients that start now are told at
  /// once instead of waiting for locations that cannot come.
  private var sourcesHaveEnded = false
  /// The newest valid fix from any source (or the cached one from the store at start).
  package private(set) var latestFix: Fix?
  /// Fixes dropped because their coordinate was invalid.
  package private(set) var droppedFixes = 0

  /// Creates an engine.
  /// - Parameters:
  ///   - allowed: whether the app may receive locations now.
  ///   - cachedLocation: the last known location from the store, if any.
  package init(allowed: Bool, cachedLocation: Fix? = nil) {
    self.allowed = allowed
    self.latestFix = cachedLocation
  }

  /// Whether the client has updates or a request running.
  package func isActive(_ client: ClientID) -> Bool { sessions[client]?.isActive ?? false }

  /// Handles one event at one instant and returns the effects to apply, in order.
  package mutating func handle(_ event: EngineEvent, at now: EngineInstant) -> [EngineEffect] {
    var effects: [EngineEffect] = []
    handle(event, at: now, into: &effects)
    return effects
  }

  /// Handles one event and appends its effects to `effects` (a buffer the caller may reuse, so the
  /// hot path of one fix allocates nothing but the delivered batch).
  package mutating func handle(
    _ event: EngineEvent, at now: EngineInstant, into effects: inout [EngineEffect]
  ) {
    switch event {
    case .addClient(let client):
      if sessions[client] == nil { sessions[client] = UpdateSession() }
    case .removeClient(let client):
      beaconRanging.remove(client)
      headingSessions[client] = nil
      deferrals[client] = nil
      clearPause(client, into: &effects)
      stopSignificantChanges(client, into: &effects)
      if sessions.removeValue(forKey: client)?.isActive == true {
        effects.append(.cancelTimer(.requestTimeout(client)))
      }
    case .startUpdates(let client, let request):
      start(client, request, at: now, into: &effects)
    case .changeRequest(let client, let request):
      sessions[client]?.change(request)
      if sessions[client]?.isStreaming == true {
        configurePause(client, request, into: &effects)
      }
    case .allowDeferred(let client, let distance, let timeout):
      allowDeferred(client, distance: distance, timeout: timeout, at: now, into: &effects)
    case .disallowDeferred(let client):
      finishDeferral(client, deferrals[client]?.disallow(), into: &effects)
    case .timerFired(.deferralDeadline(let client)):
      finishDeferral(client, deferrals[client]?.tick(at: now.monotonic), into: &effects)
    case .stopUpdates(let client):
      finishDeferral(client, deferrals[client]?.stopUpdating(), into: &effects)
      clearPause(client, into: &effects)
      if sessions[client]?.isActive == true {
        sessions[client]?.stop()
        effects.append(.cancelTimer(.requestTimeout(client)))
      }
    case .requestLocation(let client, let request):
      requestOne(client, request, at: now, into: &effects)
    case .fix(let fix):
      // A fix changes demand only when it completes a request, pauses or resumes a client, or
      // ends a duty-cycle burst.
      if receive(fix, at: now, into: &effects) || !autoPauses.isEmpty || !dutyCycles.isEmpty
        || visitMonitoring != nil
      {
        updateDemand(into: &effects)
      }
      return
    case .sourcesChanged(let infos):
      sources = infos
      if !infos.isEmpty { sourcesHaveEnded = false }
      bestPossible = infos.map(\.nominalAccuracy).min() ?? 0
    case .sourceFailed:
      for client in sessions.clients {
        apply(sessions[client]?.sourceFailed(), client, into: &effects)
      }
    case .sourcesEnded:
      sourcesHaveEnded = true
      for client in sessions.clients {
        apply(sessions[client]?.sourcesEnded(), client, into: &effects)
      }
      endSignificantChanges(with: .sourcesEnded, into: &effects)
    case .sourcesDenied:
      sourcesHaveEnded = true
      for client in sessions.clients {
        clearPause(client, into: &effects)
        apply(sessions[client]?.denied(), client, into: &effects)
      }
      endSignificantChanges(with: .denied, into: &effects)
    case .timerFired(.requestTimeout(let client)):
      apply(sessions[client]?.timeout(), client, into: &effects)
    case .timerFired(.pauseCheck(let client)):
      pauseCheck(client, at: now, into: &effects)
    case .timerFired(.dutyWake(let client)):
      dutyWake(client, at: now, into: &effects)
    case .timerFired(.dutyGiveUp(let client)):
      dutyGiveUp(client, at: now, into: &effects)
    case .timerFired(.visitWake):
      visitWake(at: now, into: &effects)
    case .timerFired(.visitGiveUp):
      visitGiveUp(at: now, into: &effects)
    case .startSignificantChanges(let client):
      startSignificantChanges(client, at: now, into: &effects)
    case .stopSignificantChanges(let client):
      stopSignificantChanges(client, into: &effects)
    case .startVisits(let requester):
      startVisits(requester: requester, at: now, into: &effects)
    case .stopVisits:
      stopVisits(into: &effects)
    case .authorization(let isAllowed, let headings, let reduced, let full):
      allowed = isAllowed
      headingsAllowed = headings
      reduction = reduced
      fullAccuracy = full
      if !isAllowed {
        for client in sessions.clients {
          clearPause(client, into: &effects)
          apply(sessions[client]?.denied(), client, into: &effects)
        }
        endSignificantChanges(with: .denied, into: &effects)
        suspendVisits(into: &effects)
      } else {
        resumeVisits(at: now, into: &effects)
      }
      if !isAllowed || reduced != nil || !full { failRanging(into: &effects) }
    case .addRegion(let group, let spec, let initialState, let requester):
      addRegion(
        group: group, spec, initialState: initialState, requester: requester, at: now,
        into: &effects)
    case .restoreRegions(let group, let specs, let states):
      restoreRegions(group: group, specs, states)
    case .removeRegion(let group, let identifier):
      if removeAnyRegion(group: group, identifier: identifier) {
        effects.append(.regionRemoved(group: group, identifier: identifier))
      }
    case .heading(let sample):
      receiveHeading(sample, into: &effects)
    case .startHeading(let client, let filter, let orientation):
      var pipeline = HeadingPipeline(headingFilter: filter)
      pipeline.setOrientation(orientation)
      headingSessions[client] = pipeline
    case .changeHeading(let client, let filter, let orientation):
      headingSessions[client]?.headingFilter = filter
      headingSessions[client]?.setOrientation(orientation)
    case .stopHeading(let client):
      headingSessions[client] = nil
    case .advertisement(let advertisement):
      // The hot path of beacons: an advertisement changes no demand.
      observe(advertisement, at: now, into: &effects)
      return
    case .startRanging(let client, let constraint):
      startRanging(client, constraint, into: &effects)
    case .stopRanging(let client, let constraint):
      beaconRanging.stop(client, constraint)
    case .timerFired(.beaconTick):
      beaconTick(at: now, into: &effects)
    case .requestRegionState(let client, let group, let identifier):
      // An app that may not have a precise location learns no state, not even one stored earlier.
      if allowed, reduction == nil,
        let event = regions[group]?.requestState(identifier: identifier)
          ?? beaconRegions[group]?.requestState(identifier: identifier)
      {
        effects.append(.regionStateReply(client, group: group, event))
      }
    }
    // Visit monitoring restored from the store, or allowed again: detection runs.
    if visitMonitoring?.state == .stopped { resumeVisits(at: now, into: &effects) }
    updateDemand(into: &effects)
    updateBeaconDemand(at: now, into: &effects)
    let headingDemand = headingsAllowed && !headingSessions.isEmpty
    if lastHeadingDemand != headingDemand {
      lastHeadingDemand = headingDemand
      effects.append(.demandHeading(headingDemand))
    }
  }

  private mutating func start(
    _ client: ClientID, _ request: UpdateRequest, at now: EngineInstant,
    into effects: inout [EngineEffect]
  ) {
    guard allowed else {
      effects.append(.deliverError(client, .denied))
      return
    }
    var session = sessions[client] ?? UpdateSession()
    if session.isActive { effects.append(.cancelTimer(.requestTimeout(client))) }
    session.start(request)
    // Starting again (after a pause, too) runs with a fresh detector.
    clearPause(client, into: &effects)
    configurePause(client, request, into: &effects)
    if let cached = freshCachedFix(at: now) {
      apply(session.receive(cached, bestPossible: bestPossible), client, into: &effects)
    }
    if sourcesHaveEnded && demandIsActive { apply(session.sourcesEnded(), client, into: &effects) }
    sessions[client] = session
  }

  private mutating func requestOne(
    _ client: ClientID, _ request: UpdateRequest, at now: EngineInstant,
    into effects: inout [EngineEffect]
  ) {
    guard allowed else {
      effects.append(.deliverError(client, .denied))
      return
    }
    var session = sessions[client] ?? UpdateSession()
    guard session.requestOne(request) else { return }
    if sourcesHaveEnded && demandIsActive {
      // The deadline would pass with nothing; answer now (the best cached fix, or the error).
      if let cached = freshCachedFix(at: now) {
        _ = session.receive(cached, bestPossible: bestPossible)
      }
      apply(session.sourcesEnded(), client, into: &effects)
      sessions[client] = session
      return
    }
    if let cached = freshCachedFix(at: now),
      UpdateSession.satisfies(cached, request, bestPossible: bestPossible)
    {
      _ = session.receive(cached, bestPossible: bestPossible)
      effects.append(.deliverLocations(client, [cached]))
    } else {
      effects.append(.armTimer(.requestTimeout(client), deadline: now.monotonic + requestTimeout))
    }
    sessions[client] = session
  }

  func freshCachedFix(at now: EngineInstant) -> Fix? {
    guard let fix = latestFix, now.wall - fix.time <= cachedLocationMaxAge else { return nil }
    return fix
  }

  /// Returns whether a request was completed (demand may have changed).
  private mutating func receive(
    _ fix: Fix, at now: EngineInstant, into effects: inout [EngineEffect]
  ) -> Bool {
    guard fix.hasValidCoordinate else {
      droppedFixes += 1
      return false
    }
    // Several sources running: the best recent fix wins (`FixArbiter`).
    if sources.count > 1 {
      guard fixArbiter.accept(fix) else { return false }
    } else {
      fixArbiter.note(fix)
    }
    latestFix = fix
    let saves = !fix.isSimulated && now.monotonic - lastSave >= saveInterval
    if saves { lastSave = now.monotonic }
    // The last of the step's effects: the store's write (a commit, milliseconds on a slow disk)
    // comes after the fix reached every client, not before them (`locbench latency`, p99).
    defer { if saves { effects.append(.saveLastKnownLocation(fix)) } }
    guard allowed else { return false }
    var completed = false
    let start = effects.count
    // One array for every client's delivery of this fix: a daemon serving 500 managers makes
    // one allocation, not 500, and the encoder sees one batch (`AppHost.encodedLocations`).
    let batch = [fix]
    effects.reserveCapacity(effects.count + sessions.count + 4)
    // In client order (the table's slots), each session found by its slot: no sort, no look-up.
    let ids = sessions.ids
    let live = sessions.live
    for slot in ids.indices
    where live[slot] && deliver(fix, batch, to: ids[slot], index: slot, at: now, into: &effects) {
      completed = true
    }
    if !dutyCycles.isEmpty {
      for client in dutyCycles.keys.sorted() {
        // A manager running both services gets each location once.
        let streamed = effects[start...].contains {
          if case .deliverLocations(client, let fixes) = $0 { return fixes.last == fix }
          return false
        }
        significantFix(fix, client, streamed: streamed, at: now, into: &effects)
      }
    }
    if visitMonitoring != nil { visitFix(fix, at: now, into: &effects) }
    // Region events after the locations, so that a manager's `location` is the fix behind them.
    if !regions.isEmpty, reduction == nil { evaluateRegions(fix, into: &effects) }
    return completed
  }

  /// A fix into one client's session, changed in place: `sessions[client]?.receive(...)` would
  /// copy the whole session out of the table and back for every client and fix.
  /// - Parameter known: the session's index in `sessions`, when the caller has it (checked: a
  ///   session added or removed since would have moved it).
  private mutating func sessionReceive(
    _ fix: Fix, _ client: ClientID, at known: Int? = nil
  ) -> UpdateSession.Received? {
    let index: Int
    if let known, sessions.holds(client, at: known) {
      index = known
    } else if let found = sessions.index(of: client) {
      index = found
    } else {
      return nil
    }
    return sessions.take(at: index, fix, bestPossible: bestPossible)
  }

  /// One fix for one client's session, through its auto-pause and deferral; returns whether it
  /// finished a request.
  /// - Parameters:
  ///   - fix: the fix received (passed along, not copied out of `batch` for every client).
  ///   - batch: `[fix]`, shared by every client's delivery.
  ///   - index: the client's index in `sessions`, if known.
  private mutating func deliver(
    _ fix: Fix, _ batch: [Fix], to client: ClientID,
    index: Int? = nil, at now: EngineInstant,
    into effects: inout [EngineEffect]
  ) -> Bool {
    if autoPauses.isEmpty {
      return route(
        sessionReceive(fix, client, at: index), of: fix, client, at: now, batch: batch,
        into: &effects)
    }
    switch pauseAllows(fix, client, at: now, into: &effects) {
    case .hold:
      return false
    case .deliver:
      return route(
        sessionReceive(fix, client, at: index), of: fix, client, at: now, batch: batch,
        into: &effects)
    case .deliverThenPause(let checkAt):
      let completed = route(
        sessionReceive(fix, client, at: index), of: fix, client, at: now, batch: batch,
        into: &effects)
      pause(client, checkAt: checkAt, into: &effects)
      return completed
    }
  }

  /// Appends what an action means; returns whether it finished a request. (A fix just received
  /// goes through `route(_:of:_:at:batch:into:)` instead.)
  @discardableResult
  func apply(
    _ action: UpdateSession.Action?, _ client: ClientID, into effects: inout [EngineEffect]
  ) -> Bool {
    switch action {
    case nil, .some(.none):
      return false
    case .some(.deliver(let fix)):
      effects.append(.deliverLocations(client, [fix]))
      return false
    case .some(.fail(let error)):
      effects.append(.deliverError(client, error))
      return false
    case .some(.complete(let fix)):
      effects.append(.cancelTimer(.requestTimeout(client)))
      effects.append(.deliverLocations(client, [fix]))
      return true
    case .some(.completeWithError(let error)):
      effects.append(.cancelTimer(.requestTimeout(client)))
      effects.append(.deliverError(client, error))
      return true
    }
  }

  /// Whether sources were last asked to run (the runtime keeps them running, ended or not).
  private var demandIsActive: Bool {
    if case .some(.some) = lastDemand { return true }
    return false
  }

  /// Emits `demandSources` when the strongest accuracy asked for changes.
  private mutating func updateDemand(into effects: inout [EngineEffect]) {
    var demand: Double? = allowed && reduction == nil && !regions.isEmpty ? regionAccuracy : nil
    for (client, session) in sessions.entries {
      guard let request = session.request, let wanted = updatesDemand(client, request) else {
        continue
      }
      demand = min(demand ?? .infinity, wanted)
    }
    for duty in dutyCycles.values {
      guard let wanted = significantChangeDemand(duty) else { continue }
      demand = min(demand ?? .infinity, wanted)
    }
    if let duty = visitMonitoring, let wanted = visitDemand(duty) {
      demand = min(demand ?? .infinity, wanted)
    }
    if case .some(let previous) = lastDemand, previous == demand { return }
    // Sources that start again (after nobody needed them) may produce again.
    if demand != nil, !demandIsActive { sourcesHaveEnded = false }
    lastDemand = .some(demand)
    effects.append(.demandSources(accuracy: demand))
  }
}
