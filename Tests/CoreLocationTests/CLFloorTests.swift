import Foundation
import Testing

@testable import CoreLocation

@Suite struct CLFloorTests {
  @Test(arguments: [-3, 0, 1, 42])
  func levelRoundTrip(level: Int) throws {
    let floor = CLFloor(level: level)
    #expect(floor.level == level)
    #expect(floor.copy() as? CLFloor === floor)
    let data = try NSKeyedArchiver.archivedData(withRootObject: floor, requiringSecureCoding: true)
    let decoded = try #require(
      try NSKeyedUnarchiver.unarchivedObject(ofClass: CLFloor.self, from: data))
    #expect(decoded.level == level)
  }

  @Test func locationWithFloorRoundTrip() throws {
    let location = CLLocation(
      values: .init(
        coordinate: CLLocationCoordinate2D(latitude: 1, longitude: 2), altitude: 3,
        ellipsoidalAltitude: 4, horizontalAccuracy: 5, verticalAccuracy: 6, course: 7,
        courseAccuracy: 8, speed: 9, speedAccuracy: 10, timestamp: Date(timeIntervalSince1970: 11)),
      floor: CLFloor(level: -2), sourceInformation: nil)
    let data = try NSKeyedArchiver.archivedData(
      withRootObject: location, requiringSecureCoding: true)
    let decoded = try #require(
      try NSKeyedUnarchiver.unarchivedObject(ofClass: CLLocation.self, from: data))
    #expect(decoded.floor?.level == -2)
    #expect(decoded.ellipsoidalAltitude == 4)
    #expect(decoded.sourceInformation == nil)
  }
}
