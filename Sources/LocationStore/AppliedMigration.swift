/// A migration recorded in the store.
package struct AppliedMigration: Sendable, Equatable {
  /// The migration's name.
  package var name: String
  /// When it was applied, seconds since 1970.
  package var applied: Double

  /// Creates a record.
  /// - Parameters:
  ///   - name: The migration's name.
  ///   - applied: Seconds since 1970.
  package init(name: String, applied: Double) {
    self.name = name
    self.applied = applied
  }
}
