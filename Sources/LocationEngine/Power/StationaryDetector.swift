import Geodesy
import LocationModel

/// Decides whether the device is stationary: every fix of the last `dwell` seconds lies within
/// `radius` metres (widened by each fix's accuracy) of where the still period began.
///
/// The table, by activity (our rule; Apple publishes none):
///
/// | activity | radius | dwell |
/// | --- | --- | --- |
/// | other (default) | 50 m | 5 min |
/// | fitness | 25 m | 10 min |
/// | otherNavigation | 50 m | 30 min |
/// | automotiveNavigation | never stationary | |
/// | airborne | never stationary | |
///
/// Navigation in a car and flight never pause: a vehicle stopped at lights or a plane holding on a
/// taxiway must not lose its updates.
package struct StationaryDetector: Sendable, Equatable {
  /// The radius of "staying put", metres.
  package let radius: Double
  /// How long the device must stay within the radius, seconds; `.infinity`: never.
  package let dwell: Double

  private var anchor: Fix?
  private var anchorTime = 0.0
  /// Whether the last fix found the device stationary.
  package private(set) var isStationary = false

  /// Creates a detector with the table's figures for an activity.
  package init(activity: ActivityType) {
    switch activity {
    case .other: self.init(radius: 50, dwell: 300)
    case .fitness: self.init(radius: 25, dwell: 600)
    case .otherNavigation: self.init(radius: 50, dwell: 1800)
    case .automotiveNavigation, .airborne: self.init(radius: 0, dwell: .infinity)
    }
  }

  /// Creates a detector with explicit figures.
  package init(radius: Double, dwell: Double) {
    self.radius = radius
    self.dwell = dwell
  }

  /// Takes a fix (in time order); returns whether the device is now stationary.
  @discardableResult
  package mutating func observe(_ fix: Fix) -> Bool {
    guard fix.hasValidCoordinate, dwell.isFinite else {
      isStationary = false
      return false
    }
    if let anchor {
      let moved = Geodesic.wgs84.distance(
        latitude1: anchor.latitude, longitude1: anchor.longitude, latitude2: fix.latitude,
        longitude2: fix.longitude)
      if moved > radius + fix.horizontalAccuracy || fix.time < anchorTime {
        self.anchor = fix
        anchorTime = fix.time
      }
    } else {
      anchor = fix
      anchorTime = fix.time
    }
    isStationary = fix.time - anchorTime >= dwell
    return isStationary
  }
}
