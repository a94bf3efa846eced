/// An instant as the engine sees it: a monotonic reading for timers and filters, and a wall-clock
/// reading for comparing with fix timestamps. Both are seconds; the engine never reads a clock itself.
public struct EngineInstant: Sendable, Equatable {
  /// Monotonic seconds (any origin; only differences matter).
  public var monotonic: Double
  /// Wall-clock seconds since 1970-01-01T00:00:00Z.
  public var wall: Double

  /// Creates an instant.
  public init(monotonic: Double, wall: Double) {
    self.monotonic = monotonic
    self.wall = wall
  }

  /// The instant `seconds` later on both clocks.
  public func advanced(by seconds: Double) -> EngineInstant {
    EngineInstant(monotonic: monotonic + seconds, wall: wall + seconds)
  }
}
