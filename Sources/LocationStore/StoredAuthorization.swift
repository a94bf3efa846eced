/// An app's authorization as the store keeps it.
///
/// The raw values are Apple's, so the store has no dependency on the `CoreLocation` target.
public struct StoredAuthorization: Sendable, Equatable {
  /// `CLAuthorizationStatus.rawValue` (0 notDetermined, 1 restricted, 2 denied, 3 authorizedAlways,
  /// 4 authorizedWhenInUse).
  public var status: Int32
  /// `CLAccuracyAuthorization.rawValue` (0 fullAccuracy, 1 reducedAccuracy).
  public var accuracy: Int
  /// Wall-clock time of the decision, seconds since 1970.
  public var updated: Double

  /// Creates an authorization record.
  /// - Parameters:
  ///   - status: `CLAuthorizationStatus.rawValue`.
  ///   - accuracy: `CLAccuracyAuthorization.rawValue`.
  ///   - updated: Seconds since 1970.
  public init(status: Int32, accuracy: Int, updated: Double) {
    self.status = status
    self.accuracy = accuracy
    self.updated = updated
  }
}
