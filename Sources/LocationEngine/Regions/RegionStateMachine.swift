import LocationModel

/// The state of one monitored region, as a value type that turns evidence into actions.
///
/// Rule (README, "Behaviour beyond Apple's documentation", Regions): the first decisive fix of a region whose state is unknown sets the
/// state and reports a determination only (no enter or exit). Later changes of state report an
/// enter or an exit (the caller adds the determination that goes with it). A region restored with a
/// persisted state starts in that state, so a decisive fix of the other state is a transition: the
/// crossing that happened while nobody was watching. Evidence that agrees with the current state,
/// and no evidence, change nothing.
package struct RegionStateMachine: Sendable, Equatable, Hashable {
  /// What the caller must report after a fix.
  package enum Action: Sendable, Equatable, Hashable {
    /// Nothing changed.
    case none
    /// The first decisive fix set the state (from unknown); report a determination only.
    case determine(RegionState)
    /// The state changed from outside to inside: report an entry and a determination of inside.
    case enter
    /// The state changed from inside to outside: report an exit and a determination of outside.
    case exit
  }

  /// The current state.
  package private(set) var state: RegionState

  /// Creates a machine in a state: `.unknown` for a new region, the persisted state for a restored one.
  /// - Parameter state: The starting state.
  package init(state: RegionState = .unknown) {
    self.state = state
  }

  /// Feeds the evidence of one fix and returns what to report.
  /// - Parameter evidence: What the fix says about the region (`RegionEvidence.of`).
  /// - Returns: The action the caller reports; `.none` when the state did not change.
  package mutating func observe(_ evidence: RegionEvidence) -> Action {
    switch state {
    case .unknown:
      switch evidence {
      case .inside:
        state = .inside
        return .determine(.inside)
      case .outside:
        state = .outside
        return .determine(.outside)
      case .none:
        return .none
      }
    case .inside:
      switch evidence {
      case .outside:
        state = .outside
        return .exit
      case .inside, .none:
        return .none
      }
    case .outside:
      switch evidence {
      case .inside:
        state = .inside
        return .enter
      case .outside, .none:
        return .none
      }
    }
  }
}
