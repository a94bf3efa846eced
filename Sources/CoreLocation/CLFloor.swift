import Foundation

/// The floor of a building on which the device is located.
///
/// Core Location creates floors; apps read them from ``CLLocation/floor``.
open class CLFloor: NSObject, NSCopying, NSSecureCoding {
  private enum Key {
    static let level = "kCLFloorCodingKeyLevel"
  }

  private let storedLevel: Int

  /// The logical floor of the building: 0 is the ground floor, negative values are below it and
  /// positive values above it. It is not the building's own numbering, nor an altitude estimate.
  open var level: Int { storedLevel }

  /// Creates a floor (Core Location's own initializer; apps do not create floors).
  init(level: Int) {
    self.storedLevel = level
    super.init()
  }

  /// Creates the ground floor, level 0 (what Apple's inherited `init()` gives; useful for
  /// subclasses in tests, which override ``level``).
  public override init() {
    storedLevel = 0
    super.init()
  }

  /// `true`: floors decode only through the secure-coding checks.
  public class var supportsSecureCoding: Bool { true }

  /// Encodes the floor with keyed coding.
  ///
  /// - Parameter coder: The keyed archiver to write to.
  open func encode(with coder: NSCoder) {
    coder.encode(storedLevel, forKey: Key.level)
  }

  /// Decodes a floor written by ``encode(with:)``.
  ///
  /// - Parameter coder: The keyed unarchiver to read from.
  /// - Returns: `nil` when the archive has no level.
  public required init?(coder: NSCoder) {
    guard coder.allowsKeyedCoding, coder.containsValue(forKey: Key.level) else { return nil }
    self.storedLevel = coder.decodeInteger(forKey: Key.level)
    super.init()
  }

  /// Returns the floor itself: floors are immutable.
  ///
  /// - Parameter zone: Unused.
  /// - Returns: `self`.
  open func copy(with zone: NSZone? = nil) -> Any {
    self
  }
}
