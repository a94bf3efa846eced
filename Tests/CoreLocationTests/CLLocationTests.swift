import CoreLocation
import Foundation
import Testing

@Suite struct CLLocationTests {
  static let cupertino = CLLocationCoordinate2D(latitude: 37.332_331_41, longitude: -122.031_218_6)

  @Test func latitudeLongitudeInitializerDefaults() {
    let before = Date()
    let location = CLLocation(latitude: 37.5, longitude: -122.25)
    let after = Date()
    #expect(location.coordinate.latitude == 37.5)
    #expect(location.coordinate.longitude == -122.25)
    #expect(location.altitude == 0)
    #expect(location.ellipsoidalAltitude == 0)
    #expect(location.horizontalAccuracy == 0)
    #expect(location.verticalAccuracy == -1)
    #expect(location.speed == -1)
    #expect(location.course == -1)
    #expect(location.speedAccuracy == -1)
    #expect(location.courseAccuracy == -1)
    #expect(location.timestamp >= before && location.timestamp <= after)
    #expect(location.floor == nil)
    #expect(location.sourceInformation == nil)
  }

  @Test func plainInitializerIsOrigin() {
    let location = CLLocation()
    #expect(location.coordinate.latitude == 0)
    #expect(location.coordinate.longitude == 0)
    #expect(location.verticalAccuracy == -1)
  }

  @Test func coordinateAltitudeInitializer() {
    let time = Date(timeIntervalSince1970: 1_444_167_299)
    let location = CLLocation(
      coordinate: Self.cupertino, altitude: 52.5, horizontalAccuracy: 5, verticalAccuracy: 3,
      timestamp: time)
    #expect(location.coordinate.latitude == Self.cupertino.latitude)
    #expect(location.coordinate.longitude == Self.cupertino.longitude)
    #expect(location.altitude == 52.5)
    #expect(location.ellipsoidalAltitude == 52.5)
    #expect(location.horizontalAccuracy == 5)
    #expect(location.verticalAccuracy == 3)
    #expect(location.speed == -1)
    #expect(location.course == -1)
    #expect(location.speedAccuracy == -1)
    #expect(location.courseAccuracy == -1)
    #expect(location.timestamp == time)
  }

  @Test func invalidAltitudeGivesZeroEllipsoidalAltitude() {
    let location = CLLocation(
      coordinate: Self.cupertino, altitude: 52.5, horizontalAccuracy: 5, verticalAccuracy: -1,
      timestamp: Date())
    #expect(location.altitude == 52.5)
    #expect(location.ellipsoidalAltitude == 0)
  }

  @Test func courseSpeedInitializer() {
    let time = Date(timeIntervalSince1970: 1_700_000_000)
    let location = CLLocation(
      coordinate: Self.cupertino, altitude: 10, horizontalAccuracy: 8, verticalAccuracy: 4,
      course: 270, speed: 13.5, timestamp: time)
    #expect(location.course == 270)
    #expect(location.speed == 13.5)
    #expect(location.courseAccuracy == -1)
    #expect(location.speedAccuracy == -1)
    #expect(location.timestamp == time)
  }

  @Test func accuracyInitializer() {
    let time = Date(timeIntervalSince1970: 1_700_000_000)
    let location = CLLocation(
      coordinate: Self.cupertino, altitude: 10, horizontalAccuracy: 8, verticalAccuracy: 4,
      course: 90, courseAccuracy: 2.5, speed: 1.25, speedAccuracy: 0.5, timestamp: time)
    #expect(location.course == 90)
    #expect(location.courseAccuracy == 2.5)
    #expect(location.speed == 1.25)
    #expect(location.speedAccuracy == 0.5)
    #expect(location.sourceInformation == nil)
  }

  @Test func sourceInformationInitializer() throws {
    let info = CLLocationSourceInformation(
      softwareSimulationState: true, andExternalAccessoryState: false)
    let location = CLLocation(
      coordinate: Self.cupertino, altitude: 10, horizontalAccuracy: 8, verticalAccuracy: 4,
      course: 90, courseAccuracy: 2.5, speed: 1.25, speedAccuracy: 0.5, timestamp: Date(),
      sourceInfo: info)
    let stored = try #require(location.sourceInformation)
    #expect(stored.isSimulatedBySoftware)
    #expect(!stored.isProducedByAccessory)
  }

  @Test func sourceInformationFlags() {
    let accessory = CLLocationSourceInformation(
      softwareSimulationState: false, andExternalAccessoryState: true)
    #expect(!accessory.isSimulatedBySoftware)
    #expect(accessory.isProducedByAccessory)
    let plain = CLLocationSourceInformation()
    #expect(!plain.isSimulatedBySoftware)
    #expect(!plain.isProducedByAccessory)
  }

  @Test func descriptionHasApplesShape() {
    let location = CLLocation(
      coordinate: Self.cupertino, altitude: 0, horizontalAccuracy: 5, verticalAccuracy: -1,
      course: -1, speed: 0, timestamp: Date(timeIntervalSince1970: 1_444_167_299))
    let text = location.description
    let expected = "<+37.33233141,-122.03121860> +/- 5.00m (speed 0.00 mps / course -1.00) @ "
    #expect(text.hasPrefix(expected))
    #expect(text.count > 75)
  }

  @Test func equalityIsIdentity() {
    let time = Date(timeIntervalSince1970: 1_700_000_000)
    let a = CLLocation(
      coordinate: Self.cupertino, altitude: 1, horizontalAccuracy: 1, verticalAccuracy: 1,
      timestamp: time)
    let b = CLLocation(
      coordinate: Self.cupertino, altitude: 1, horizontalAccuracy: 1, verticalAccuracy: 1,
      timestamp: time)
    #expect(a == a)
    #expect(a != b)
  }

  @Test func copyReturnsTheSameImmutableObject() throws {
    let location = CLLocation(latitude: 1, longitude: 2)
    let copy = try #require(location.copy() as? CLLocation)
    #expect(copy === location)
  }

  @Test func sendableAcrossTasks() async {
    let location = CLLocation(latitude: 51.5, longitude: -0.12)
    let latitude = await Task.detached { location.coordinate.latitude }.value
    #expect(latitude == 51.5)
  }

  @Test func secureCodingRoundTrip() throws {
    #expect(CLLocation.supportsSecureCoding)
    let time = Date(timeIntervalSince1970: 1_700_000_123.25)
    let original = CLLocation(
      coordinate: Self.cupertino, altitude: 72.25, horizontalAccuracy: 4.5, verticalAccuracy: 3,
      course: 181.5, courseAccuracy: 7, speed: 2.75, speedAccuracy: 0.25, timestamp: time,
      sourceInfo: CLLocationSourceInformation(
        softwareSimulationState: true, andExternalAccessoryState: true))
    let data = try NSKeyedArchiver.archivedData(
      withRootObject: original, requiringSecureCoding: true)
    let decoded = try #require(
      try NSKeyedUnarchiver.unarchivedObject(ofClass: CLLocation.self, from: data))
    #expect(decoded !== original)
    #expect(decoded.coordinate.latitude == original.coordinate.latitude)
    #expect(decoded.coordinate.longitude == original.coordinate.longitude)
    #expect(decoded.altitude == 72.25)
    #expect(decoded.ellipsoidalAltitude == 72.25)
    #expect(decoded.horizontalAccuracy == 4.5)
    #expect(decoded.verticalAccuracy == 3)
    #expect(decoded.course == 181.5)
    #expect(decoded.courseAccuracy == 7)
    #expect(decoded.speed == 2.75)
    #expect(decoded.speedAccuracy == 0.25)
    #expect(decoded.timestamp == time)
    #expect(decoded.floor == nil)
    let info = try #require(decoded.sourceInformation)
    #expect(info.isSimulatedBySoftware)
    #expect(info.isProducedByAccessory)
  }

  @Test func decodingGarbageFailsCleanly() {
    let garbage = Data("not an archive".utf8)
    let decoded = try? NSKeyedUnarchiver.unarchivedObject(ofClass: CLLocation.self, from: garbage)
    #expect(decoded == nil)
  }

  @Test func sourceInformationRoundTrip() throws {
    let original = CLLocationSourceInformation(
      softwareSimulationState: false, andExternalAccessoryState: true)
    let data = try NSKeyedArchiver.archivedData(
      withRootObject: original, requiringSecureCoding: true)
    let decoded = try #require(
      try NSKeyedUnarchiver.unarchivedObject(
        ofClass: CLLocationSourceInformation.self, from: data))
    #expect(!decoded.isSimulatedBySoftware)
    #expect(decoded.isProducedByAccessory)
    #expect(original.copy() as? CLLocationSourceInformation === original)
  }

  @Test func subclassesCanBeMadeAndOverrideValues() {
    final class FixedHeading: CLHeading {
      override var magneticHeading: CLLocationDirection { 90 }
    }
    #expect(FixedHeading().magneticHeading == 90)

    // Subclasses restate the conformance, as they must for Apple's Sendable CLLocation.
    final class Destination: CLLocation, @unchecked Sendable {
      let name: String
      init(name: String) {
        self.name = name
        super.init(latitude: 48.8584, longitude: 2.2945)
      }
      required init?(coder: NSCoder) { nil }
    }
    let destination = Destination(name: "tower")
    #expect(destination.coordinate.latitude == 48.8584)
    #expect(destination.name == "tower")
  }
}
