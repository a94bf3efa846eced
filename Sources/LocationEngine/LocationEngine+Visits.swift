import Geodesy
import LocationModel

/// Visit monitoring in the step function: one ``VisitDutyCycle`` (over the ``VisitDetector`` rule)
/// for the app, as Apple has it ("Enabling visit events for one location manager enables visit
/// events for all other location manager objects in your app"). Every visit goes to every client
/// in a `visit` effect, which the runtime persists before delivering.
///
/// Monitoring stays on for the app until `stopVisits`, whoever asked and whichever clients come and
/// go (a daemon keeps detecting while the app is away). It detects only while the app may have
/// locations: a withdrawn authorization stops the source and forgets the stay under way, and an
/// authorization given again starts afresh. An app with reduced accuracy gets its visits at the
/// reduced position (`ReducedAccuracy`), with at least its accuracy; detection uses the fixes.
///
/// Power, as for significant change (`LocationEngine+Power.swift`): during a burst the sources are
/// asked for ``visitAccuracy`` (the cheapest source that meets it runs, a receiver only when none
/// does); between bursts only cheap sources keep running, and their fixes are judged as they come.
extension LocationEngine {
  /// The accuracy visit monitoring asks of the sources during a burst, metres: the detector's
  /// worst usable fix.
  package static let visitAccuracy = VisitDetector.maximumFixAccuracy

  /// Whether the app monitors visits.
  package var monitorsVisits: Bool { visitMonitoring != nil }

  /// What visit monitoring asks of the sources now.
  func visitDemand(_ duty: VisitDutyCycle) -> Double? {
    guard allowed else { return nil }
    return duty.isOn ? Self.visitAccuracy : cheapSourcesAccuracy
  }

  /// `startMonitoringVisits()`: monitoring on for the app; detection starts now when the app may
  /// have locations (a fresh cached location is not used: a visit needs fixes over time).
  mutating func startVisits(
    requester: ClientID?, at now: EngineInstant, into effects: inout [EngineEffect]
  ) {
    if !allowed, let requester { effects.append(.deliverError(requester, .denied)) }
    if visitMonitoring == nil {
      visitMonitoring = VisitDutyCycle()
      effects.append(.visitMonitoring(true))
    }
    resumeVisits(at: now, into: &effects)
  }

  /// Visit monitoring restored from the store before the engine handles its first event (no
  /// effects: detection starts with the first event, when the app may have locations).
  package mutating func restoreVisitMonitoring() {
    if visitMonitoring == nil { visitMonitoring = VisitDutyCycle() }
  }

  /// `stopMonitoringVisits()`.
  mutating func stopVisits(into effects: inout [EngineEffect]) {
    guard var duty = visitMonitoring else { return }
    _ = duty.stop()
    visitMonitoring = nil
    effects.append(.visitMonitoring(false))
    effects.append(.cancelTimer(.visitWake))
    effects.append(.cancelTimer(.visitGiveUp))
  }

  /// Starts detection if the app monitors visits, may have locations and is not detecting yet.
  mutating func resumeVisits(at now: EngineInstant, into effects: inout [EngineEffect]) {
    guard allowed, var duty = visitMonitoring, duty.start(at: now.monotonic) else { return }
    visitMonitoring = duty
    effects.append(
      .armTimer(.visitGiveUp, deadline: now.monotonic + Self.dutyTimeToFixLimit))
  }

  /// Authorization withdrawn: detection stops and forgets the stay under way; monitoring stays on.
  mutating func suspendVisits(into effects: inout [EngineEffect]) {
    guard var duty = visitMonitoring else { return }
    _ = duty.stop()
    visitMonitoring = duty
    effects.append(.cancelTimer(.visitWake))
    effects.append(.cancelTimer(.visitGiveUp))
  }

  /// A fix (already judged valid and allowed) for visit detection.
  mutating func visitFix(_ fix: Fix, at now: EngineInstant, into effects: inout [EngineEffect]) {
    guard var duty = visitMonitoring else { return }
    let action = duty.fix(fix, at: now.monotonic)
    visitMonitoring = duty
    for visit in action.visits { effects.append(.visit(reduced(visit))) }
    if let next = action.nextWake {
      effects.append(.cancelTimer(.visitGiveUp))
      effects.append(.armTimer(.visitWake, deadline: next))
    }
  }

  /// The wake timer fired: the source goes on for one usable fix.
  mutating func visitWake(at now: EngineInstant, into effects: inout [EngineEffect]) {
    guard var duty = visitMonitoring else { return }
    if duty.wake(at: now.monotonic) {
      effects.append(
        .armTimer(.visitGiveUp, deadline: now.monotonic + Self.dutyTimeToFixLimit))
    }
    visitMonitoring = duty
  }

  /// A burst gave no usable fix in time: off until the next wake.
  mutating func visitGiveUp(at now: EngineInstant, into effects: inout [EngineEffect]) {
    guard var duty = visitMonitoring else { return }
    let action = duty.giveUp(at: now.monotonic)
    visitMonitoring = duty
    if let next = action.nextWake { effects.append(.armTimer(.visitWake, deadline: next)) }
  }

  /// A visit as the app may see it: at the reduced position for reduced accuracy.
  private func reduced(_ visit: Visit) -> Visit {
    guard let reduction else { return visit }
    let fix = reduction.apply(
      Fix(
        latitude: visit.latitude, longitude: visit.longitude,
        horizontalAccuracy: visit.horizontalAccuracy, time: visit.arrival ?? visit.departure ?? 0))
    var result = visit
    result.latitude = fix.latitude
    result.longitude = fix.longitude
    result.horizontalAccuracy = fix.horizontalAccuracy
    return result
  }
}
