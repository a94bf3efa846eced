import Foundation

/// Information about the source that provides a location.
///
/// Locations that Core Location delivers on Linux carry source information: they are marked as
/// simulated by software when they come from a replayed track or a simulated source. They are
/// never marked as produced by an accessory, because the sources do not say whether a receiver is
/// external to the machine.
open class CLLocationSourceInformation: NSObject, NSCopying, NSSecureCoding {
  private enum Key {
    static let simulated = "kCLLocationSourceInformationCodingKeySimulatedBySoftware"
    static let accessory = "kCLLocationSourceInformationCodingKeyProducedByAccessory"
  }

  private let simulated: Bool
  private let accessory: Bool

  /// A Boolean value that indicates whether software generated or simulated the location.
  open var isSimulatedBySoftware: Bool { simulated }

  /// A Boolean value that indicates whether an external accessory provided the location.
  open var isProducedByAccessory: Bool { accessory }

  /// Creates source information.
  ///
  /// - Parameters:
  ///   - isSoftware: Whether software generates or simulates the location.
  ///   - isAccessory: Whether an external device provides the location.
  public init(
    softwareSimulationState isSoftware: Bool,
    andExternalAccessoryState isAccessory: Bool
  ) {
    self.simulated = isSoftware
    self.accessory = isAccessory
    super.init()
  }

  /// Creates source information for a location that is neither simulated nor from an accessory.
  public override convenience init() {
    self.init(softwareSimulationState: false, andExternalAccessoryState: false)
  }

  /// `true`: source information decodes only through the secure-coding checks.
  public class var supportsSecureCoding: Bool { true }

  /// Encodes the source information with keyed coding.
  ///
  /// - Parameter coder: The keyed archiver to write to.
  open func encode(with coder: NSCoder) {
    coder.encode(simulated, forKey: Key.simulated)
    coder.encode(accessory, forKey: Key.accessory)
  }

  /// Decodes source information written by ``encode(with:)``.
  ///
  /// - Parameter coder: The keyed unarchiver to read from.
  /// - Returns: `nil` when the coder is not a keyed coder; missing flags decode as `false`.
  public required init?(coder: NSCoder) {
    guard coder.allowsKeyedCoding else { return nil }
    self.simulated = coder.decodeBool(forKey: Key.simulated)
    self.accessory = coder.decodeBool(forKey: Key.accessory)
    super.init()
  }

  /// Returns the source information itself: it is immutable.
  ///
  /// - Parameter zone: Unused.
  /// - Returns: `self`.
  open func copy(with zone: NSZone? = nil) -> Any {
    self
  }
}
