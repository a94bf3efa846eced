import CoreLocation
import CoreLocationTesting
import Foundation
import Synchronization
import TestSupport
import Testing

/// Records what the beacon and authorization delegate methods hear, in order.
final class SessionDelegate: NSObject, CLLocationManagerDelegate, @unchecked Sendable {
  // @unchecked: the simulated environment calls it on the test's own thread only.
  var calls: [String] = []
  var errors: [CLError] = []

  func locationManagerDidChangeAuthorization(_ manager: CLLocationManager) {
    calls.append("authorization \(manager.accuracyAuthorization.rawValue)")
  }

  func locationManager(
    _ manager: CLLocationManager, didFailRangingFor beaconConstraint: CLBeaconIdentityConstraint,
    error: any Error
  ) {
    calls.append("ranging failed \(beaconConstraint.major ?? 0)")
    if let error = error as? CLError { errors.append(error) }
  }

  func locationManager(
    _ manager: CLLocationManager, rangingBeaconsDidFailFor region: CLBeaconRegion,
    withError error: any Error
  ) {
    calls.append("region ranging failed \(region.identifier)")
    if let error = error as? CLError { errors.append(error) }
  }
}

/// `CLServiceSession`, `CLBackgroundActivitySession`, temporary full accuracy and the beacon
/// ranging methods in embedded mode, on the simulated environment (its policy answers requests;
/// no one can be asked for temporary full accuracy).
@Suite struct SessionTests {
  /// The first diagnostic of a session.
  func first(_ session: CLServiceSession) async -> CLServiceSession.Diagnostic? {
    var iterator = session.diagnostics.makeAsyncIterator()
    return await iterator.next()
  }

  @Test func aWhenInUseSessionAsksForItsAuthorization() async throws {
    let world = SimulatedEnvironment(policyGrants: true)
    let session = world.run { CLServiceSession(authorization: .whenInUse) }
    world.pump()
    let manager = world.run { CLLocationManager() }
    #expect(manager.authorizationStatus == .authorizedWhenInUse)
    let diagnostic = try #require(await first(session))
    #expect(!diagnostic.authorizationDenied && !diagnostic.authorizationRequestInProgress)
    #expect(!diagnostic.insufficientlyInUse && !diagnostic.serviceSessionRequired)
    #expect(!diagnostic.accuracyLimited && !diagnostic.alwaysAuthorizationDenied)
    session.invalidate()
  }

  @Test func aNoneSessionAsksNothing() async throws {
    let world = SimulatedEnvironment(policyGrants: true)
    let session = world.run { CLServiceSession(authorization: .none) }
    world.pump()
    #expect(world.run { CLLocationManager() }.authorizationStatus == .notDetermined)
    _ = session
  }

  @Test func diagnosticsReportTheAppsState() async throws {
    let always = SimulatedEnvironment(authorization: .authorizedWhenInUse, policyGrants: false)
    let alwaysSession = always.run { CLServiceSession(authorization: .always) }
    always.pump()
    #expect(try #require(await first(alwaysSession)).alwaysAuthorizationDenied)

    let denied = SimulatedEnvironment(authorization: .denied)
    #expect(
      try #require(await first(denied.run { CLServiceSession(authorization: .whenInUse) }))
        .authorizationDenied)

    let off = SimulatedEnvironment(authorization: .authorizedAlways, locationServicesEnabled: false)
    let offDiagnostic = try #require(
      await first(off.run { CLServiceSession(authorization: .none) }))
    #expect(offDiagnostic.authorizationDeniedGlobally && !offDiagnostic.authorizationDenied)

    let reduced = SimulatedEnvironment(
      authorization: .authorizedWhenInUse, accuracy: .reducedAccuracy)
    let keyed = reduced.run {
      CLServiceSession(authorization: .whenInUse, fullAccuracyPurposeKey: "Docking")
    }
    reduced.pump()
    let limited = try #require(await first(keyed))
    #expect(limited.accuracyLimited && limited.fullAccuracyDenied)
    let unkeyed = try #require(
      await first(reduced.run { CLServiceSession(authorization: .whenInUse) }))
    #expect(unkeyed.accuracyLimited && !unkeyed.fullAccuracyDenied)
  }

  @Test func diagnosticsFollowChangesAndEndWithTheSession() async throws {
    let world = SimulatedEnvironment(authorization: .authorizedAlways)
    let session = world.run { CLServiceSession(authorization: .always) }
    var iterator = session.diagnostics.makeAsyncIterator()
    #expect(await iterator.next()?.authorizationDenied == false)
    world.setAuthorization(.denied)
    #expect(await iterator.next()?.authorizationDenied == true)
    session.invalidate()
    #expect(await iterator.next() == nil)
    var late = session.diagnostics.makeAsyncIterator()
    #expect(await late.next() == nil, "an invalidated session has no diagnostics")
  }

  @Test func aBackgroundActivitySessionReportsTheAppsState() async throws {
    let world = SimulatedEnvironment(authorization: .restricted)
    let session = world.run { CLBackgroundActivitySession() }
    var iterator = session.diagnostics.makeAsyncIterator()
    let diagnostic = try #require(await iterator.next())
    #expect(diagnostic.authorizationRestricted && !diagnostic.authorizationDenied)
    #expect(!diagnostic.insufficientlyInUse && !diagnostic.serviceSessionRequired)
    world.setLocationServicesEnabled(false)
    #expect(await iterator.next()?.authorizationDeniedGlobally == true)
    session.invalidate()
    #expect(await iterator.next() == nil)
  }

  @Test func temporaryFullAccuracyIsDeclinedInEmbeddedMode() async throws {
    let world = SimulatedEnvironment(
      authorization: .authorizedWhenInUse, accuracy: .reducedAccuracy)
    let manager = world.run { CLLocationManager() }
    let answers = Mutex<[CLError.Code?]>([])
    manager.requestTemporaryFullAccuracyAuthorization(withPurposeKey: "Docking") { error in
      answers.withLock { $0.append((error as? CLError)?.code) }
    }
    // The form without a completion (a closure: in async code the async form is chosen, as on
    // Apple platforms).
    let withoutCompletion = {
      manager.requestTemporaryFullAccuracyAuthorization(withPurposeKey: "K")
    }
    withoutCompletion()
    #expect(await eventually(pump: world.pump) { answers.withLock { $0.count } == 1 })
    #expect(answers.withLock { $0 } == [.promptDeclined])
    #expect(manager.accuracyAuthorization == .reducedAccuracy, "the stored accuracy rules")
    do {
      try await manager.requestTemporaryFullAccuracyAuthorization(withPurposeKey: "Docking")
      Issue.record("no error")
    } catch let error as CLError {
      #expect(error.code == .promptDeclined)
      #expect(error.localizedDescription.contains("embedded mode"))
    }
    let full = SimulatedEnvironment(authorization: .authorizedAlways)
    let fullManager = full.run { CLLocationManager() }
    await #expect(throws: CLError.self) {
      try await fullManager.requestTemporaryFullAccuracyAuthorization(withPurposeKey: "Docking")
    }
  }

  @Test func rangingFailsHonestlyWithoutARadio() throws {
    let world = SimulatedEnvironment(authorization: .authorizedWhenInUse, beaconsAvailable: false)
    let delegate = SessionDelegate()
    let manager = world.run { CLLocationManager() }
    manager.delegate = delegate
    let uuid = try #require(UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"))
    let constraint = CLBeaconIdentityConstraint(uuid: uuid, major: 7)
    #expect(!CLLocationManager.isRangingAvailable())
    manager.startRangingBeacons(satisfying: constraint)
    world.pump()
    #expect(delegate.calls.contains("ranging failed 7"))
    #expect(delegate.errors.map(\.code) == [.rangingUnavailable])
    #expect(manager.rangedBeaconConstraints.isEmpty)
    manager.stopRangingBeacons(satisfying: constraint)
    let region = CLBeaconRegion(uuid: uuid, identifier: "lobby")
    deprecated.startRangingBeacons(manager, in: region)
    world.pump()
    #expect(delegate.calls.contains("region ranging failed lobby"))
    #expect(deprecated.rangedRegions(manager).isEmpty)
    deprecated.stopRangingBeacons(manager, in: region)

    let denied = SimulatedEnvironment(authorization: .denied)
    let deniedDelegate = SessionDelegate()
    let deniedManager = denied.run { CLLocationManager() }
    deniedManager.delegate = deniedDelegate
    deniedManager.startRangingBeacons(satisfying: constraint)
    denied.pump()
    #expect(deniedDelegate.errors.map(\.code) == [.denied])
  }
}
