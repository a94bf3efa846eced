import CoreLocation
import Foundation
internal import LocationModel
internal import LocationSources
import Synchronization

/// An iBeacon in a simulated world (`SimulatedEnvironment.placeBeacon`): while present it
/// advertises every `advertisingInterval` seconds of the manual clock, heard at `rssi`, through the
/// environment's scripted source (which runs while something ranges beacons or monitors a beacon
/// region, like a Bluetooth adapter that scans only then).
///
/// Change `rssi` to move the beacon nearer or farther (the path-loss model gives about 1 m at the
/// measured power, 10 m at 20 dB below it); `remove()` makes it disappear, `restore()` brings it
/// back.
public final class ScriptedBeacon: Sendable {
  /// The beacon's proximity UUID.
  public let uuid: UUID
  /// Its major value.
  public let major: CLBeaconMajorValue
  /// Its minor value.
  public let minor: CLBeaconMinorValue
  /// The RSSI at 1 m it advertises, dBm.
  public let measuredPower: Int
  /// Seconds between two advertisements.
  public let advertisingInterval: TimeInterval
  private let state: Mutex<(rssi: Int, present: Bool)>

  init(
    uuid: UUID, major: CLBeaconMajorValue, minor: CLBeaconMinorValue, rssi: Int,
    measuredPower: Int, advertisingInterval: TimeInterval
  ) {
    self.uuid = uuid
    self.major = major
    self.minor = minor
    self.measuredPower = measuredPower
    self.advertisingInterval = advertisingInterval
    state = Mutex((rssi, true))
  }

  /// The signal strength the beacon is heard at, dBm.
  public var rssi: Int {
    get { state.withLock { $0.rssi } }
    set { state.withLock { $0.rssi = newValue } }
  }

  /// Whether the beacon advertises.
  public var isPresent: Bool { state.withLock { $0.present } }

  /// Stops advertising (the beacon is out of range or switched off).
  public func remove() { state.withLock { $0.present = false } }

  /// Advertises again.
  public func restore() { state.withLock { $0.present = true } }

  /// The advertisement heard now, if present.
  func advertisement(at time: Double) -> BeaconAdvertisement? {
    let (rssi, present) = state.withLock { ($0.rssi, $0.present) }
    guard present else { return nil }
    return BeaconAdvertisement(
      uuid: BeaconUUID(uuid), major: major, minor: minor, measuredPower: measuredPower, rssi: rssi,
      address: "simulated:\(uuid.uuidString):\(major):\(minor)", time: time)
  }
}
