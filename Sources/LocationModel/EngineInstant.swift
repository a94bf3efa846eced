/// An instant as the engine sees it: a monotonic reading for timers and filters, and a wall-clock
/// reading for comparing with fix timestamps. Both are seconds; the engine never reads a clock itself.
package struct EngineInstant: Sendable, Equatable {
  /// Monotonic seconds (any origin; only differences matter).
  package var monotonic: Double
  /// Wall-clock seconds since 1970-01-01T00:00:00Z.
  package var wall: Double

  /// Creates an instant.
  package init(monotonic: Double, wall: Double) {
    self.monotonic = monotonic
    self.wall = wall
  }

  /// The instant `seconds` later on both clocks.
  package func advanced(by seconds: Double) -> EngineInstant {
    EngineInstant(monotonic: monotonic + seconds, wall: wall + seconds)
  }
}
