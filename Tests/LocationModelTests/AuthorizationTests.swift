import LocationModel
import Testing

@Suite struct AuthorizationTests {
  /// Raw values are Apple's `CLAuthorizationStatus` and `CLAccuracyAuthorization` raw values.
  @Test func rawValuesAreApples() {
    #expect(AuthorizationStatus.allCases.map(\.rawValue) == [0, 1, 2, 3, 4])
    #expect(AuthorizationStatus.authorizedAlways.rawValue == 3)
    #expect(AuthorizationStatus.authorizedWhenInUse.rawValue == 4)
    #expect(AccuracyAuthorization.fullAccuracy.rawValue == 0)
    #expect(AccuracyAuthorization.reducedAccuracy.rawValue == 1)
  }

  @Test(arguments: AuthorizationStatus.allCases, [true, false])
  func locationsNeedAnAuthorizationAndServices(status: AuthorizationStatus, services: Bool) {
    let snapshot = AuthorizationSnapshot(status: status, servicesEnabled: services)
    let authorized = status == .authorizedAlways || status == .authorizedWhenInUse
    #expect(snapshot.allowsLocation == (authorized && services))
  }

  @Test func reducedAccuracyIsSaidByTheAccuracy() {
    #expect(!AuthorizationSnapshot(status: .authorizedAlways).isReduced)
    #expect(AuthorizationSnapshot(status: .denied, accuracy: .reducedAccuracy).isReduced)
  }
}
