import Foundation

/// A Core Location error: a code in the domain ``kCLErrorDomain`` and a user-info dictionary.
///
/// Catch it by type (`catch let error as CLError`) or by code (`catch CLError.denied`). It bridges
/// to `NSError` (`error as NSError`) with domain `kCLErrorDomain`, the code's raw value and the
/// user info. Two errors are equal when their codes are equal and their user-info dictionaries
/// have the same keys with equal hashable values.
public struct CLError: CustomNSError, Hashable, Error {
  /// The error as Foundation sees it; `NSError` is immutable and `Sendable`.
  private let storage: NSError

  /// Creates an error with a code and an optional user-info dictionary.
  ///
  /// - Parameters:
  ///   - code: The error code.
  ///   - userInfo: Additional information, such as ``kCLErrorUserInfoAlternateRegionKey``.
  public init(_ code: Code, userInfo: [String: Any] = [:]) {
    self.storage = NSError(domain: kCLErrorDomain, code: code.rawValue, userInfo: userInfo)
  }

  /// The error domain, ``kCLErrorDomain``.
  public static var errorDomain: String { kCLErrorDomain }

  /// The error code.
  public var code: Code {
    // Every CLError is made from a Code, so the raw value always maps back.
    Code(rawValue: storage.code) ?? .locationUnknown
  }

  /// The code's raw value, as `NSError.code`.
  public var errorCode: Int { storage.code }

  /// The user-info dictionary, as `NSError.userInfo`.
  public var errorUserInfo: [String: Any] { storage.userInfo }

  /// The user-info dictionary.
  public var userInfo: [String: Any] { storage.userInfo }

  /// A region that location services can monitor more effectively; set only for errors with code
  /// ``Code/regionMonitoringResponseDelayed``.
  public var alternateRegion: CLRegion? {
    storage.userInfo[kCLErrorUserInfoAlternateRegionKey] as? CLRegion
  }

  /// Hashes the code (equal errors have equal codes).
  ///
  /// - Parameter hasher: The hasher to feed.
  public func hash(into hasher: inout Hasher) {
    hasher.combine(code)
  }

  /// Returns whether two errors have the same code and equal user-info dictionaries.
  ///
  /// - Parameters:
  ///   - lhs: An error.
  ///   - rhs: Another error.
  /// - Returns: `true` when code and user info are equal.
  public static func == (lhs: CLError, rhs: CLError) -> Bool {
    let left = lhs.storage.userInfo
    let right = rhs.storage.userInfo
    guard lhs.storage.code == rhs.storage.code, left.count == right.count else { return false }
    return left.allSatisfy { key, value in
      right[key].map { CLError.userInfoValue(value, equals: $0) } ?? false
    }
  }

  /// Compares two user-info values: as `AnyHashable` when both are hashable (strings, numbers,
  /// `NSObject`s such as regions), otherwise they are not equal.
  private static func userInfoValue(_ a: Any, equals b: Any) -> Bool {
    guard let a = a as? AnyHashable, let b = b as? AnyHashable else { return false }
    return a == b
  }
}

extension CLError {
  /// Error codes in the domain ``kCLErrorDomain``, with Apple's raw values.
  public enum Code: Int, Sendable {
    /// The location is unknown right now; Core Location keeps trying.
    case locationUnknown = 0
    /// The user denied access to location services, or they are off.
    case denied = 1
    /// The network was unavailable or a network error occurred.
    case network = 2
    /// The heading could not be determined.
    case headingFailure = 3
    /// The user denied access to region monitoring.
    case regionMonitoringDenied = 4
    /// A registered region cannot be monitored.
    case regionMonitoringFailure = 5
    /// Core Location could not initialize region monitoring immediately.
    case regionMonitoringSetupDelayed = 6
    /// Region events will be delivered, but late.
    case regionMonitoringResponseDelayed = 7
    /// A geocode request yielded no result.
    case geocodeFoundNoResult = 8
    /// A geocode request yielded a partial result.
    case geocodeFoundPartialResult = 9
    /// A geocode request was canceled.
    case geocodeCanceled = 10
    /// Deferred mode failed for an unknown reason.
    case deferredFailed = 11
    /// Deferred mode failed because location updates were disabled or paused.
    case deferredNotUpdatingLocation = 12
    /// Deferred mode is not supported for the requested accuracy.
    case deferredAccuracyTooLow = 13
    /// Deferred mode does not support distance filters.
    case deferredDistanceFiltered = 14
    /// The request for deferred updates was canceled.
    case deferredCanceled = 15
    /// Ranging is disabled.
    case rangingUnavailable = 16
    /// A general ranging error occurred.
    case rangingFailure = 17
    /// The user did not grant the requested temporary authorization.
    case promptDeclined = 18
    /// Historical locations could not be delivered.
    case historicalLocationError = 19

    /// Matches an error against a code, so that `catch CLError.denied` works.
    ///
    /// - Parameters:
    ///   - match: The code to look for.
    ///   - error: The error thrown.
    /// - Returns: `true` when `error` is a ``CLError`` with code `match`.
    public static func ~= (match: Code, error: any Error) -> Bool {
      guard let error = error as? CLError else { return false }
      return error.code == match
    }
  }

  /// The location is unknown right now; Core Location keeps trying.
  public static var locationUnknown: Code { .locationUnknown }
  /// The user denied access to location services, or they are off.
  public static var denied: Code { .denied }
  /// The network was unavailable or a network error occurred.
  public static var network: Code { .network }
  /// The heading could not be determined.
  public static var headingFailure: Code { .headingFailure }
  /// The user denied access to region monitoring.
  public static var regionMonitoringDenied: Code { .regionMonitoringDenied }
  /// A registered region cannot be monitored.
  public static var regionMonitoringFailure: Code { .regionMonitoringFailure }
  /// Core Location could not initialize region monitoring immediately.
  public static var regionMonitoringSetupDelayed: Code { .regionMonitoringSetupDelayed }
  /// Region events will be delivered, but late.
  public static var regionMonitoringResponseDelayed: Code { .regionMonitoringResponseDelayed }
  /// A geocode request yielded no result.
  public static var geocodeFoundNoResult: Code { .geocodeFoundNoResult }
  /// A geocode request yielded a partial result.
  public static var geocodeFoundPartialResult: Code { .geocodeFoundPartialResult }
  /// A geocode request was canceled.
  public static var geocodeCanceled: Code { .geocodeCanceled }
  /// Deferred mode failed for an unknown reason.
  public static var deferredFailed: Code { .deferredFailed }
  /// Deferred mode failed because location updates were disabled or paused.
  public static var deferredNotUpdatingLocation: Code { .deferredNotUpdatingLocation }
  /// Deferred mode is not supported for the requested accuracy.
  public static var deferredAccuracyTooLow: Code { .deferredAccuracyTooLow }
  /// Deferred mode does not support distance filters.
  public static var deferredDistanceFiltered: Code { .deferredDistanceFiltered }
  /// The request for deferred updates was canceled.
  public static var deferredCanceled: Code { .deferredCanceled }
  /// Ranging is disabled.
  public static var rangingUnavailable: Code { .rangingUnavailable }
  /// A general ranging error occurred.
  public static var rangingFailure: Code { .rangingFailure }
  /// The user did not grant the requested temporary authorization.
  public static var promptDeclined: Code { .promptDeclined }
  /// Historical locations could not be delivered.
  public static var historicalLocationError: Code { .historicalLocationError }
}
