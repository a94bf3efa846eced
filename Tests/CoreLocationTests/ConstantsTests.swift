import CoreLocation
import Foundation
import Testing

@Suite struct ConstantsTests {
  @Test(arguments: [
    (kCLLocationAccuracyBestForNavigation, -2.0),
    (kCLLocationAccuracyBest, -1.0),
    (kCLLocationAccuracyNearestTenMeters, 10.0),
    (kCLLocationAccuracyHundredMeters, 100.0),
    (kCLLocationAccuracyKilometer, 1000.0),
    (kCLLocationAccuracyThreeKilometers, 3000.0),
    (kCLLocationAccuracyReduced, 6_380_000.0),
    (kCLDistanceFilterNone, -1.0),
    (kCLHeadingFilterNone, -1.0),
    (CLLocationDistanceMax, Double.greatestFiniteMagnitude),
    (CLTimeIntervalMax, Double.greatestFiniteMagnitude),
  ])
  func numericConstant(value: Double, expected: Double) {
    #expect(value == expected)
  }

  @Test func reducedAccuracyDiffersFromEveryOtherAccuracy() {
    let others = [
      kCLLocationAccuracyBestForNavigation, kCLLocationAccuracyBest,
      kCLLocationAccuracyNearestTenMeters, kCLLocationAccuracyHundredMeters,
      kCLLocationAccuracyKilometer, kCLLocationAccuracyThreeKilometers,
    ]
    #expect(!others.contains(kCLLocationAccuracyReduced))
  }

  @Test func errorDomainAndKeys() {
    #expect(kCLErrorDomain == "kCLErrorDomain")
    #expect(kCLErrorUserInfoAlternateRegionKey == "kCLErrorUserInfoAlternateRegionKey")
  }

  @Test func typeAliasesAreDouble() {
    let values: [Double] = [
      CLLocationDegrees(1), CLLocationAccuracy(1), CLLocationSpeed(1),
      CLLocationSpeedAccuracy(1), CLLocationDirection(1), CLLocationDirectionAccuracy(1),
      CLLocationDistance(1), CLHeadingComponentValue(1),
    ]
    #expect(values.allSatisfy { $0 == 1 })
  }

  @Test(arguments: [
    (CLAuthorizationStatus.notDetermined, Int32(0)),
    (.restricted, 1),
    (.denied, 2),
    (.authorizedAlways, 3),
    (.authorizedWhenInUse, 4),
  ])
  func authorizationStatusRawValue(status: CLAuthorizationStatus, raw: Int32) {
    #expect(status.rawValue == raw)
    #expect(CLAuthorizationStatus(rawValue: raw) == status)
  }

  @Test func deprecatedAuthorizedIsAuthorizedAlways() {
    #expect(deprecated.authorized == .authorizedAlways)
    #expect(CLAuthorizationStatus(rawValue: 5) == nil)
  }

  @Test(arguments: [
    (CLAccuracyAuthorization.fullAccuracy, 0),
    (.reducedAccuracy, 1),
  ])
  func accuracyAuthorizationRawValue(value: CLAccuracyAuthorization, raw: Int) {
    #expect(value.rawValue == raw)
    #expect(CLAccuracyAuthorization(rawValue: raw) == value)
  }

  @Test(arguments: [
    (CLActivityType.other, 1),
    (.automotiveNavigation, 2),
    (.fitness, 3),
    (.otherNavigation, 4),
    (.airborne, 5),
  ])
  func activityTypeRawValue(value: CLActivityType, raw: Int) {
    #expect(value.rawValue == raw)
    #expect(CLActivityType(rawValue: raw) == value)
  }

  @Test func activityTypeHasNoZero() {
    #expect(CLActivityType(rawValue: 0) == nil)
  }

  @Test(arguments: [
    (CLDeviceOrientation.unknown, Int32(0)),
    (.portrait, 1),
    (.portraitUpsideDown, 2),
    (.landscapeLeft, 3),
    (.landscapeRight, 4),
    (.faceUp, 5),
    (.faceDown, 6),
  ])
  func deviceOrientationRawValue(value: CLDeviceOrientation, raw: Int32) {
    #expect(value.rawValue == raw)
    #expect(CLDeviceOrientation(rawValue: raw) == value)
  }

  @Test(arguments: [
    (CLRegionState.unknown, 0),
    (.inside, 1),
    (.outside, 2),
  ])
  func regionStateRawValue(value: CLRegionState, raw: Int) {
    #expect(value.rawValue == raw)
    #expect(CLRegionState(rawValue: raw) == value)
  }
}
