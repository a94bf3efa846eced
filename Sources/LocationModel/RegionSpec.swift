/// A circular region to monitor: the engine's copy of `CLCircularRegion` plus its hysteresis.
///
/// `hysteresis` is the `desiredAccuracy` given to `startMonitoring(for:desiredAccuracy:)`
/// (default 5 m): a fix must be at least `max(accuracy, hysteresis)` inside or outside the circle
/// to count (`RegionEvidence.of`).
package struct RegionSpec: Sendable, Equatable, Hashable {
  /// The default hysteresis in metres.
  package static let defaultHysteresis: Double = 5
  /// The largest radius in metres a region may have unless configured otherwise: 1,000 km
  /// (`maximumRegionMonitoringDistance`; ours, Apple publishes no figure). The one default: the
  /// engine, `RegionMonitor`, the daemon's welcome and its clients all use it.
  package static let defaultMaximumRadius: Double = 1_000_000
  /// The longest identifier accepted, in bytes of UTF-8 (ours; Apple documents none). With a
  /// daemon's per-app region limit it bounds what one app can make the daemon keep.
  package static let maximumIdentifierBytes = 1024
  /// The longest group name accepted (`monitor:` and a `CLMonitor`'s name), in bytes of UTF-8.
  package static let maximumGroupBytes = 256

  /// The app's name for the region; regions are replaced by identifier.
  package var identifier: String
  /// Latitude of the centre, degrees (WGS-84), -90...90.
  package var latitude: Double
  /// Longitude of the centre, degrees (WGS-84), -180...180.
  package var longitude: Double
  /// Radius in metres, > 0.
  package var radius: Double
  /// Hysteresis in metres, >= 0.
  package var hysteresis: Double
  /// Whether entries are delivered to the app.
  package var notifyOnEntry: Bool
  /// Whether exits are delivered to the app.
  package var notifyOnExit: Bool
  /// For a beacon region (`CLBeaconRegion`, `CLMonitor.BeaconIdentityCondition`), the beacons
  /// whose presence puts the device inside; the centre, radius and hysteresis then mean nothing
  /// (zero). Nil for a circular region.
  package var beacon: BeaconConstraint?

  /// Creates a region; nothing is checked here (see `validate(maximumRadius:)`).
  /// - Parameters:
  ///   - identifier: The app's name for the region.
  ///   - latitude: Latitude of the centre, degrees.
  ///   - longitude: Longitude of the centre, degrees.
  ///   - radius: Radius in metres.
  ///   - hysteresis: Hysteresis in metres (default 5).
  ///   - notifyOnEntry: Whether entries are delivered (default true, as in Apple's API).
  ///   - notifyOnExit: Whether exits are delivered (default true, as in Apple's API).
  ///   - beacon: For a beacon region, the beacons it watches (default nil: a circle).
  package init(
    identifier: String,
    latitude: Double,
    longitude: Double,
    radius: Double,
    hysteresis: Double = RegionSpec.defaultHysteresis,
    notifyOnEntry: Bool = true,
    notifyOnExit: Bool = true,
    beacon: BeaconConstraint? = nil
  ) {
    self.identifier = identifier
    self.latitude = latitude
    self.longitude = longitude
    self.radius = radius
    self.hysteresis = hysteresis
    self.notifyOnEntry = notifyOnEntry
    self.notifyOnExit = notifyOnExit
    self.beacon = beacon
  }

  /// A beacon region: the beacons of `constraint` (centre, radius and hysteresis zero).
  package static func beacon(
    identifier: String, _ constraint: BeaconConstraint, notifyOnEntry: Bool = true,
    notifyOnExit: Bool = true
  ) -> RegionSpec {
    RegionSpec(
      identifier: identifier, latitude: 0, longitude: 0, radius: 0, hysteresis: 0,
      notifyOnEntry: notifyOnEntry, notifyOnExit: notifyOnExit, beacon: constraint)
  }

  /// Checks the region and returns the first reason it cannot be monitored, or nil if it can.
  ///
  /// Checked in this order: an empty identifier; one longer than `maximumIdentifierBytes`; a
  /// centre that is not finite or out of range (latitude -90...90, longitude -180...180); a radius
  /// that is NaN or infinite; a radius <= 0; a radius above `maximumRadius`; a hysteresis that is
  /// negative, NaN or infinite.
  /// - Parameter maximumRadius: The largest radius accepted, metres.
  /// - Returns: The reason, or nil when the region is valid.
  package func validate(maximumRadius: Double = RegionSpec.defaultMaximumRadius) -> RegionSpecError?
  {
    if identifier.isEmpty {
      return RegionSpecError(code: .emptyIdentifier, message: "the region identifier is empty")
    }
    guard identifier.utf8.count <= Self.maximumIdentifierBytes else {
      return RegionSpecError(
        code: .identifierTooLong,
        message:
          "the region identifier is \(identifier.utf8.count) bytes long; at most "
          + "\(Self.maximumIdentifierBytes) are accepted")
    }
    // A beacon region has no geometry to check.
    if beacon != nil { return nil }
    guard latitude.isFinite, longitude.isFinite, abs(latitude) <= 90, abs(longitude) <= 180 else {
      return RegionSpecError(
        code: .invalidCentre,
        message: "region '\(identifier)': the centre is not a valid latitude and longitude")
    }
    guard radius.isFinite else {
      return RegionSpecError(
        code: .radiusNotFinite, message: "region '\(identifier)': the radius is not a finite number"
      )
    }
    guard radius > 0 else {
      return RegionSpecError(
        code: .radiusNotPositive, message: "region '\(identifier)': the radius is not positive")
    }
    guard radius <= maximumRadius else {
      return RegionSpecError(
        code: .radiusTooLarge,
        message:
          "region '\(identifier)': the radius \(radius) m exceeds the maximum \(maximumRadius) m")
    }
    guard hysteresis.isFinite, hysteresis >= 0 else {
      return RegionSpecError(
        code: .invalidHysteresis,
        message: "region '\(identifier)': the hysteresis is negative or not a finite number")
    }
    return nil
  }
}

/// Why a region cannot be monitored (the public layer maps it to `CLError.regionMonitoringFailure`).
///
/// The message names the region and the bad measure, never the centre's coordinates.
package struct RegionSpecError: Error, Sendable, Equatable, Hashable, CustomStringConvertible {
  /// The reasons a region is rejected.
  package enum Code: Sendable, Equatable, Hashable, CaseIterable {
    /// The identifier is the empty string.
    case emptyIdentifier
    /// The identifier is longer than `RegionSpec.maximumIdentifierBytes`.
    case identifierTooLong
    /// Latitude or longitude is not finite or out of range.
    case invalidCentre
    /// The radius is NaN or infinite.
    case radiusNotFinite
    /// The radius is zero or negative.
    case radiusNotPositive
    /// The radius exceeds the maximum (`maximumRegionMonitoringDistance`).
    case radiusTooLarge
    /// The hysteresis is negative, NaN or infinite.
    case invalidHysteresis
    /// The monitor already holds `RegionMonitor.maximumCount` regions (thrown by `add`).
    case tooManyRegions
  }

  /// The reason.
  package var code: Code
  /// A sentence for logs and errors.
  package var message: String

  /// Creates an error.
  /// - Parameters:
  ///   - code: The reason.
  ///   - message: A sentence for logs and errors.
  package init(code: Code, message: String) {
    self.code = code
    self.message = message
  }

  /// The message.
  package var description: String { message }
}
