import CoreLocation
import Foundation
import LocationServices
import Synchronization
import TestSupport
import Testing

/// Sessions and temporary full accuracy over a `DaemonClient` talking to a fake `locationd` (raw
/// protocol lines on a real Unix socket).
@Suite struct DaemonSessionTests {
  static let reducedWelcome = FakeDaemon.welcomeLine(status: 4)
    .replacingOccurrences(of: #""accuracy":0"#, with: #""accuracy":1"#)

  @Test func temporaryFullAccuracyAnswersAfterTheAuthorizationChange() async throws {
    let daemon = try FakeDaemon(welcome: Self.reducedWelcome)
    let client = DaemonClient(socketPath: daemon.path)
    defer {
      client.close()
      daemon.stop()
    }
    #expect(await eventually { client.isConnected })
    let (scheduler, delegate, manager) = boundManager(client)
    #expect(manager.accuracyAuthorization == .reducedAccuracy)
    manager.requestTemporaryFullAccuracyAuthorization(withPurposeKey: "Docking") { error in
      // Runs where the delegate runs, after it heard the change.
      delegate.calls.withLock { $0.append("completion \(error == nil)") }
    }
    #expect(
      await eventually(pump: scheduler.pump) {
        !daemon.messages("requestTemporaryFullAccuracy").isEmpty
      })
    let request = try #require(daemon.messages("requestTemporaryFullAccuracy").first)
    #expect(request["purposeKey"] as? String == "Docking")
    let id = try #require(request["id"] as? Int)
    daemon.send(
      #"{"type":"authorization","authorization":{"status":4,"accuracy":0,"servicesEnabled":true}}"#
    )
    daemon.send(#"{"type":"temporaryFullAccuracyResult","id":\#(id)}"#)
    #expect(await eventually(pump: scheduler.pump) { delegate.contains("completion true") })
    #expect(manager.accuracyAuthorization == .fullAccuracy)
    #expect(
      Array(delegate.calls.withLock { $0 }.suffix(2)) == ["authorization 4", "completion true"])

    // Declined: CLError.promptDeclined with the daemon's reason.
    let declined = Mutex<CLError?>(nil)
    manager.requestTemporaryFullAccuracyAuthorization(withPurposeKey: "Docking") { error in
      declined.withLock { $0 = error as? CLError }
    }
    #expect(
      await eventually(pump: scheduler.pump) {
        daemon.messages("requestTemporaryFullAccuracy").count == 2
      })
    let second = try #require(daemon.messages("requestTemporaryFullAccuracy").last?["id"] as? Int)
    daemon.send(
      #"{"type":"temporaryFullAccuracyResult","id":\#(second),"declined":"the app already has full accuracy"}"#
    )
    #expect(await eventually(pump: scheduler.pump) { declined.withLock { $0 } != nil })
    let error = try #require(declined.withLock { $0 })
    #expect(error.code == .promptDeclined)
    #expect(error.localizedDescription == "the app already has full accuracy")

    // The connection lost while waiting: declined with the reason, not left hanging.
    let lost = Mutex<CLError?>(nil)
    manager.requestTemporaryFullAccuracyAuthorization(withPurposeKey: "Docking") { error in
      lost.withLock { $0 = error as? CLError }
    }
    #expect(
      await eventually(pump: scheduler.pump) {
        daemon.messages("requestTemporaryFullAccuracy").count == 3
      })
    daemon.dropConnection()
    #expect(await eventually(pump: scheduler.pump) { lost.withLock { $0 } != nil })
    #expect(lost.withLock { $0 }?.code == .promptDeclined)
  }

  @Test func aSessionRegistersAsksAndReportsTheQuestionInProgress() async throws {
    let daemon = try FakeDaemon(welcome: FakeDaemon.welcomeLine(status: 0))
    let client = DaemonClient(socketPath: daemon.path)
    defer {
      client.close()
      daemon.stop()
    }
    #expect(await eventually { client.isConnected })
    let environment = HubEnvironment(hub: client, scheduler: PumpedScheduler())
    let session = HubEnvironment.$bound.withValue(environment) {
      CLServiceSession(authorization: .always)
    }
    #expect(await eventually { !daemon.messages("requestAuthorization").isEmpty })
    #expect(daemon.messages("register").count == 1, "a session keeps the app in use")
    #expect(daemon.messages("requestAuthorization").first?["always"] as? Bool == true)
    var iterator = session.diagnostics.makeAsyncIterator()
    #expect(await iterator.next()?.authorizationRequestInProgress == false)
    daemon.send(
      #"{"type":"authorization","authorization":{"status":0,"accuracy":0,"servicesEnabled":true,"#
        + #""requestInProgress":true}}"#)
    #expect(await iterator.next()?.authorizationRequestInProgress == true)
    daemon.send(
      #"{"type":"authorization","authorization":{"status":4,"accuracy":0,"servicesEnabled":true}}"#
    )
    let answered = try #require(await iterator.next())
    #expect(!answered.authorizationRequestInProgress && answered.alwaysAuthorizationDenied)
    session.invalidate()
    #expect(await eventually { !daemon.messages("unregister").isEmpty })
    #expect(await iterator.next() == nil)
  }
}
