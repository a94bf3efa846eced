import CoreLocation
import Foundation
import Testing

@Suite struct CLErrorTests {
  static let codes: [(CLError.Code, Int)] = [
    (.locationUnknown, 0), (.denied, 1), (.network, 2), (.headingFailure, 3),
    (.regionMonitoringDenied, 4), (.regionMonitoringFailure, 5),
    (.regionMonitoringSetupDelayed, 6), (.regionMonitoringResponseDelayed, 7),
    (.geocodeFoundNoResult, 8), (.geocodeFoundPartialResult, 9), (.geocodeCanceled, 10),
    (.deferredFailed, 11), (.deferredNotUpdatingLocation, 12), (.deferredAccuracyTooLow, 13),
    (.deferredDistanceFiltered, 14), (.deferredCanceled, 15), (.rangingUnavailable, 16),
    (.rangingFailure, 17), (.promptDeclined, 18), (.historicalLocationError, 19),
  ]

  @Test(arguments: codes)
  func codeRawValue(code: CLError.Code, raw: Int) throws {
    #expect(code.rawValue == raw)
    #expect(CLError.Code(rawValue: raw) == code)
    let error = CLError(code)
    #expect(error.code == code)
    #expect(error.errorCode == raw)
    let bridged = error as NSError
    #expect(bridged.domain == kCLErrorDomain)
    #expect(bridged.code == raw)
  }

  @Test func unknownRawValueHasNoCode() {
    #expect(CLError.Code(rawValue: 20) == nil)
    #expect(CLError.Code(rawValue: -1) == nil)
  }

  @Test func staticMembersAreCodes() {
    let members: [CLError.Code] = [
      CLError.locationUnknown, CLError.denied, CLError.network, CLError.headingFailure,
      CLError.regionMonitoringDenied, CLError.regionMonitoringFailure,
      CLError.regionMonitoringSetupDelayed, CLError.regionMonitoringResponseDelayed,
      CLError.geocodeFoundNoResult, CLError.geocodeFoundPartialResult, CLError.geocodeCanceled,
      CLError.deferredFailed, CLError.deferredNotUpdatingLocation, CLError.deferredAccuracyTooLow,
      CLError.deferredDistanceFiltered, CLError.deferredCanceled, CLError.rangingUnavailable,
      CLError.rangingFailure, CLError.promptDeclined, CLError.historicalLocationError,
    ]
    #expect(members.map(\.rawValue) == Array(0...19))
  }

  @Test func domain() {
    #expect(CLError.errorDomain == kCLErrorDomain)
    #expect(CLError.errorDomain == "kCLErrorDomain")
  }

  @Test func catchByTypeAndByCode() {
    func fail() throws { throw CLError(.denied) }
    var caughtByType = false
    do {
      try fail()
    } catch let error as CLError {
      caughtByType = error.code == .denied
    } catch {
      Issue.record("not caught as CLError: \(error)")
    }
    #expect(caughtByType)

    var caughtByCode = false
    do {
      try fail()
    } catch CLError.network {
      Issue.record("matched the wrong code")
    } catch CLError.denied {
      caughtByCode = true
    } catch {
      Issue.record("not matched by code: \(error)")
    }
    #expect(caughtByCode)
  }

  @Test func codePatternIgnoresOtherErrors() {
    let other: any Error = CocoaError(.fileNoSuchFile)
    #expect(!(CLError.Code.locationUnknown ~= other))
  }

  @Test func userInfoAndBridging() throws {
    let error = CLError(.network, userInfo: ["reason": "offline"])
    #expect(error.userInfo["reason"] as? String == "offline")
    #expect(error.errorUserInfo["reason"] as? String == "offline")
    let bridged = error as NSError
    #expect(bridged.userInfo["reason"] as? String == "offline")
    let asError: any Error = error
    #expect((asError as NSError).domain == "kCLErrorDomain")
    #expect(!asError.localizedDescription.isEmpty)
  }

  @Test func alternateRegion() throws {
    let region = CLCircularRegion(
      center: CLLocationCoordinate2D(latitude: 48.8584, longitude: 2.2945), radius: 200,
      identifier: "tower")
    let error = CLError(
      .regionMonitoringResponseDelayed, userInfo: [kCLErrorUserInfoAlternateRegionKey: region])
    let alternate = try #require(error.alternateRegion)
    #expect(alternate === region)
    #expect(CLError(.regionMonitoringResponseDelayed).alternateRegion == nil)
  }

  @Test func equalityAndHashing() {
    #expect(CLError(.denied) == CLError(.denied))
    #expect(CLError(.denied) != CLError(.network))
    #expect(CLError(.denied, userInfo: ["a": 1]) == CLError(.denied, userInfo: ["a": 1]))
    #expect(CLError(.denied, userInfo: ["a": 1]) != CLError(.denied, userInfo: ["a": 2]))
    #expect(CLError(.denied).hashValue == CLError(.denied).hashValue)
    let set: Set<CLError> = [CLError(.denied), CLError(.denied), CLError(.network)]
    #expect(set.count == 2)
  }
}
