import CoreLocation
import Foundation

/// A `CLBeacon` with the values a test gives (CoreLocation makes real ones only when it ranges;
/// its public `init()` is the one meant for subclasses in tests).
final class StubBeacon: CLBeacon, @unchecked Sendable {
  private let values: (UUID, Int, Int, CLProximity, Double, Int, Date)

  /// A beacon of these values.
  init(
    uuid: UUID, major: Int, minor: Int, proximity: CLProximity, accuracy: Double, rssi: Int,
    timestamp: Date
  ) {
    values = (uuid, major, minor, proximity, accuracy, rssi, timestamp)
    super.init()
  }

  /// Not used: stubs are not decoded.
  required init?(coder: NSCoder) { nil }

  override var uuid: UUID { values.0 }
  override var major: NSNumber { NSNumber(value: values.1) }
  override var minor: NSNumber { NSNumber(value: values.2) }
  override var proximity: CLProximity { values.3 }
  override var accuracy: CLLocationAccuracy { values.4 }
  override var rssi: Int { values.5 }
  override var timestamp: Date { values.6 }
}
