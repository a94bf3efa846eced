import Geodesy
import LocationModel

/// `pausesLocationUpdatesAutomatically` for one client, as a value-type state machine with time
/// passed in.
///
/// The rules (ours; Apple publishes none):
/// - While running, every fix is delivered and fed to a ``StationaryDetector`` built for the
///   client's activity type (the same table as `CLLocationUpdate.isStationary`). When the detector
///   finds the device stationary, the fix is delivered and the updates pause: the caller stops the
///   client's sources and calls `locationManagerDidPauseLocationUpdates(_:)`.
/// - While paused, a low-rate check runs: every ``checkPeriod`` (60 s) the source is started for
///   one fix. A fix farther from the fix that caused the pause than the detector's radius plus the
///   new fix's accuracy resumes updates: the caller restarts the sources, calls
///   `locationManagerDidResumeLocationUpdates(_:)` and delivers that fix. A check fix that has not
///   moved is not delivered; the source goes off until the next check.
/// - A device that starts walking (1.4 m/s) covers the default 50 m radius plus 5 m accuracy in
///   about 40 s, so it is seen moving by the first or second check: updates resume within
///   40 s + 60 s + the time to fix, under 2 minutes.
/// - Fixes that arrive while paused from sources kept on by someone else count as check fixes.
/// - `automotiveNavigation` and `airborne` never pause: their detector never finds the device
///   stationary.
///
/// Apple leaves resuming to the app after a pause; this engine resumes on movement, because a
/// Linux program has no location-triggered notification to relaunch it.
package struct AutoPause: Sendable, Equatable {
  /// The states.
  package enum State: Sendable, Equatable {
    /// Updates flow.
    case running
    /// Updates are paused at the anchor; the source is off until the check instant.
    case paused(anchor: Fix, checkAt: Double)
    /// Updates are paused at the anchor; the source is on for one check fix.
    case checking(anchor: Fix)
  }

  /// What the caller does after an event.
  package enum Action: Sendable, Equatable {
    /// Nothing.
    case none
    /// Deliver the fix.
    case deliver
    /// Deliver the fix, then stop the sources, tell the delegate updates paused, and arm the
    /// check timer for the given instant.
    case deliverAndPause(checkAt: Double)
    /// Start the source for one check fix; arm the check timer again for the given instant.
    case startCheck(nextCheckAt: Double)
    /// The check found no movement: turn the source off; the check timer is armed for the
    /// given instant.
    case stayPaused(checkAt: Double)
    /// Restart the sources, tell the delegate updates resumed, and deliver the fix.
    case resume
  }

  /// How often the source is started for one fix while paused, seconds.
  package static let checkPeriod = 60.0

  /// The activity type the detector was built for.
  package let activity: ActivityType
  /// The current state.
  package private(set) var state: State = .running
  private var detector: StationaryDetector

  /// Creates the machine, running, for an activity type.
  ///
  /// - Parameter activity: The client's activity type (`CLActivityType`).
  package init(activity: ActivityType) {
    self.activity = activity
    detector = StationaryDetector(activity: activity)
  }

  /// Whether updates are paused (sources stopped for this client).
  package var isPaused: Bool {
    switch state {
    case .running: return false
    case .paused, .checking: return true
    }
  }

  /// A fix arrived for this client.
  ///
  /// - Parameters:
  ///   - fix: The fix.
  ///   - time: The current instant, seconds on the caller's monotonic clock.
  /// - Returns: What to do with it.
  package mutating func fix(_ fix: Fix, at time: Double) -> Action {
    switch state {
    case .running:
      guard detector.observe(fix) else { return .deliver }
      let checkAt = time + Self.checkPeriod
      state = .paused(anchor: fix, checkAt: checkAt)
      return .deliverAndPause(checkAt: checkAt)
    case .paused(let anchor, _):
      if moved(from: anchor, to: fix) { return resume(with: fix) }
      return .none
    case .checking(let anchor):
      guard fix.hasValidCoordinate else { return .none }
      if moved(from: anchor, to: fix) { return resume(with: fix) }
      let checkAt = time + Self.checkPeriod
      state = .paused(anchor: anchor, checkAt: checkAt)
      return .stayPaused(checkAt: checkAt)
    }
  }

  /// The check timer fired.
  ///
  /// - Parameter time: The current instant, seconds.
  /// - Returns: ``Action/startCheck(nextCheckAt:)`` while paused (a check with no fix by the next
  ///   period keeps the source on and simply waits); ``Action/none`` otherwise.
  package mutating func check(at time: Double) -> Action {
    switch state {
    case .running:
      return .none
    case .paused(let anchor, let checkAt):
      guard time >= checkAt else { return .none }
      state = .checking(anchor: anchor)
      return .startCheck(nextCheckAt: time + Self.checkPeriod)
    case .checking:
      return .startCheck(nextCheckAt: time + Self.checkPeriod)
    }
  }

  /// The client restarted updates itself (`startUpdatingLocation()` again): running, with a
  /// fresh detector.
  package mutating func restart() {
    state = .running
    detector = StationaryDetector(activity: activity)
  }

  private func moved(from anchor: Fix, to fix: Fix) -> Bool {
    guard fix.hasValidCoordinate else { return false }
    let distance = Geodesic.wgs84.distance(
      latitude1: anchor.latitude, longitude1: anchor.longitude,
      latitude2: fix.latitude, longitude2: fix.longitude)
    return distance > detector.radius + fix.horizontalAccuracy
  }

  private mutating func resume(with fix: Fix) -> Action {
    state = .running
    detector = StationaryDetector(activity: activity)
    detector.observe(fix)
    return .resume
  }
}
