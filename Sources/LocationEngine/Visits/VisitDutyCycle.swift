import LocationModel

/// Runs a high-power source (a GNSS receiver) for visit monitoring in short bursts, as
/// ``DutyCycle`` does for significant change: on until it gives one fix the ``VisitDetector`` can
/// use, then off until the next wake. Fixes from sources kept running by someone else (cheap
/// sources, another client's updates) are judged all the same.
///
/// The schedule (our rule; Apple publishes none). After a usable fix at instant `t`:
///
///     nextWake = t + stayingInterval     (180 s) while a visit is under way and no fix lies outside
///     nextWake = t + departureConfirmation (60 s) while fixes outside wait for confirmation
///     nextWake = t + movingInterval      (60 s) otherwise (moving, or a stay not yet 10 minutes long)
///
/// - Arrivals: while moving, a fix comes at least every `60 s + time to fix`, so the first fix
///   inside a new place (the arrival) is at most that late, and a stay of 10 minutes is recognised
///   within one more interval.
/// - Departures: while staying, a fix comes every `180 s + time to fix`; the last fix inside (the
///   departure date) is at most that much before the true departure, and the departure is
///   confirmed by the second fix outside, 60 s after the first.
/// - A burst that gives no usable fix within the caller's limit (`dutyTimeToFixLimit`, a weak sky,
///   a device indoors) goes off and tries again after the interval of the current phase.
///
/// With a hot-start receiver (about 5 s to a fix) the receiver is on for about 5 s in 185 s (2.7 %)
/// while staying, and 5 s in 65 s (8 %) while moving.
package struct VisitDutyCycle: Sendable, Equatable {
  /// The states of the source: significant change's (stopped, on waiting for a usable fix, off
  /// until a wake).
  package typealias State = DutyCycle.State

  /// What to do after a fix.
  package struct Action: Sendable, Equatable {
    /// The visit events the fix completed.
    package var visits: [Visit]
    /// Turn the source off.
    package var sourceOff: Bool
    /// Arm the wake timer for this instant; nil: leave it.
    package var nextWake: Double?

    /// Creates an action.
    package init(visits: [Visit] = [], sourceOff: Bool = false, nextWake: Double? = nil) {
      self.visits = visits
      self.sourceOff = sourceOff
      self.nextWake = nextWake
    }
  }

  /// Seconds between wakes while moving or gathering evidence of a stay.
  package static let movingInterval = 60.0
  /// Seconds between wakes while a visit is under way.
  package static let stayingInterval = 180.0

  /// The current state.
  package private(set) var state: State = .stopped
  /// The detection rule.
  package private(set) var detector = VisitDetector()

  /// Creates a stopped duty cycle.
  package init() {}

  /// The wait before the next wake in the detector's present phase, seconds.
  package var interval: Double {
    if detector.departurePending { return VisitDetector.departureConfirmation }
    switch detector.phase {
    case .staying: return Self.stayingInterval
    case .searching, .gathering: return Self.movingInterval
    }
  }

  /// Whether the source is on for a burst.
  package var isOn: Bool { state.isOn }

  /// Starts monitoring: the source goes on at once and the detector starts afresh.
  /// - Parameter time: The current instant, seconds.
  /// - Returns: True when the source must be turned on (false when already monitoring).
  package mutating func start(at time: Double) -> Bool {
    switch state {
    case .stopped:
      detector.reset()
      state = .on(since: time)
      return true
    case .on, .off:
      return false
    }
  }

  /// Stops monitoring and forgets the detector's state.
  /// - Returns: True when the source was on and must be turned off.
  package mutating func stop() -> Bool {
    let wasOn = isOn
    state = .stopped
    detector.reset()
    return wasOn
  }

  /// The wake timer fired.
  /// - Parameter time: The current instant, seconds.
  /// - Returns: True when the source must be turned on.
  package mutating func wake(at time: Double) -> Bool { state.wake(at: time) }

  /// A fix arrived. While the source is on, a usable fix ends the burst and schedules the next.
  /// - Parameters:
  ///   - fix: The fix.
  ///   - time: The current instant, seconds.
  /// - Returns: The visits it completed, and what to do with the source.
  package mutating func fix(_ fix: Fix, at time: Double) -> Action {
    switch state {
    case .stopped:
      return Action()
    case .off:
      return Action(visits: detector.receive(fix))
    case .on:
      let visits = detector.receive(fix)
      guard VisitDetector.isUsable(fix) else { return Action(visits: visits) }
      let next = time + interval
      state = .off(wakeAt: next)
      return Action(visits: visits, sourceOff: true, nextWake: next)
    }
  }

  /// The burst gave no usable fix in the time allowed: off until the present phase's interval
  /// has passed.
  /// - Parameter time: The current instant, seconds.
  /// - Returns: The action (never a visit).
  package mutating func giveUp(at time: Double) -> Action {
    switch state {
    case .stopped, .off:
      return Action()
    case .on:
      let next = time + interval
      state = .off(wakeAt: next)
      return Action(sourceOff: true, nextWake: next)
    }
  }
}
