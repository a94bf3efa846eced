import LocationFormats
import LocationModel

/// What BlueZ's `org.bluez.Device1` objects say about iBeacons: each device's address, its last
/// RSSI and its last iBeacon frame, kept from the properties BlueZ reports (the initial
/// `GetManagedObjects`, `InterfacesAdded`, `PropertiesChanged`).
///
/// Pure: no bus, no clock. Each report returns what was heard, if anything:
/// - a device is heard when its report carries `ManufacturerData` or `RSSI` and it then has both
///   an RSSI and an iBeacon frame (a change of `RSSI` alone repeats the last frame with the new
///   RSSI);
/// - a device without `RSSI` (BlueZ's cached device, not heard now) is not heard;
/// - `ManufacturerData` whose Apple (0x004C) entry is a malformed iBeacon frame is counted in
///   `malformedFrames` and leaves the device without a frame; other companies' entries and
///   Apple's other data are ignored.
struct BlueZBeaconTable: Sendable {
  /// One device as last reported.
  struct Device: Sendable, Equatable {
    /// `Address`.
    var address: String?
    /// `RSSI`, dBm; nil when BlueZ has none (not heard now).
    var rssi: Int?
    /// The iBeacon frame of its last `ManufacturerData`, if it was one.
    var frame: IBeaconFrame?
  }

  /// One advertisement heard: the frame, the RSSI it came with and the sender's address.
  struct Heard: Sendable, Equatable {
    /// The decoded frame.
    var frame: IBeaconFrame
    /// The received signal strength, dBm.
    var rssi: Int
    /// The sender's address.
    var address: String
  }

  /// The devices by object path.
  private(set) var devices: [String: Device] = [:]
  /// How many malformed iBeacon frames were reported (and skipped).
  private(set) var malformedFrames = 0

  /// Creates an empty table.
  init() {}

  /// A device appeared with all its `Device1` properties (a fresh start for that path).
  /// - Returns: the advertisement it carries, if any.
  mutating func add(path: String, properties: [String: DBusValue]) -> Heard? {
    devices[path] = Device()
    return change(path: path, changed: properties, invalidated: [])
  }

  /// `PropertiesChanged` on a device's `Device1` (an unknown path is added).
  /// - Returns: the advertisement the change carries, if any.
  mutating func change(path: String, changed: [String: DBusValue], invalidated: [String])
    -> Heard?
  {
    var device = devices[path] ?? Device()
    if case .string(let address) = changed["Address"] { device.address = address }
    if invalidated.contains("RSSI") { device.rssi = nil }
    if invalidated.contains("ManufacturerData") { device.frame = nil }
    if let rssi = changed["RSSI"] { device.rssi = rssi.integerValue }
    if let data = changed["ManufacturerData"] {
      do {
        device.frame = try Self.frame(inManufacturerData: data)
      } catch {
        malformedFrames += 1
        device.frame = nil
      }
    }
    devices[path] = device
    guard changed["RSSI"] != nil || changed["ManufacturerData"] != nil,
      let frame = device.frame, let rssi = device.rssi
    else { return nil }
    return Heard(
      frame: frame, rssi: rssi, address: device.address ?? Self.address(fromPath: path))
  }

  /// Forgets a device (`InterfacesRemoved`).
  mutating func remove(path: String) {
    devices[path] = nil
  }

  /// Forgets every device under the adapter object `adapterPath` (an adapter that went away).
  mutating func removeAll(under adapterPath: String) {
    devices = devices.filter { !$0.key.hasPrefix(adapterPath + "/") }
  }

  /// The iBeacon frame in a `ManufacturerData` value (`a{qv}`, each value an `ay`): Apple's entry
  /// decoded; nil when there is no Apple entry, or it is not an iBeacon, or the value is not a
  /// dictionary of byte arrays.
  /// - Throws: `FormatError` when Apple's entry is a malformed iBeacon frame.
  static func frame(inManufacturerData value: DBusValue) throws(FormatError) -> IBeaconFrame? {
    guard case .bytes(let data) = value[.uint16(IBeaconFrame.appleCompanyID)] else { return nil }
    return try IBeaconFrame.decode(companyID: IBeaconFrame.appleCompanyID, data: data)
  }

  /// The address in a BlueZ device path (`/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF` gives
  /// `AA:BB:CC:DD:EE:FF`), for a device whose `Address` was never reported; the path's last
  /// component otherwise.
  static func address(fromPath path: String) -> String {
    let last = path.split(separator: "/").last.map(String.init) ?? path
    guard last.hasPrefix("dev_") else { return last }
    return String(last.dropFirst(4).map { $0 == "_" ? ":" : $0 })
  }
}
