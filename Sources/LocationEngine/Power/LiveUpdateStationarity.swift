import LocationModel

/// The stationary rule of live updates (`CLLocationUpdate.liveUpdates`): ``StationaryDetector``'s
/// table for the configuration's activity decides; when the device has stayed within the radius
/// for the dwell time, one update says `isStationary` and further ones are held back until the
/// device moves out of the radius; the next update then says it is moving again.
///
/// A value type, fed every delivered fix in order by the stream that owns it.
package struct LiveUpdateStationarity: Sendable, Equatable {
  /// What to do with one fix.
  package enum Decision: Sendable, Equatable {
    /// Deliver the fix, saying whether the device is stationary.
    case deliver(isStationary: Bool)
    /// Hold it back: the device is still stationary and was already said to be.
    case holdBack
  }

  private var detector: StationaryDetector

  /// Creates the rule for an activity.
  package init(activity: ActivityType) {
    detector = StationaryDetector(activity: activity)
  }

  /// Takes the next fix.
  package mutating func receive(_ fix: Fix) -> Decision {
    let was = detector.isStationary
    let now = detector.observe(fix)
    if was && now { return .holdBack }
    return .deliver(isStationary: now)
  }
}
