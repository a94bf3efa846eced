/// Where the device is relative to a monitored region: the engine's copy of Apple's `CLRegionState`.
///
/// The raw values match `CLRegionState` (`unknown` 0, `inside` 1, `outside` 2), so the public layer
/// maps it with `CLRegionState(rawValue:)` and the store persists the raw value.
package enum RegionState: Int, Sendable, Equatable, Hashable, CaseIterable {
  /// No decisive fix yet (and no persisted state).
  case unknown = 0
  /// The last decisive fix was evidence of inside.
  case inside = 1
  /// The last decisive fix was evidence of outside.
  case outside = 2
}
