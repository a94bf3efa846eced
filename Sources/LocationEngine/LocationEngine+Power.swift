import Geodesy
import LocationModel

/// Power in the step function (issue 7): significant-change monitoring (`DutyCycle` over the
/// `SignificantChange` rule) and automatic pausing (`AutoPause`).
///
/// Which sources are switched off. Only high-power sources (`SourceInfo.power` 2, a GNSS
/// receiver) are duty-cycled or stopped on a pause. While the running sources are all cheap (a
/// static file, a recording, GeoClue), a paused client or a significant-change client keeps them
/// running: nothing is saved by stopping them, and the rules are applied to every fix instead
/// (a pause still stops deliveries and tells the delegate; significant change still delivers only
/// 500 m / 5 min changes).
///
/// Significant change asks the sources for `significantChangeAccuracy` (5 km), so the arbiter
/// runs a low-power source that meets it (GeoClue at neighbourhood level or finer, whose nominal
/// figure is 5 km; a static position) in preference to a receiver, and duty-cycles the receiver
/// when it is the only one.
extension LocationEngine {
  /// The accuracy significant-change monitoring asks of the sources, metres: GeoClue's
  /// neighbourhood level, the first below street level.
  package static let significantChangeAccuracy = 5000.0
  /// The time one duty-cycle burst may take to give a fix before the source goes off again and
  /// retries after the longest interval, seconds (a receiver's cold start takes up to about 30 s;
  /// two minutes leaves room for a weak sky).
  package static let dutyTimeToFixLimit = 120.0

  /// The accuracy that keeps the running location sources as they are, when they are all cheap
  /// (and at least one runs): the best nominal accuracy among them. A paused client, or a
  /// significant-change client between bursts, asks for this and nothing better, so it keeps a
  /// cheap source running without ever recalling a receiver (the arbiter prefers the cheapest
  /// source that meets a demand, and the running cheap source meets its own figure). Nil while a
  /// high-power source runs or none does. Sources that give no locations (a compass) do not count.
  var cheapSourcesAccuracy: Double? {
    var best: Double?
    for source in sources where source.producesLocation {
      guard source.power < SourceInfo.highPower else { return nil }
      best = min(best ?? .infinity, source.nominalAccuracy)
    }
    return best
  }

  /// What a client's updates ask of the sources now: its accuracy while running or checking;
  /// while paused between checks, only to keep cheap sources running (`cheapSourcesAccuracy`).
  func updatesDemand(_ client: ClientID, _ request: UpdateRequest) -> Double? {
    guard let pause = autoPauses[client], case .paused = pause.state else {
      return request.desiredAccuracy
    }
    return cheapSourcesAccuracy
  }

  /// What a significant-change client asks of the sources now: `significantChangeAccuracy` during
  /// a burst; between bursts, only to keep cheap sources running.
  func significantChangeDemand(_ duty: DutyCycle) -> Double? {
    if case .on = duty.state { return Self.significantChangeAccuracy }
    return cheapSourcesAccuracy
  }

  /// Whether a significant-change client is monitoring, with location authorization (a hub then
  /// keeps its receiver on for a Wi-Fi scan to learn from: `LocationHub.learningHold`).
  package var monitorsSignificantChanges: Bool { allowed && !dutyCycles.isEmpty }

  /// Whether a client's updates are paused.
  package func isPaused(_ client: ClientID) -> Bool { autoPauses[client]?.isPaused ?? false }

  // MARK: Auto-pause

  /// Sets up (or clears) a client's auto-pause when its updates start or its request changes;
  /// a client that was paused resumes.
  mutating func configurePause(
    _ client: ClientID, _ request: UpdateRequest?, into effects: inout [EngineEffect]
  ) {
    let existing = autoPauses[client]
    if let request, request.pausesAutomatically,
      request.activity != .automotiveNavigation, request.activity != .airborne
    {
      if let existing, existing.activity == request.activity, !existing.isPaused { return }
      autoPauses[client] = AutoPause(activity: request.activity)
    } else {
      autoPauses[client] = nil
    }
    if existing?.isPaused == true {
      effects.append(.cancelTimer(.pauseCheck(client)))
      if request != nil { effects.append(.resumeUpdates(client)) }
    }
  }

  /// A fix for a streaming client with auto-pause: returns what to do with the session's action
  /// (false: the fix is not delivered, the client is paused).
  mutating func pauseAllows(
    _ fix: Fix, _ client: ClientID, at now: EngineInstant, into effects: inout [EngineEffect]
  ) -> PauseDecision {
    guard var pause = autoPauses[client] else { return .deliver }
    let action = pause.fix(fix, at: now.monotonic)
    autoPauses[client] = pause
    switch action {
    case .deliver, .startCheck:
      return .deliver
    case .deliverAndPause(let checkAt):
      return .deliverThenPause(checkAt: checkAt)
    case .none:
      return .hold
    case .stayPaused(let checkAt):
      effects.append(.armTimer(.pauseCheck(client), deadline: checkAt))
      return .hold
    case .resume:
      effects.append(.cancelTimer(.pauseCheck(client)))
      effects.append(.resumeUpdates(client))
      return .deliver
    }
  }

  /// What auto-pause says about one fix for one client.
  enum PauseDecision {
    case deliver
    case deliverThenPause(checkAt: Double)
    case hold
  }

  /// The client's updates pause: held deferred locations are delivered and the deferral ends
  /// (`deferredCanceled`), the delegate is told, and the check timer is armed.
  mutating func pause(_ client: ClientID, checkAt: Double, into effects: inout [EngineEffect]) {
    finishDeferral(client, deferrals[client]?.stopUpdating(), into: &effects)
    effects.append(.pauseUpdates(client))
    effects.append(.armTimer(.pauseCheck(client), deadline: checkAt))
  }

  /// The check timer fired: the source runs for one check fix.
  mutating func pauseCheck(
    _ client: ClientID, at now: EngineInstant, into effects: inout [EngineEffect]
  ) {
    guard var pause = autoPauses[client] else { return }
    let action = pause.check(at: now.monotonic)
    autoPauses[client] = pause
    if case .startCheck(let next) = action {
      effects.append(.armTimer(.pauseCheck(client), deadline: next))
    }
  }

  /// Forgets a client's auto-pause (updates stopped, client gone, authorization withdrawn).
  mutating func clearPause(_ client: ClientID, into effects: inout [EngineEffect]) {
    if autoPauses.removeValue(forKey: client)?.isPaused == true {
      effects.append(.cancelTimer(.pauseCheck(client)))
    }
  }

  // MARK: Significant change

  /// `startMonitoringSignificantLocationChanges()`: the source goes on for a first fix (a fresh
  /// cached location counts as it, delivered at once).
  mutating func startSignificantChanges(
    _ client: ClientID, at now: EngineInstant, into effects: inout [EngineEffect]
  ) {
    guard allowed else {
      effects.append(.deliverError(client, .denied))
      return
    }
    guard dutyCycles[client] == nil else { return }
    var duty = DutyCycle()
    _ = duty.start(at: now.monotonic)
    effects.append(
      .armTimer(.dutyGiveUp(client), deadline: now.monotonic + Self.dutyTimeToFixLimit))
    dutyCycles[client] = duty
    if let cached = freshCachedFix(at: now) {
      significantFix(cached, client, at: now, into: &effects)
    }
  }

  /// `stopMonitoringSignificantLocationChanges()`.
  mutating func stopSignificantChanges(_ client: ClientID, into effects: inout [EngineEffect]) {
    guard var duty = dutyCycles.removeValue(forKey: client) else { return }
    _ = duty.stop()
    effects.append(.cancelTimer(.dutyWake(client)))
    effects.append(.cancelTimer(.dutyGiveUp(client)))
  }

  /// A fix for a significant-change client; `streamed` says its updates delivered this fix
  /// already (a manager running both services gets each location once).
  mutating func significantFix(
    _ fix: Fix, _ client: ClientID, streamed: Bool = false, at now: EngineInstant,
    into effects: inout [EngineEffect]
  ) {
    guard var duty = dutyCycles[client] else { return }
    let action = duty.fix(fix, at: now.monotonic)
    dutyCycles[client] = duty
    if action.deliver, !streamed { effects.append(.deliverLocations(client, [fix])) }
    if let next = action.nextWake {
      effects.append(.cancelTimer(.dutyGiveUp(client)))
      effects.append(.armTimer(.dutyWake(client), deadline: next))
    }
  }

  /// The wake timer fired: the source goes on for one fix.
  mutating func dutyWake(
    _ client: ClientID, at now: EngineInstant, into effects: inout [EngineEffect]
  ) {
    guard var duty = dutyCycles[client] else { return }
    if duty.wake(at: now.monotonic) {
      effects.append(
        .armTimer(.dutyGiveUp(client), deadline: now.monotonic + Self.dutyTimeToFixLimit))
    }
    dutyCycles[client] = duty
  }

  /// A burst gave no fix in time: off until the longest interval has passed.
  mutating func dutyGiveUp(
    _ client: ClientID, at now: EngineInstant, into effects: inout [EngineEffect]
  ) {
    guard var duty = dutyCycles[client] else { return }
    let action = duty.giveUp(at: now.monotonic)
    dutyCycles[client] = duty
    if let next = action.nextWake { effects.append(.armTimer(.dutyWake(client), deadline: next)) }
  }

  /// Authorization withdrawn, the sources refused the app, or every source ended: significant-change
  /// clients are told (`denied`, or `sourcesEnded`) and monitoring stops, as updates do.
  mutating func endSignificantChanges(with error: EngineError, into effects: inout [EngineEffect]) {
    for client in dutyCycles.keys.sorted() {
      stopSignificantChanges(client, into: &effects)
      effects.append(.deliverError(client, error))
    }
  }
}
