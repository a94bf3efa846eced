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
  /// Whether it is an "allow once", which ends with the app's last connection (and when the
  /// daemon starts).
  package var once: Bool

  /// Creates an authorization record.
  /// - Parameters:
  ///   - status: The status.
  ///   - accuracy: The accuracy.
  ///   - updated: Seconds since 1970.
  ///   - once: Whether it is an "allow once".
  package init(
    status: AuthorizationStatus, accuracy: AccuracyAuthorization, updated: Double,
    once: Bool = false
  ) {
    self.status = status
    self.accuracy = accuracy
    self.updated = updated
    self.once = once
  }
}
