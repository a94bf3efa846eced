/// A migration recorded in the store.
public struct AppliedMigration: Sendable, Equatable {
  /// The migration's name.
  public var name: String
  /// When it was applied, seconds since 1970.
  public var applied: Double

  /// Creates a record.
  /// - Parameters:
  ///   - name: The migration's name.
  ///   - applied: Seconds since 1970.
  public init(name: String, applied: Double) {
    self.name = name
    self.applied = applied
  }
}
