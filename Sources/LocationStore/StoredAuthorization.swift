import LocationModel

/// An app's authorization as the store keeps it.
///
/// The store keeps the raw values, which are Apple's (`CLAuthorizationStatus`,
/// `CLAccuracyAuthorization`).
package struct StoredAuthorization: Sendable, Equatable {
  /// The status.
  package var status: AuthorizationStatus
  /// The accuracy.
  package var accuracy: AccuracyAuthorization
  /// Wall-clock time of the decision, seconds since 1970.
  package var updated: Double

  /// Creates an authorization record.
  /// - Parameters:
  ///   - status: The status.
  ///   - accuracy: The accuracy.
  ///   - updated: Seconds since 1970.
  package init(status: AuthorizationStatus, accuracy: AccuracyAuthorization, updated: Double) {
    self.status = status
    self.accuracy = accuracy
    self.updated = updated
  }
}
