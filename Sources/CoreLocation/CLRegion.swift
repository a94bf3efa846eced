import Foundation
internal import Geodesy

/// The base class of the areas that Core Location can monitor.
///
/// Create a ``CLCircularRegion`` rather than a `CLRegion`. Two regions are equal when they are of
/// the same class and have the same identifier, centre and radius; `notifyOnEntry` and
/// `notifyOnExit` do not take part (Apple does not document `CLRegion` equality; this is our
/// rule). The hash is the identifier's, so it agrees with equality.
open class CLRegion: NSObject, NSCopying, NSSecureCoding {
  private enum Key {
    static let identifier = "kCLRegionCodingKeyIdentifier"
    static let latitude = "kCLRegionCodingKeyCenterLatitude"
    static let longitude = "kCLRegionCodingKeyCenterLongitude"
    static let radius = "kCLRegionCodingKeyRadius"
    static let notifyOnEntry = "kCLRegionCodingKeyNotifyOnEntry"
    static let notifyOnExit = "kCLRegionCodingKeyNotifyOnExit"
  }

  private let storedIdentifier: String
  /// The centre of the circle; read by subclasses and the manager.
  let storedCenter: CLLocationCoordinate2D
  /// The radius of the circle in metres; read by subclasses and the manager.
  let storedRadius: CLLocationDistance

  /// Creates a circular region (the designated initializer behind the public ones).
  init(identifier: String, center: CLLocationCoordinate2D, radius: CLLocationDistance) {
    self.storedIdentifier = identifier
    self.storedCenter = center
    self.storedRadius = radius
    super.init()
  }

  /// Creates a region with an empty identifier, centred on 0° 0° with radius 0 (what Apple's
  /// inherited `init()` gives; useful for subclasses in tests, which override the properties).
  public override init() {
    storedIdentifier = ""
    storedCenter = CLLocationCoordinate2D(latitude: 0, longitude: 0)
    storedRadius = 0
    super.init()
  }

  /// Creates a region defining a circular area.
  ///
  /// - Parameters:
  ///   - center: The centre of the region.
  ///   - radius: The distance in metres from the centre to the boundary.
  ///   - identifier: A unique identifier for the region within the app.
  @available(*, deprecated, message: "Please see CLCircularRegion")
  public convenience init(
    circularRegionWithCenter center: CLLocationCoordinate2D,
    radius: CLLocationDistance,
    identifier: String
  ) {
    self.init(identifier: identifier, center: center, radius: radius)
  }

  /// The identifier of the region within the app.
  open var identifier: String { storedIdentifier }

  /// Whether entering the region generates an event; `true` by default.
  open var notifyOnEntry: Bool = true

  /// Whether leaving the region generates an event; `true` by default.
  open var notifyOnExit: Bool = true

  /// The centre of the region.
  @available(*, deprecated, message: "Please see CLCircularRegion")
  open var center: CLLocationCoordinate2D { storedCenter }

  /// The radius of the region in metres.
  @available(*, deprecated, message: "Please see CLCircularRegion")
  open var radius: CLLocationDistance { storedRadius }

  /// Returns whether the region contains a coordinate.
  ///
  /// - Parameter coordinate: The coordinate to test.
  /// - Returns: ``CLCircularRegion/contains(_:)``'s answer for the same circle.
  @available(*, deprecated, message: "Please see CLCircularRegion")
  open func contains(_ coordinate: CLLocationCoordinate2D) -> Bool {
    circleContains(coordinate)
  }

  /// The containment rule of every circular region: the coordinate is valid and its geodesic
  /// distance on WGS 84 from the centre is at most the radius (the boundary counts as inside).
  func circleContains(_ coordinate: CLLocationCoordinate2D) -> Bool {
    guard CLLocationCoordinate2DIsValid(coordinate), CLLocationCoordinate2DIsValid(storedCenter)
    else { return false }
    let distance = Geodesic.wgs84.distance(
      latitude1: storedCenter.latitude, longitude1: storedCenter.longitude,
      latitude2: coordinate.latitude, longitude2: coordinate.longitude)
    return distance <= storedRadius
  }

  // MARK: Equality

  /// Returns whether another object is a region of the same class with the same identifier,
  /// centre and radius.
  ///
  /// - Parameter object: The object to compare with.
  /// - Returns: `true` when the two regions describe the same monitored area.
  open override func isEqual(_ object: Any?) -> Bool {
    guard let other = object as? CLRegion, type(of: other) == type(of: self) else { return false }
    return storedIdentifier == other.storedIdentifier
      && storedCenter.latitude == other.storedCenter.latitude
      && storedCenter.longitude == other.storedCenter.longitude
      && storedRadius == other.storedRadius
  }

  /// The hash of the identifier.
  open override var hash: Int { storedIdentifier.hashValue }

  /// Apple's format: `CLRegion (identifier:'home', center:<+37.33182000,-122.03118000>,
  /// radius:100.00m)`, with the class name of the region.
  open override var description: String {
    let center = String(format: "<%+.8f,%+.8f>", storedCenter.latitude, storedCenter.longitude)
    let radius = String(format: "%.2fm", storedRadius)
    let name = String(describing: type(of: self))
    return "\(name) (identifier:'\(storedIdentifier)', center:\(center), radius:\(radius))"
  }

  // MARK: NSCopying

  /// Returns a new region with the same identifier, geometry and notification flags.
  ///
  /// - Parameter zone: Unused.
  /// - Returns: A `CLRegion`.
  open func copy(with zone: NSZone? = nil) -> Any {
    let copy = CLRegion(identifier: storedIdentifier, center: storedCenter, radius: storedRadius)
    copy.notifyOnEntry = notifyOnEntry
    copy.notifyOnExit = notifyOnExit
    return copy
  }

  // MARK: NSSecureCoding

  /// `true`: regions decode only through the secure-coding checks.
  public class var supportsSecureCoding: Bool { true }

  /// Encodes the identifier, the circle and the notification flags with keyed coding.
  ///
  /// - Parameter coder: The keyed archiver to write to.
  open func encode(with coder: NSCoder) {
    coder.encode(NSString(string: storedIdentifier), forKey: Key.identifier)
    coder.encode(storedCenter.latitude, forKey: Key.latitude)
    coder.encode(storedCenter.longitude, forKey: Key.longitude)
    coder.encode(storedRadius, forKey: Key.radius)
    coder.encode(notifyOnEntry, forKey: Key.notifyOnEntry)
    coder.encode(notifyOnExit, forKey: Key.notifyOnExit)
  }

  /// Decodes a region written by ``encode(with:)``.
  ///
  /// - Parameter coder: The keyed unarchiver to read from.
  /// - Returns: `nil` when the archive lacks the identifier, the centre or the radius. Missing
  ///   notification flags decode as `true`.
  public required init?(coder: NSCoder) {
    guard coder.allowsKeyedCoding,
      let identifier = coder.decodeObject(of: NSString.self, forKey: Key.identifier),
      coder.containsValue(forKey: Key.latitude),
      coder.containsValue(forKey: Key.longitude),
      coder.containsValue(forKey: Key.radius)
    else { return nil }
    self.storedIdentifier = String(describing: identifier)
    self.storedCenter = CLLocationCoordinate2D(
      latitude: coder.decodeDouble(forKey: Key.latitude),
      longitude: coder.decodeDouble(forKey: Key.longitude))
    self.storedRadius = coder.decodeDouble(forKey: Key.radius)
    super.init()
    if coder.containsValue(forKey: Key.notifyOnEntry) {
      notifyOnEntry = coder.decodeBool(forKey: Key.notifyOnEntry)
    }
    if coder.containsValue(forKey: Key.notifyOnExit) {
      notifyOnExit = coder.decodeBool(forKey: Key.notifyOnExit)
    }
  }
}
