import Foundation
import Geodesy
import LocationModel
import Testing

@testable import CoreLocation

@Suite struct CLLocationFixTests {
  @Test func fullFix() throws {
    let fix = Fix(
      latitude: 59.3293, longitude: 18.0686, altitude: 28, ellipsoidalAltitude: 52.5,
      horizontalAccuracy: 3.5, verticalAccuracy: 6, speed: 1.5, speedAccuracy: 0.3, course: 200,
      courseAccuracy: 12, time: 1_700_000_000.5, quality: .differential, satellitesUsed: 9,
      floor: 3, isSimulated: false, source: "gpsd://127.0.0.1:2947")
    let location = CLLocation(fix: fix)
    #expect(location.coordinate.latitude == 59.3293)
    #expect(location.coordinate.longitude == 18.0686)
    #expect(location.altitude == 28)
    #expect(location.ellipsoidalAltitude == 52.5)
    #expect(location.horizontalAccuracy == 3.5)
    #expect(location.verticalAccuracy == 6)
    #expect(location.speed == 1.5)
    #expect(location.speedAccuracy == 0.3)
    #expect(location.course == 200)
    #expect(location.courseAccuracy == 12)
    #expect(location.timestamp == Date(timeIntervalSince1970: 1_700_000_000.5))
    #expect(location.floor?.level == 3)
    let info = try #require(location.sourceInformation)
    #expect(!info.isSimulatedBySoftware)
    #expect(!info.isProducedByAccessory)
  }

  @Test func fixWithoutAltitudeHasInvalidVerticalAccuracy() {
    let fix = Fix(
      latitude: 1, longitude: 2, horizontalAccuracy: 10, verticalAccuracy: 4, time: 0,
      isSimulated: true)
    let location = CLLocation(fix: fix)
    #expect(location.verticalAccuracy == -1)
    #expect(location.altitude == 0)
    #expect(location.ellipsoidalAltitude == 0)
    #expect(location.floor == nil)
    #expect(location.sourceInformation?.isSimulatedBySoftware == true)
  }

  @Test func fixWithOneAltitudeFillsTheOther() {
    let msl = CLLocation(
      fix: Fix(
        latitude: 1, longitude: 2, altitude: 100, horizontalAccuracy: 10,
        verticalAccuracy: 4, time: 0))
    #expect(msl.altitude == 100)
    #expect(msl.ellipsoidalAltitude == 100)
    let hae = CLLocation(
      fix: Fix(
        latitude: 1, longitude: 2, ellipsoidalAltitude: 150, horizontalAccuracy: 10,
        verticalAccuracy: 4, time: 0))
    #expect(hae.altitude == 150)
    #expect(hae.ellipsoidalAltitude == 150)
  }

  @Test func locationToFix() {
    let location = CLLocation(
      coordinate: CLLocationCoordinate2D(latitude: -33.8688, longitude: 151.2093), altitude: 58,
      horizontalAccuracy: 7, verticalAccuracy: 9, course: 12, courseAccuracy: 3, speed: 4,
      speedAccuracy: 0.5, timestamp: Date(timeIntervalSince1970: 1_600_000_000),
      sourceInfo: CLLocationSourceInformation(
        softwareSimulationState: true, andExternalAccessoryState: false))
    let fix = Fix(location: location, source: "replay:///track.gpx")
    #expect(fix.latitude == -33.8688)
    #expect(fix.longitude == 151.2093)
    #expect(fix.altitude == 58)
    #expect(fix.ellipsoidalAltitude == 58)
    #expect(fix.horizontalAccuracy == 7)
    #expect(fix.verticalAccuracy == 9)
    #expect(fix.course == 12)
    #expect(fix.courseAccuracy == 3)
    #expect(fix.speed == 4)
    #expect(fix.speedAccuracy == 0.5)
    #expect(fix.time == 1_600_000_000)
    #expect(fix.quality == .simulated)
    #expect(fix.isSimulated)
    #expect(fix.floor == nil)
    #expect(fix.source == "replay:///track.gpx")
  }

  @Test func locationToFixQualityAndAltitudes() {
    let plain = Fix(location: CLLocation(latitude: 1, longitude: 2), source: "test")
    #expect(plain.quality == .manual)
    #expect(!plain.isSimulated)
    #expect(plain.altitude == nil)
    #expect(plain.ellipsoidalAltitude == nil)
    let invalid = CLLocation(
      coordinate: CLLocationCoordinate2D(latitude: 1, longitude: 2), altitude: 0,
      horizontalAccuracy: -1, verticalAccuracy: -1, timestamp: Date())
    #expect(Fix(location: invalid, source: "test").quality == .none)
  }

  @Test func roundTripThroughFix() {
    let fix = Fix(
      latitude: 10, longitude: 20, altitude: 30, ellipsoidalAltitude: 31, horizontalAccuracy: 4,
      verticalAccuracy: 5, speed: 6, speedAccuracy: 7, course: 8, courseAccuracy: 9, time: 12_345,
      quality: .simulated, floor: -1, isSimulated: true, source: "sim")
    #expect(Fix(location: CLLocation(fix: fix), source: "sim") == fix)
  }
}
