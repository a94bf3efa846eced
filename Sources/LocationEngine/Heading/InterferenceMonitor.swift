import LocationModel

/// Watches the magnitude of the measured geomagnetic field and reports magnetic interference once
/// per episode: a value-type state machine (CONTRIBUTING.md, "How the code is written").
///
/// Rule (ours; Apple publishes none): a sample with all three raw components x, y, z has the
/// magnitude `m = sqrt(x² + y² + z²)` (microtesla). With an expected total intensity `F` from the
/// World Magnetic Model at the latest location and the sample's date:
///
/// | state | becomes disturbed when | becomes clear when |
/// | --- | --- | --- |
/// | with `F` | `abs(m - F) > 25 % of F` | `abs(m - F) <= 15 % of F` |
/// | without `F` | `m < 15 µT` or `m > 100 µT` | `20 µT <= m <= 80 µT` |
///
/// The Earth's field at the surface lies between about 22 µT and 67 µT (WMM technical report,
/// figure of F), so the fixed band flags only fields no place on Earth has. The gap between the
/// thresholds (hysteresis) keeps a field hovering at the edge from starting a new episode on every
/// sample. A sample without the three components leaves the state as it is.
///
/// An episode is reported once, when it begins (`.began`); the samples inside it are delivered
/// with a negative accuracy. The public layer maps the report to `CLError.headingFailure` and asks
/// the delegate `locationManagerShouldDisplayHeadingCalibration(_:)`.
package struct InterferenceMonitor: Sendable, Equatable {
  /// Whether the field is disturbed now.
  package enum State: Sendable, Equatable {
    /// The field looks like the Earth's.
    case clear
    /// An episode of interference is in progress (already reported).
    case disturbed
  }

  /// What one observation means.
  package enum Event: Sendable, Equatable {
    /// Nothing new (no components, or the state did not change).
    case none
    /// An episode began: report it.
    case began(HeadingInterference)
    /// The episode ended: the field looks like the Earth's again.
    case ended
  }

  /// Relative deviation from the model's intensity that starts an episode.
  package var enterRatio: Double = 0.25
  /// Relative deviation from the model's intensity at or below which an episode ends.
  package var leaveRatio: Double = 0.15
  /// Without a model intensity: magnitudes outside this band (µT) start an episode.
  package var enterBand: ClosedRange<Double> = 15...100
  /// Without a model intensity: magnitudes inside this band (µT) end an episode.
  package var leaveBand: ClosedRange<Double> = 20...80

  /// The current state.
  package private(set) var state: State = .clear

  /// Creates a monitor in the clear state with the default thresholds.
  package init() {}

  /// Observes one sample's field.
  ///
  /// - Parameters:
  ///   - magnitude: The measured magnitude in microtesla, or nil when the sample has no raw
  ///     components.
  ///   - expected: The model's total intensity at the location in microtesla, or nil when unknown.
  /// - Returns: Whether an episode began or ended.
  package mutating func observe(magnitude: Double?, expected: Double?) -> Event {
    guard let magnitude else { return .none }
    switch state {
    case .clear:
      guard isOutside(magnitude, expected) else { return .none }
      state = .disturbed
      return .began(HeadingInterference(measured: magnitude, expected: expected))
    case .disturbed:
      guard isBack(magnitude, expected) else { return .none }
      state = .clear
      return .ended
    }
  }

  /// Forgets an episode in progress (heading updates restarted).
  package mutating func reset() {
    state = .clear
  }

  private func isOutside(_ magnitude: Double, _ expected: Double?) -> Bool {
    if let expected, expected > 0 {
      return abs(magnitude - expected) > enterRatio * expected
    }
    return !enterBand.contains(magnitude)
  }

  private func isBack(_ magnitude: Double, _ expected: Double?) -> Bool {
    if let expected, expected > 0 {
      return abs(magnitude - expected) <= leaveRatio * expected
    }
    return leaveBand.contains(magnitude)
  }
}
