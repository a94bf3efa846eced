import Geodesy
import LocationModel

/// The delivery rule of `startMonitoringSignificantLocationChanges()`, as a value-type state
/// machine with time passed in.
///
/// The rule (Apple: "Apps can expect a notification as soon as the device moves 500 meters or more
/// from its previous notification. It should not expect notifications more frequently than once
/// every five minutes."):
/// - the first valid fix after ``reset()`` (or creation) is delivered at once;
/// - a later fix is delivered only when it lies at least ``minimumDistance`` (500 m, geodesic on
///   WGS-84) from the last *delivered* fix **and** at least ``minimumInterval`` (300 s) has passed
///   since that delivery;
/// - `distanceFilter` and `desiredAccuracy` do not apply (Apple: the service "does not rely on the
///   value in the distanceFilter property");
/// - fixes without a valid coordinate are never delivered.
package struct SignificantChange: Sendable, Equatable {
  /// The distance from the last delivered fix that makes a change significant, metres.
  package static let minimumDistance = 500.0
  /// The least time between two deliveries, seconds.
  package static let minimumInterval = 300.0

  /// The last fix delivered, if any.
  package private(set) var lastDelivered: Fix?
  /// The instant (the caller's clock, seconds) of the last delivery.
  package private(set) var lastDeliveryTime: Double?

  /// Creates the rule with nothing delivered yet.
  package init() {}

  /// The earliest instant at which another fix may be delivered; nil before the first delivery.
  package var earliestNextDelivery: Double? {
    lastDeliveryTime.map { $0 + Self.minimumInterval }
  }

  /// Takes a fix; returns whether to deliver it.
  ///
  /// - Parameters:
  ///   - fix: The fix from any running source.
  ///   - time: The current instant, seconds on the caller's monotonic clock.
  /// - Returns: True when the fix is delivered (it becomes the new reference).
  package mutating func receive(_ fix: Fix, at time: Double) -> Bool {
    guard fix.hasValidCoordinate, time.isFinite else { return false }
    guard let last = lastDelivered, let lastTime = lastDeliveryTime else {
      deliver(fix, at: time)
      return true
    }
    guard time - lastTime >= Self.minimumInterval else { return false }
    let moved = Geodesic.wgs84.distance(
      latitude1: last.latitude, longitude1: last.longitude,
      latitude2: fix.latitude, longitude2: fix.longitude)
    guard moved >= Self.minimumDistance else { return false }
    deliver(fix, at: time)
    return true
  }

  /// Forgets the last delivery (`stopMonitoringSignificantLocationChanges()`): Apple says a new
  /// initial event is sent the next time monitoring starts.
  package mutating func reset() {
    lastDelivered = nil
    lastDeliveryTime = nil
  }

  private mutating func deliver(_ fix: Fix, at time: Double) {
    lastDelivered = fix
    lastDeliveryTime = time
  }
}
