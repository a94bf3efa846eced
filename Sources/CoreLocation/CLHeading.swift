import Foundation

/// The orientation of the device relative to true or magnetic north, with the raw geomagnetic
/// vector it was computed from.
///
/// Headings are immutable. Equality and hashing are object identity.
open class CLHeading: NSObject, NSCopying, NSSecureCoding {
  private enum Key {
    static let magneticHeading = "kCLHeadingCodingKeyMagneticHeading"
    static let trueHeading = "kCLHeadingCodingKeyTrueHeading"
    static let headingAccuracy = "kCLHeadingCodingKeyHeadingAccuracy"
    static let x = "kCLHeadingCodingKeyRawX"
    static let y = "kCLHeadingCodingKeyRawY"
    static let z = "kCLHeadingCodingKeyRawZ"
    static let timestamp = "kCLHeadingCodingKeyTimestamp"
  }

  private let storedMagneticHeading: CLLocationDirection
  private let storedTrueHeading: CLLocationDirection
  private let storedHeadingAccuracy: CLLocationDirection
  private let storedX: CLHeadingComponentValue
  private let storedY: CLHeadingComponentValue
  private let storedZ: CLHeadingComponentValue
  private let storedTimestamp: Date

  /// Creates a heading (Core Location's own initializer).
  ///
  /// - Parameters:
  ///   - magneticHeading: Degrees clockwise from magnetic north.
  ///   - trueHeading: Degrees clockwise from true north; negative when unknown.
  ///   - headingAccuracy: Maximum deviation in degrees; negative when the heading is invalid.
  ///   - x: Geomagnetic field along the device's x axis, microteslas.
  ///   - y: Geomagnetic field along the device's y axis, microteslas.
  ///   - z: Geomagnetic field along the device's z axis, microteslas.
  ///   - timestamp: When the heading was determined.
  init(
    magneticHeading: CLLocationDirection,
    trueHeading: CLLocationDirection,
    headingAccuracy: CLLocationDirection,
    x: CLHeadingComponentValue,
    y: CLHeadingComponentValue,
    z: CLHeadingComponentValue,
    timestamp: Date
  ) {
    self.storedMagneticHeading = magneticHeading
    self.storedTrueHeading = trueHeading
    self.storedHeadingAccuracy = headingAccuracy
    self.storedX = x
    self.storedY = y
    self.storedZ = z
    self.storedTimestamp = timestamp
    super.init()
  }

  /// Creates a heading whose values are all 0, timestamped now (what Apple's inherited `init()`
  /// gives; useful only for subclasses in tests).
  public override init() {
    self.storedMagneticHeading = 0
    self.storedTrueHeading = 0
    self.storedHeadingAccuracy = 0
    self.storedX = 0
    self.storedY = 0
    self.storedZ = 0
    self.storedTimestamp = Date()
    super.init()
  }

  /// The heading in degrees relative to magnetic north (0...359.9), measured from the reference
  /// axis that the manager's `headingOrientation` selects.
  open var magneticHeading: CLLocationDirection { storedMagneticHeading }

  /// The heading in degrees relative to true north (0...359.9); negative when it could not be
  /// determined, as when location updates are off.
  open var trueHeading: CLLocationDirection { storedTrueHeading }

  /// The maximum deviation in degrees between ``magneticHeading`` and the actual direction of
  /// magnetic north; negative means the heading is invalid.
  open var headingAccuracy: CLLocationDirection { storedHeadingAccuracy }

  /// The geomagnetic field along the device's x axis, in microteslas.
  open var x: CLHeadingComponentValue { storedX }

  /// The geomagnetic field along the device's y axis, in microteslas.
  open var y: CLHeadingComponentValue { storedY }

  /// The geomagnetic field along the device's z axis, in microteslas.
  open var z: CLHeadingComponentValue { storedZ }

  /// The time at which the heading was determined.
  open var timestamp: Date { storedTimestamp }

  /// Apple's format: `magneticHeading 45.00 trueHeading 47.10 accuracy 5.00 x 12.000 y -3.000
  /// z -40.000 @ ` followed by the timestamp.
  open override var description: String {
    let values = String(
      format: "magneticHeading %.2f trueHeading %.2f accuracy %.2f x %.3f y %.3f z %.3f",
      magneticHeading, trueHeading, headingAccuracy, x, y, z)
    return "\(values) @ \(timestamp)"
  }

  /// Returns the heading itself: headings are immutable.
  ///
  /// - Parameter zone: Unused.
  /// - Returns: `self`.
  open func copy(with zone: NSZone? = nil) -> Any {
    self
  }

  /// `true`: headings decode only through the secure-coding checks.
  public class var supportsSecureCoding: Bool { true }

  /// Encodes every value of the heading with keyed coding.
  ///
  /// - Parameter coder: The keyed archiver to write to.
  open func encode(with coder: NSCoder) {
    coder.encode(storedMagneticHeading, forKey: Key.magneticHeading)
    coder.encode(storedTrueHeading, forKey: Key.trueHeading)
    coder.encode(storedHeadingAccuracy, forKey: Key.headingAccuracy)
    coder.encode(storedX, forKey: Key.x)
    coder.encode(storedY, forKey: Key.y)
    coder.encode(storedZ, forKey: Key.z)
    coder.encode(storedTimestamp.timeIntervalSinceReferenceDate, forKey: Key.timestamp)
  }

  /// Decodes a heading written by ``encode(with:)``.
  ///
  /// - Parameter coder: The keyed unarchiver to read from.
  /// - Returns: `nil` when the archive lacks the magnetic heading or the timestamp. Other
  ///   missing values decode as -1 (headings) or 0 (field components).
  public required init?(coder: NSCoder) {
    guard coder.allowsKeyedCoding,
      coder.containsValue(forKey: Key.magneticHeading),
      coder.containsValue(forKey: Key.timestamp)
    else { return nil }
    func decode(_ key: String, absent: Double) -> Double {
      coder.containsValue(forKey: key) ? coder.decodeDouble(forKey: key) : absent
    }
    self.storedMagneticHeading = coder.decodeDouble(forKey: Key.magneticHeading)
    self.storedTrueHeading = decode(Key.trueHeading, absent: -1)
    self.storedHeadingAccuracy = decode(Key.headingAccuracy, absent: -1)
    self.storedX = decode(Key.x, absent: 0)
    self.storedY = decode(Key.y, absent: 0)
    self.storedZ = decode(Key.z, absent: 0)
    self.storedTimestamp = Date(
      timeIntervalSinceReferenceDate: coder.decodeDouble(forKey: Key.timestamp))
    super.init()
  }
}
