import LocationModel

/// What NetworkManager's `org.freedesktop.NetworkManager.AccessPoint` objects say, kept per
/// wireless device from the properties it reports (`GetAll` when an access point is first seen,
/// `PropertiesChanged` afterwards), and the scan they make together.
///
/// Pure: no bus, no clock. The rules (ours):
/// - a reading needs a `HwAddress` that reads as a BSSID (`AA:BB:CC:DD:EE:FF`); others are left
///   out;
/// - `Strength` (0–100 %) becomes dBm as `percent / 2 − 100`, the inverse of NetworkManager's
///   own mapping of dBm to a percentage;
/// - `LastSeen` is NetworkManager's CLOCK_BOOTTIME seconds of the scan that last reported the
///   access point (-1: never): an access point never seen is left out, and so is one whose
///   `LastSeen` is more than `maximumAge` seconds older than the newest one (NetworkManager drops
///   such access points itself, later);
/// - the same BSSID on two devices is reported once, with the stronger signal.
struct WifiAccessPointTable: Sendable {
  /// One access point as last reported.
  struct AccessPoint: Sendable, Equatable {
    /// `HwAddress`, parsed; nil when it does not read as a BSSID.
    var bssid: UInt64?
    /// `Ssid`, bytes.
    var ssid: [UInt8] = []
    /// `Strength`, percent.
    var strength: Int = 0
    /// `Frequency`, MHz.
    var frequency: Int = 0
    /// `LastSeen`, CLOCK_BOOTTIME seconds; -1 when never seen.
    var lastSeen: Int = -1
  }

  /// How much older than the newest access point's `LastSeen` one may be and still be reported,
  /// in seconds.
  static let maximumAge = 120

  /// The access points by device path, then by access point path.
  private(set) var devices: [String: [String: AccessPoint]] = [:]

  /// Creates an empty table.
  init() {}

  /// The paths of the devices in the table.
  var devicePaths: [String] { devices.keys.sorted() }

  /// Starts (or restarts) a device with no access points.
  mutating func addDevice(_ devicePath: String) {
    devices[devicePath] = [:]
  }

  /// Forgets a device and its access points.
  mutating func removeDevice(_ devicePath: String) {
    devices[devicePath] = nil
  }

  /// Whether `devicePath` is in the table.
  func hasDevice(_ devicePath: String) -> Bool { devices[devicePath] != nil }

  /// An access point of `devicePath` appeared with all its properties (a fresh start for that
  /// path). Nothing happens for a device not in the table.
  mutating func add(device devicePath: String, path: String, properties: [String: DBusValue]) {
    guard devices[devicePath] != nil else { return }
    devices[devicePath]?[path] = Self.accessPoint(AccessPoint(), applying: properties)
  }

  /// `PropertiesChanged` on an access point: applied wherever the access point is known.
  /// - Returns: whether the access point is known.
  @discardableResult
  mutating func change(path: String, changed: [String: DBusValue]) -> Bool {
    var known = false
    for devicePath in devices.keys {
      guard let accessPoint = devices[devicePath]?[path] else { continue }
      devices[devicePath]?[path] = Self.accessPoint(accessPoint, applying: changed)
      known = true
    }
    return known
  }

  /// Forgets an access point of a device (`AccessPointRemoved`).
  /// - Returns: whether it was known.
  @discardableResult
  mutating func remove(device devicePath: String, path: String) -> Bool {
    devices[devicePath]?.removeValue(forKey: path) != nil
  }

  /// The readings of every current access point of every device, by BSSID.
  var readings: [AccessPointReading] {
    Self.readings(devices.values.flatMap(\.values))
  }

  /// The readings of `accessPoints` under the rules above, sorted by BSSID.
  static func readings(_ accessPoints: [AccessPoint]) -> [AccessPointReading] {
    let seen = accessPoints.filter { $0.bssid != nil && $0.lastSeen >= 0 }
    guard let newest = seen.map(\.lastSeen).max() else { return [] }
    var strongest: [UInt64: AccessPointReading] = [:]
    for accessPoint in seen where newest - accessPoint.lastSeen <= maximumAge {
      guard let bssid = accessPoint.bssid else { continue }
      let reading = AccessPointReading(
        bssid: bssid, ssid: accessPoint.ssid, signal: dBm(percent: accessPoint.strength),
        frequency: accessPoint.frequency)
      if let other = strongest[bssid], other.signal >= reading.signal { continue }
      strongest[bssid] = reading
    }
    return strongest.values.sorted { $0.bssid < $1.bssid }
  }

  /// NetworkManager's `Strength` percentage as dBm: `percent / 2 − 100` (0 % is -100 dBm, 100 %
  /// is -50 dBm); out-of-range percentages are clamped to 0–100 first.
  static func dBm(percent: Int) -> Double {
    Double(min(max(percent, 0), 100)) / 2 - 100
  }

  /// `accessPoint` with the properties in `properties` applied (others are ignored, and so are
  /// values of the wrong type).
  static func accessPoint(_ accessPoint: AccessPoint, applying properties: [String: DBusValue])
    -> AccessPoint
  {
    var result = accessPoint
    if case .string(let address) = properties["HwAddress"] {
      result.bssid = AccessPointReading.bssid(address)
    }
    if case .bytes(let ssid) = properties["Ssid"] { result.ssid = ssid }
    if let strength = properties["Strength"]?.integerValue { result.strength = strength }
    if let frequency = properties["Frequency"]?.integerValue { result.frequency = frequency }
    if let lastSeen = properties["LastSeen"]?.integerValue { result.lastSeen = lastSeen }
    return result
  }
}
