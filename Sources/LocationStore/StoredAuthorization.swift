import LocationModel

/// An app's authorization as the store keeps it.
///
/// The store keeps the raw values, which are Apple's (`CLAuthorizationStatus`,
/// `CLAccuracyAuthorization`).
public struct StoredAuthorization: Sendable, Equatable {
  /// The status.
  public var status: AuthorizationStatus
  /// The accuracy.
  public var accuracy: AccuracyAuthorization
  /// Wall-clock time of the decision, seconds since 1970.
  public var updated: Double

  /// Creates an authorization record.
  /// - Parameters:
  ///   - status: The status.
  ///   - accuracy: The accuracy.
  ///   - updated: Seconds since 1970.
  public init(status: AuthorizationStatus, accuracy: AccuracyAuthorization, updated: Double) {
    self.status = status
    self.accuracy = accuracy
    self.updated = updated
  }
}
