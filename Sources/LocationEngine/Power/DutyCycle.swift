import Geodesy
import LocationModel

/// Runs a high-power source (a GNSS receiver) for significant-change monitoring in short bursts:
/// on until it gives one fix, then off until the next scheduled wake.
///
/// The schedule (our rule; Apple publishes none). After a fix at instant `t` with speed `v`:
///
///     interval = clamp(0.5 × 500 m / max(v, 0.5 m/s), 60 s, 300 s)
///     nextWake = max(t + interval, lastDelivery + 300 s)
///
/// - `500 m / v` is the time the device needs to cover the significant distance at its present
///   speed; waking at half of it samples that distance at least twice, so a device that keeps its
///   speed is seen soon after it crosses 500 m.
/// - The floor of 0.5 m/s (walking pace is about 1.4 m/s) and the cap of 300 s keep a stationary or
///   slow device checked every 5 minutes; the 60 s minimum bounds the wakes of a fast one.
/// - Waking before `lastDelivery + 300 s` is useless (``SignificantChange`` delivers nothing
///   sooner), so the next wake is never earlier than that.
/// - `v` is the fix's speed; when the fix has none, the speed between the last two fixes.
///
/// Lateness bound. Let `T*` be the ideal delivery instant: the first instant at least 300 s after
/// the last delivery at which the device is at least 500 m from it. Every wake comes at most 300 s
/// after the previous fix, and no later than `max(previousFix + 300 s, lastDelivery + 300 s)`; the
/// previous fix came before `T*` and `lastDelivery + 300 s ≤ T*`, so the first wake after `T*` is
/// at most 300 s after it, and its fix follows one fix interval (the source's time to fix) later.
/// A device still 500 m away then is delivered no later than `T* + 300 s + time to fix`.
///
/// On-time is one time-to-fix per wake: with a hot-start receiver (a few seconds) and wakes every
/// 60–300 s, the source is on for a few per cent of the time.
package struct DutyCycle: Sendable, Equatable {
  /// The states of the source.
  package enum State: Sendable, Equatable {
    /// Monitoring is off.
    case stopped
    /// The source is on, waiting for a fix, since the given instant.
    case on(since: Double)
    /// The source is off until the given instant.
    case off(wakeAt: Double)

    /// Whether the source is on for a burst.
    package var isOn: Bool {
      if case .on = self { return true }
      return false
    }

    /// The wake timer fired at `time`: an off source whose wake is due goes on.
    /// - Returns: True when the source must be turned on.
    package mutating func wake(at time: Double) -> Bool {
      guard case .off(let wakeAt) = self, time >= wakeAt else { return false }
      self = .on(since: time)
      return true
    }
  }

  /// What to do after a fix.
  package struct Action: Sendable, Equatable {
    /// Deliver the fix to the client (the significant-change rule passed it).
    package var deliver: Bool
    /// Turn the source off.
    package var sourceOff: Bool
    /// Arm the wake timer for this instant (then call ``DutyCycle/wake(at:)``); nil: leave it.
    package var nextWake: Double?

    /// Creates an action.
    package init(deliver: Bool, sourceOff: Bool, nextWake: Double?) {
      self.deliver = deliver
      self.sourceOff = sourceOff
      self.nextWake = nextWake
    }
  }

  /// The shortest interval between wakes, seconds.
  package static let minimumInterval = 60.0
  /// The longest interval between wakes, seconds.
  package static let maximumInterval = 300.0
  /// The speed below which the device counts as slow, metres per second.
  package static let minimumSpeed = 0.5

  /// The current state.
  package private(set) var state: State = .stopped
  /// The delivery rule.
  package private(set) var rule = SignificantChange()
  private var previousFix: Fix?
  private var previousTime = 0.0

  /// Creates a stopped duty cycle.
  package init() {}

  /// The wake interval for a speed, seconds: `clamp(0.5 × 500 / max(speed, 0.5), 60, 300)`.
  ///
  /// - Parameter speed: Metres per second; negative or NaN (unknown) counts as slow.
  /// - Returns: The interval in seconds.
  package static func interval(speed: Double) -> Double {
    let v = speed.isNaN ? minimumSpeed : max(speed, minimumSpeed)
    return min(max(0.5 * SignificantChange.minimumDistance / v, minimumInterval), maximumInterval)
  }

  /// Starts monitoring (`startMonitoringSignificantLocationChanges()`): the source goes on at once.
  ///
  /// - Parameter time: The current instant, seconds.
  /// - Returns: True when the source must be turned on (false when already monitoring).
  package mutating func start(at time: Double) -> Bool {
    switch state {
    case .stopped:
      state = .on(since: time)
      return true
    case .on, .off:
      return false
    }
  }

  /// Stops monitoring; the next ``start(at:)`` delivers its first fix at once.
  ///
  /// - Returns: True when the source was on and must be turned off.
  package mutating func stop() -> Bool {
    let wasOn: Bool
    switch state {
    case .on: wasOn = true
    case .stopped, .off: wasOn = false
    }
    state = .stopped
    rule.reset()
    previousFix = nil
    return wasOn
  }

  /// The wake timer fired.
  ///
  /// - Parameter time: The current instant, seconds.
  /// - Returns: True when the source must be turned on.
  package mutating func wake(at time: Double) -> Bool { state.wake(at: time) }

  /// A fix arrived.
  ///
  /// While the source is on, the fix ends the burst: the source goes off and the next wake is
  /// scheduled. While it is off (a fix from a source kept on by someone else), the fix is only
  /// judged for delivery.
  ///
  /// - Parameters:
  ///   - fix: The fix.
  ///   - time: The current instant, seconds.
  /// - Returns: Whether to deliver, whether to turn the source off, and when to wake.
  package mutating func fix(_ fix: Fix, at time: Double) -> Action {
    switch state {
    case .stopped:
      return Action(deliver: false, sourceOff: false, nextWake: nil)
    case .off:
      let deliver = rule.receive(fix, at: time)
      remember(fix, at: time)
      return Action(deliver: deliver, sourceOff: false, nextWake: nil)
    case .on:
      guard fix.hasValidCoordinate else {
        return Action(deliver: false, sourceOff: false, nextWake: nil)
      }
      let deliver = rule.receive(fix, at: time)
      let speed = speedEstimate(fix, at: time)
      remember(fix, at: time)
      var next = time + Self.interval(speed: speed)
      if let earliest = rule.earliestNextDelivery { next = max(next, earliest) }
      state = .off(wakeAt: next)
      return Action(deliver: deliver, sourceOff: true, nextWake: next)
    }
  }

  /// The source gave no fix in the time the caller allows for one (its own time-to-fix limit):
  /// the source goes off and tries again after the longest interval.
  ///
  /// - Parameter time: The current instant, seconds.
  /// - Returns: The action (never a delivery).
  package mutating func giveUp(at time: Double) -> Action {
    switch state {
    case .stopped, .off:
      return Action(deliver: false, sourceOff: false, nextWake: nil)
    case .on:
      let next = time + Self.maximumInterval
      state = .off(wakeAt: next)
      return Action(deliver: false, sourceOff: true, nextWake: next)
    }
  }

  private func speedEstimate(_ fix: Fix, at time: Double) -> Double {
    if fix.speed >= 0 { return fix.speed }
    guard let previousFix, time > previousTime else { return -1 }
    let moved = Geodesic.wgs84.distance(
      latitude1: previousFix.latitude, longitude1: previousFix.longitude,
      latitude2: fix.latitude, longitude2: fix.longitude)
    return moved / (time - previousTime)
  }

  private mutating func remember(_ fix: Fix, at time: Double) {
    guard fix.hasValidCoordinate else { return }
    previousFix = fix
    previousTime = time
  }

}
