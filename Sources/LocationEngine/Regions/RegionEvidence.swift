/// What one fix says about one region, by the project's region rule (README, "Behaviour beyond Apple's documentation", Regions).
///
/// A fix with centre distance `d` (geodesic, WGS-84) from a circle of radius `r`, horizontal
/// accuracy `a` and the region's hysteresis `h` is evidence of *inside* when `d <= r - max(a, h)`
/// and of *outside* when `d >= r + max(a, h)`; anything between is no evidence. A fix whose
/// accuracy is negative (an invalid coordinate) or not a number is no evidence.
package enum RegionEvidence: Sendable, Equatable, Hashable {
  /// The fix is evidence that the device is inside the circle.
  case inside
  /// The fix is evidence that the device is outside the circle.
  case outside
  /// The fix is too close to the boundary, or too inaccurate, to say.
  case none

  /// Applies the region rule to one distance.
  ///
  /// Rule: with `m = max(accuracy, hysteresis)`, inside when `distance <= radius - m`, outside when
  /// `distance >= radius + m`, otherwise none. A negative or NaN accuracy, or a NaN distance, is
  /// no evidence. With `m == 0` a fix exactly on the circle counts as inside.
  /// - Parameters:
  ///   - distance: Geodesic distance from the fix to the region's centre, metres.
  ///   - radius: The region's radius, metres.
  ///   - accuracy: The fix's horizontal accuracy (68 % radius), metres; negative means invalid.
  ///   - hysteresis: The region's hysteresis, metres (never negative for a valid region).
  /// - Returns: The evidence the fix gives about the region.
  package static func of(
    distance: Double, radius: Double, accuracy: Double, hysteresis: Double
  ) -> RegionEvidence {
    guard accuracy >= 0, !distance.isNaN else { return .none }
    let margin = max(accuracy, hysteresis)
    if distance <= radius - margin { return .inside }
    if distance >= radius + margin { return .outside }
    return .none
  }
}
