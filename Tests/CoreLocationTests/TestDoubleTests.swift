import CoreLocation
import Foundation
import Testing

// Mocks as they are written for Apple platforms: created with `init()`, overriding the
// properties. They compile only while the classes have a public `init()` and `open` properties
// (issue 15).

final class MockBeacon: CLBeacon, @unchecked Sendable {
  override var uuid: UUID {
    UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0") ?? UUID()
  }
  override var major: NSNumber { 1 }
  override var minor: NSNumber { 2 }
  override var proximity: CLProximity { .near }
  override var accuracy: CLLocationAccuracy { 1.5 }
  override var rssi: Int { -60 }
}

final class MockFloor: CLFloor {
  override var level: Int { 3 }
}

final class MockRegion: CLRegion {
  override var identifier: String { "mock" }
}

final class MockHeading: CLHeading, @unchecked Sendable {
  override var magneticHeading: CLLocationDirection { 90 }
  override var trueHeading: CLLocationDirection { 92 }
}

final class MockPlacemark: CLPlacemark, @unchecked Sendable {
  override var locality: String? { "Cupertino" }
  override var isoCountryCode: String? { "US" }
}

@Suite struct TestDoubleTests {
  @Test func mocksCreatedWithInitOverrideTheirProperties() {
    let beacon = MockBeacon()
    #expect(beacon.proximity == .near && beacon.rssi == -60 && beacon.major == 1)
    #expect(beacon.uuid.uuidString.hasPrefix("E2C56DB5"))
    #expect(MockFloor().level == 3)
    #expect(MockRegion().identifier == "mock")
    #expect(MockHeading().trueHeading == 92)
    let placemark = MockPlacemark()
    #expect(placemark.locality == "Cupertino" && placemark.isoCountryCode == "US")
    #expect(placemark.name == nil && placemark.location == nil && placemark.timeZone == nil)
  }

  @Test func plainInitGivesEmptyValues() {
    let beacon = CLBeacon()
    #expect(beacon.proximity == .unknown && beacon.accuracy == -1 && beacon.rssi == 0)
    #expect(beacon.uuid == UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))
    #expect(CLFloor().level == 0)
    #expect(CLRegion().identifier.isEmpty)
    let placemark = CLPlacemark()
    #expect(placemark.country == nil && placemark.region == nil && placemark.postalAddress == nil)
  }
}
