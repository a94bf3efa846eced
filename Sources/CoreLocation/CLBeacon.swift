import Foundation

/// The most-significant value in a beacon.
public typealias CLBeaconMajorValue = UInt16
/// The least-significant value in a beacon.
public typealias CLBeaconMinorValue = UInt16

/// Constants that indicate the relative distance to a beacon.
public enum CLProximity: Int, Sendable {
  /// The proximity of the beacon can't be determined.
  case unknown = 0
  /// The beacon is in the user's immediate vicinity.
  case immediate = 1
  /// The beacon is relatively close to the user.
  case near = 2
  /// The beacon is far away.
  case far = 3
}

/// Information about a detected iBeacon and the relative distance to it.
///
/// Delivered by ranging (`startRangingBeacons(satisfying:)`) about once a second, closest first;
/// `accuracy` is the distance the log-distance path-loss model gives for the RSSI averaged over the
/// last second (README, "Beacons").
open class CLBeacon: NSObject, NSCopying, NSSecureCoding, @unchecked Sendable {
  // @unchecked Sendable: every stored property is an immutable `let`.
  private let storedUUID: UUID
  private let storedMajor: NSNumber
  private let storedMinor: NSNumber
  private let storedProximity: CLProximity
  private let storedAccuracy: CLLocationAccuracy
  private let storedRSSI: Int
  private let storedTimestamp: Date

  /// The UUID of the beacon.
  open var uuid: UUID { storedUUID }
  /// The most significant value in the beacon.
  open var major: NSNumber { storedMajor }
  /// The least significant value in the beacon.
  open var minor: NSNumber { storedMinor }
  /// The relative distance to the beacon.
  open var proximity: CLProximity { storedProximity }
  /// The accuracy of the proximity value, measured in metres from the beacon.
  open var accuracy: CLLocationAccuracy { storedAccuracy }
  /// The received signal strength of the beacon, measured in decibels.
  open var rssi: Int { storedRSSI }
  /// The time when the framework reported the beacon.
  open var timestamp: Date { storedTimestamp }

  /// The proximity ID of the beacon.
  @available(*, deprecated, renamed: "uuid")
  open var proximityUUID: UUID { uuid }

  init(
    uuid: UUID, major: CLBeaconMajorValue, minor: CLBeaconMinorValue, proximity: CLProximity,
    accuracy: CLLocationAccuracy, rssi: Int, timestamp: Date
  ) {
    storedUUID = uuid
    storedMajor = NSNumber(value: major)
    storedMinor = NSNumber(value: minor)
    storedProximity = proximity
    storedAccuracy = accuracy
    storedRSSI = rssi
    storedTimestamp = timestamp
    super.init()
  }

  /// Creates a beacon that was never heard: the null UUID, major and minor 0, `unknown`
  /// proximity, accuracy -1, RSSI 0, timestamped now (what Apple's inherited `init()` gives;
  /// useful for subclasses in tests, which override the properties).
  public override init() {
    storedUUID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    storedMajor = 0
    storedMinor = 0
    storedProximity = .unknown
    storedAccuracy = -1
    storedRSSI = 0
    storedTimestamp = Date()
    super.init()
  }

  /// `true`.
  public class var supportsSecureCoding: Bool { true }

  /// Encodes the beacon with keyed coding.
  open func encode(with coder: NSCoder) {
    coder.encode(uuid.uuidString, forKey: "uuid")
    coder.encode(major.intValue, forKey: "major")
    coder.encode(minor.intValue, forKey: "minor")
    coder.encode(proximity.rawValue, forKey: "proximity")
    coder.encode(accuracy, forKey: "accuracy")
    coder.encode(rssi, forKey: "rssi")
    coder.encode(timestamp.timeIntervalSinceReferenceDate, forKey: "timestamp")
  }

  /// Decodes a beacon written by `encode(with:)`.
  public required init?(coder: NSCoder) {
    guard coder.allowsKeyedCoding,
      let text = coder.decodeObject(of: NSString.self, forKey: "uuid"),
      let uuid = UUID(uuidString: String(describing: text))
    else { return nil }
    storedUUID = uuid
    storedMajor = NSNumber(value: coder.decodeInteger(forKey: "major"))
    storedMinor = NSNumber(value: coder.decodeInteger(forKey: "minor"))
    storedProximity = CLProximity(rawValue: coder.decodeInteger(forKey: "proximity")) ?? .unknown
    storedAccuracy = coder.decodeDouble(forKey: "accuracy")
    storedRSSI = coder.decodeInteger(forKey: "rssi")
    storedTimestamp = Date(
      timeIntervalSinceReferenceDate: coder.decodeDouble(forKey: "timestamp"))
    super.init()
  }

  /// Returns the beacon itself: it is immutable.
  open func copy(with zone: NSZone? = nil) -> Any { self }
}

/// A constraint that describes the identity characteristics of a beacon.
open class CLBeaconIdentityConstraint: NSObject, NSCopying, NSSecureCoding, @unchecked Sendable {
  // @unchecked Sendable: every stored property is an immutable `let`.
  /// The UUID value that beacons must have.
  public let uuid: UUID
  /// The major value that beacons must have, if any.
  public let major: CLBeaconMajorValue?
  /// The minor value that beacons must have, if any.
  public let minor: CLBeaconMinorValue?

  /// Creates a constraint for beacons with the specified UUID.
  public convenience init(uuid: UUID) { self.init(uuid: uuid, majorValue: nil, minorValue: nil) }

  /// Creates a constraint for beacons with the specified UUID and major value.
  public convenience init(uuid: UUID, major: CLBeaconMajorValue) {
    self.init(uuid: uuid, majorValue: major, minorValue: nil)
  }

  /// Creates a constraint for beacons with the specified UUID, major and minor values.
  public convenience init(uuid: UUID, major: CLBeaconMajorValue, minor: CLBeaconMinorValue) {
    self.init(uuid: uuid, majorValue: major, minorValue: minor)
  }

  init(uuid: UUID, majorValue: CLBeaconMajorValue?, minorValue: CLBeaconMinorValue?) {
    self.uuid = uuid
    self.major = majorValue
    self.minor = minorValue
    super.init()
  }

  /// Equal when UUID, major and minor are equal.
  open override func isEqual(_ object: Any?) -> Bool {
    guard let other = object as? CLBeaconIdentityConstraint else { return false }
    return uuid == other.uuid && major == other.major && minor == other.minor
  }

  /// The hash of the UUID, major and minor.
  open override var hash: Int {
    var hasher = Hasher()
    hasher.combine(uuid)
    hasher.combine(major)
    hasher.combine(minor)
    return hasher.finalize()
  }

  /// `true`.
  public class var supportsSecureCoding: Bool { true }

  /// Encodes the constraint with keyed coding.
  open func encode(with coder: NSCoder) {
    coder.encode(uuid.uuidString, forKey: "uuid")
    if let major { coder.encode(Int(major), forKey: "major") }
    if let minor { coder.encode(Int(minor), forKey: "minor") }
  }

  /// Decodes a constraint written by `encode(with:)`.
  public required init?(coder: NSCoder) {
    guard coder.allowsKeyedCoding,
      let text = coder.decodeObject(of: NSString.self, forKey: "uuid"),
      let uuid = UUID(uuidString: String(describing: text))
    else { return nil }
    self.uuid = uuid
    major =
      coder.containsValue(forKey: "major")
      ? CLBeaconMajorValue(truncatingIfNeeded: coder.decodeInteger(forKey: "major")) : nil
    minor =
      coder.containsValue(forKey: "minor")
      ? CLBeaconMinorValue(truncatingIfNeeded: coder.decodeInteger(forKey: "minor")) : nil
    super.init()
  }

  /// Returns the constraint itself: it is immutable.
  open func copy(with zone: NSZone? = nil) -> Any { self }
}

/// A region that detects the presence of iBeacon devices: monitored with `startMonitoring(for:)`
/// while a source hears beacons (`isMonitoringAvailable(for: CLBeaconRegion.self)`), inside while a
/// matching beacon is heard and outside after 30 s without one (README, "Beacons").
open class CLBeaconRegion: CLRegion, @unchecked Sendable {
  // @unchecked Sendable: the beacon fields are immutable; the notification flags are CLRegion's.
  /// The UUID of the beacons being targeted.
  public let uuid: UUID
  /// The major value that identifies beacons, if any.
  public let major: NSNumber?
  /// The minor value that identifies beacons, if any.
  public let minor: NSNumber?
  /// Whether beacon notifications are sent when the device's display is on.
  open var notifyEntryStateOnDisplay = false

  /// The beacon identity constraint that defines the beacon region.
  open var beaconIdentityConstraint: CLBeaconIdentityConstraint {
    CLBeaconIdentityConstraint(
      uuid: uuid, majorValue: major.map { CLBeaconMajorValue(truncatingIfNeeded: $0.intValue) },
      minorValue: minor.map { CLBeaconMinorValue(truncatingIfNeeded: $0.intValue) })
  }

  /// The proximity ID of the beacons being targeted.
  @available(*, deprecated, renamed: "uuid")
  open var proximityUUID: UUID { uuid }

  /// Creates a beacon region that targets beacons with the specified UUID.
  public convenience init(uuid: UUID, identifier: String) {
    self.init(uuid: uuid, majorValue: nil, minorValue: nil, identifier: identifier)
  }

  /// Creates a beacon region that targets beacons with the specified UUID and major value.
  public convenience init(uuid: UUID, major: CLBeaconMajorValue, identifier: String) {
    self.init(uuid: uuid, majorValue: major, minorValue: nil, identifier: identifier)
  }

  /// Creates a beacon region that targets beacons with the specified UUID, major and minor values.
  public convenience init(
    uuid: UUID, major: CLBeaconMajorValue, minor: CLBeaconMinorValue, identifier: String
  ) {
    self.init(uuid: uuid, majorValue: major, minorValue: minor, identifier: identifier)
  }

  /// Creates a beacon region with a beacon identity constraint.
  public convenience init(beaconIdentityConstraint: CLBeaconIdentityConstraint, identifier: String)
  {
    self.init(
      uuid: beaconIdentityConstraint.uuid, majorValue: beaconIdentityConstraint.major,
      minorValue: beaconIdentityConstraint.minor, identifier: identifier)
  }

  /// Creates a beacon region that targets beacons with the specified proximity ID.
  @available(*, deprecated, renamed: "init(uuid:identifier:)")
  public convenience init(proximityUUID: UUID, identifier: String) {
    self.init(uuid: proximityUUID, majorValue: nil, minorValue: nil, identifier: identifier)
  }

  /// Creates a beacon region that targets beacons with the specified proximity ID and major value.
  @available(*, deprecated, renamed: "init(uuid:major:identifier:)")
  public convenience init(proximityUUID: UUID, major: CLBeaconMajorValue, identifier: String) {
    self.init(uuid: proximityUUID, majorValue: major, minorValue: nil, identifier: identifier)
  }

  /// Creates a beacon region that targets beacons with the specified proximity ID, major and minor.
  @available(*, deprecated, renamed: "init(uuid:major:minor:identifier:)")
  public convenience init(
    proximityUUID: UUID, major: CLBeaconMajorValue, minor: CLBeaconMinorValue, identifier: String
  ) {
    self.init(uuid: proximityUUID, majorValue: major, minorValue: minor, identifier: identifier)
  }

  init(
    uuid: UUID, majorValue: CLBeaconMajorValue?, minorValue: CLBeaconMinorValue?, identifier: String
  ) {
    self.uuid = uuid
    self.major = majorValue.map { NSNumber(value: $0) }
    self.minor = minorValue.map { NSNumber(value: $0) }
    super.init(identifier: identifier, center: kCLLocationCoordinate2DInvalid, radius: 0)
  }

  /// The measured power `peripheralData(withMeasuredPower:)` uses when given nil: -59 dBm, the
  /// usual calibration of a phone held at 1 m (Apple uses the device's own, which Linux has no
  /// table of).
  static let defaultMeasuredPower = -59

  /// Retrieves data that you can use to advertise the current device as a beacon.
  ///
  /// The dictionary has Apple's one key, `kCBAdvDataAppleBeaconKey`, whose value is the 21 bytes
  /// of the iBeacon frame after its type and length: the UUID, the major and minor values
  /// (big-endian; 0 when the region leaves them open) and the measured power (a signed byte). On
  /// Linux, advertise it through BlueZ's `LEAdvertisingManager1` as the manufacturer data of
  /// company 0x004C, preceded by the bytes 0x02 0x15.
  /// - Parameter measuredPower: the RSSI at 1 m, dBm; nil for -59.
  open func peripheralData(withMeasuredPower measuredPower: NSNumber?) -> NSMutableDictionary {
    let power = Int8(clamping: measuredPower?.intValue ?? Self.defaultMeasuredPower)
    let majorValue = UInt16(truncatingIfNeeded: major?.intValue ?? 0)
    let minorValue = UInt16(truncatingIfNeeded: minor?.intValue ?? 0)
    var bytes = withUnsafeBytes(of: uuid.uuid) { Array($0) }
    bytes += [UInt8(majorValue >> 8), UInt8(majorValue & 0xFF)]
    bytes += [UInt8(minorValue >> 8), UInt8(minorValue & 0xFF), UInt8(bitPattern: power)]
    let dictionary = NSMutableDictionary()
    dictionary["kCBAdvDataAppleBeaconKey"] = Data(bytes)
    return dictionary
  }

  /// Decodes a beacon region.
  public required init?(coder: NSCoder) {
    guard let text = coder.decodeObject(of: NSString.self, forKey: "uuid"),
      let uuid = UUID(uuidString: String(describing: text))
    else { return nil }
    self.uuid = uuid
    major =
      coder.containsValue(forKey: "major")
      ? NSNumber(value: coder.decodeInteger(forKey: "major")) : nil
    minor =
      coder.containsValue(forKey: "minor")
      ? NSNumber(value: coder.decodeInteger(forKey: "minor")) : nil
    super.init(coder: coder)
  }

  /// Encodes the beacon identity and the region.
  open override func encode(with coder: NSCoder) {
    super.encode(with: coder)
    coder.encode(uuid.uuidString, forKey: "uuid")
    if let major { coder.encode(major.intValue, forKey: "major") }
    if let minor { coder.encode(minor.intValue, forKey: "minor") }
  }

  /// A copy with the same identity and flags.
  open override func copy(with zone: NSZone? = nil) -> Any {
    let copy = CLBeaconRegion(
      uuid: uuid, majorValue: beaconIdentityConstraint.major,
      minorValue: beaconIdentityConstraint.minor,
      identifier: identifier)
    copy.notifyOnEntry = notifyOnEntry
    copy.notifyOnExit = notifyOnExit
    copy.notifyEntryStateOnDisplay = notifyEntryStateOnDisplay
    return copy
  }
}
