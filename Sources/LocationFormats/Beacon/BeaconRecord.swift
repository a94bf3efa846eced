import LocationModel

/// One Bluetooth LE advertisement as a recording keeps it: one line of a `BeaconRecording`.
///
/// The manufacturer-specific data is kept as BlueZ gives it in `org.bluez.Device1`'s
/// `ManufacturerData` property (BlueZ, `doc/org.bluez.Device.rst`): a dictionary from the 16-bit
/// company identifier (Bluetooth SIG "Assigned Numbers") to the bytes that follow it in the
/// advertisement's "Manufacturer Specific Data" AD structure.
package struct BeaconRecord: Sendable, Equatable {
  /// When it was heard: wall-clock seconds since 1970-01-01T00:00:00Z, fractional.
  package var time: Double
  /// The sender's Bluetooth address (`AA:BB:CC:DD:EE:FF`), or another stable name of the sender.
  package var address: String
  /// The received signal strength, dBm (BlueZ's `RSSI`).
  package var rssi: Int
  /// The manufacturer-specific data: company identifier → the bytes after it.
  package var manufacturer: [UInt16: [UInt8]]

  /// Creates a record.
  package init(time: Double, address: String, rssi: Int, manufacturer: [UInt16: [UInt8]]) {
    self.time = time
    self.address = address
    self.rssi = rssi
    self.manufacturer = manufacturer
  }

  /// The record of an iBeacon advertisement: Apple's company identifier with the frame's bytes
  /// (Apple, "Proximity Beacon Specification"; see `IBeaconFrame`).
  package init(_ advertisement: BeaconAdvertisement) {
    let frame = IBeaconFrame(
      uuid: advertisement.uuid, major: advertisement.major, minor: advertisement.minor,
      measuredPower: advertisement.measuredPower)
    self.init(
      time: advertisement.time, address: advertisement.address, rssi: advertisement.rssi,
      manufacturer: [IBeaconFrame.appleCompanyID: frame.manufacturerData])
  }

  /// The iBeacon advertisement this record holds, if any.
  ///
  /// - Returns: the advertisement when Apple's data (company 0x004C) is an iBeacon frame; nil when
  ///   the record holds no iBeacon (another company, or Apple's data of another type).
  /// - Throws: `FormatError` (`.malformed`) from `IBeaconFrame.decode` when Apple's data says it is
  ///   an iBeacon but is not a well-formed one.
  package func advertisement() throws(FormatError) -> BeaconAdvertisement? {
    guard let data = manufacturer[IBeaconFrame.appleCompanyID],
      let frame = try IBeaconFrame.decode(companyID: IBeaconFrame.appleCompanyID, data: data)
    else { return nil }
    return frame.advertisement(rssi: rssi, address: address, time: time)
  }
}
