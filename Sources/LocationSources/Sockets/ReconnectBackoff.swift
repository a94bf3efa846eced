/// The delays between reconnection attempts: 0.5 s, doubling after each failed attempt, at most
/// 30 s; back to 0.5 s once a connection has delivered data.
struct ReconnectBackoff: Sendable, Equatable {
  /// The first delay, seconds.
  static let initial = 0.5
  /// The longest delay, seconds.
  static let maximum = 30.0

  private(set) var upcoming = Self.initial

  /// The delay before the next attempt; the one after it doubles.
  mutating func next() -> Double {
    defer { upcoming = min(upcoming * 2, Self.maximum) }
    return upcoming
  }

  /// Starts again from the first delay.
  mutating func reset() { upcoming = Self.initial }
}
