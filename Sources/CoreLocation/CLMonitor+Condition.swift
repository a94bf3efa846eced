import Foundation

/// The abstract base class for all other monitor conditions.
///
/// The conditions you add to a `CLMonitor` conform to it: `CLMonitor.CircularGeographicCondition`
/// and `CLMonitor.BeaconIdentityCondition` (both monitored). A condition of any other type is
/// accepted and reported with an event in state `.unmonitored` and `conditionUnsupported` set.
public protocol CLCondition: Decodable, Encodable, Sendable {}

extension CLMonitor {
  /// A condition that describes a circular geographic area that a center point and radius define.
  ///
  /// The monitor decides with the rule of region monitoring (a rule Apple does not publish): a
  /// location at geodesic distance `d` from `center`, with horizontal accuracy `a`, is evidence of
  /// *satisfied* when `d <= radius - max(a, 5 m)` and of *unsatisfied* when
  /// `d >= radius + max(a, 5 m)`; anything between is no evidence.
  ///
  /// Codable as `{"latitude": …, "longitude": …, "radius": …}` (degrees and metres).
  public struct CircularGeographicCondition: CLCondition {
    /// The center point of the condition's area.
    public let center: CLLocationCoordinate2D
    /// The radius of the condition's area, in meters.
    public let radius: CLLocationDistance

    /// Creates a circular geographic condition with a center point and radius you specify.
    ///
    /// Nothing is checked here: a condition the monitor cannot watch (a radius that is not positive
    /// or larger than `maximumRegionMonitoringDistance`, an invalid centre) is reported when it is
    /// added, with an event in state `.unmonitored` and `conditionUnsupported` set.
    /// - Parameters:
    ///   - center: The center point of the area.
    ///   - radius: The radius of the area, in meters.
    public init(center: CLLocationCoordinate2D, radius: CLLocationDistance) {
      self.center = center
      self.radius = radius
    }

    private enum CodingKeys: String, CodingKey {
      case latitude
      case longitude
      case radius
    }

    /// Creates a condition from an encoded one.
    /// - Parameter decoder: The decoder to read from.
    /// - Throws: `DecodingError` when a key is missing or not a number.
    public init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: CodingKeys.self)
      center = CLLocationCoordinate2D(
        latitude: try container.decode(CLLocationDegrees.self, forKey: .latitude),
        longitude: try container.decode(CLLocationDegrees.self, forKey: .longitude))
      radius = try container.decode(CLLocationDistance.self, forKey: .radius)
    }

    /// Encodes the condition.
    /// - Parameter encoder: The encoder to write to.
    /// - Throws: What the encoder throws.
    public func encode(to encoder: any Encoder) throws {
      var container = encoder.container(keyedBy: CodingKeys.self)
      try container.encode(center.latitude, forKey: .latitude)
      try container.encode(center.longitude, forKey: .longitude)
      try container.encode(radius, forKey: .radius)
    }
  }

  /// A condition that describes the characteristics of a beacon.
  ///
  /// The monitor decides with the rule of beacon regions (ours; Apple publishes no time): an
  /// advertisement of a matching beacon (BlueZ, or a `beacons+replay://` recording) is evidence of
  /// *satisfied*; no matching beacon heard for 30 s is evidence of *unsatisfied*.
  ///
  /// Codable as `{"uuid": …, "major": …, "minor": …}`, `major` and `minor` absent for wildcards.
  public struct BeaconIdentityCondition: CLCondition {
    /// The UUID that identifies the beacon.
    public let uuid: UUID
    /// The beacon's major value, or `nil` for any.
    public let major: UInt16?
    /// The beacon's minor value, or `nil` for any.
    public let minor: UInt16?

    /// Creates a beacon identity condition with the UUID characteristic only, and wildcard values
    /// for the major and minor characteristics.
    /// - Parameter uuid: The UUID that identifies the beacon.
    public init(uuid: UUID) {
      self.uuid = uuid
      self.major = nil
      self.minor = nil
    }

    /// Creates a beacon identity condition with UUID and major characteristics, and a wildcard for
    /// the minor characteristic.
    /// - Parameters:
    ///   - uuid: The UUID that identifies the beacon.
    ///   - major: The beacon's major value.
    public init(uuid: UUID, major: UInt16) {
      self.uuid = uuid
      self.major = major
      self.minor = nil
    }

    /// Creates a beacon identity condition with UUID, and major and minor characteristics.
    /// - Parameters:
    ///   - uuid: The UUID that identifies the beacon.
    ///   - major: The beacon's major value.
    ///   - minor: The beacon's minor value.
    public init(uuid: UUID, major: UInt16, minor: UInt16) {
      self.uuid = uuid
      self.major = major
      self.minor = minor
    }
  }
}
