import Foundation
import LocationDaemon
import LocationEngine
import LocationModel
import LocationProtocol
import LocationServices
import LocationStore
import TestSupport
import Testing

/// Temporary full accuracy through the daemon, the question in progress, and the end of being in
/// use (the app's last manager, monitor or session), over real sockets.
@Suite struct DaemonTemporaryAccuracyTests {
  static let reducedWhenInUse = AuthorizationSnapshot(
    status: .authorizedWhenInUse, accuracy: .reducedAccuracy)

  /// A daemon with this test's app authorized when in use, approximately.
  func reducedDaemon() throws -> DaemonFixture {
    let daemon = try DaemonFixture(policy: .deny)
    let (control, _) = try daemon.peer(.control)
    control.send(.authorize(id: 1, app: daemon.app, status: .whenInUse, accuracy: .reduced))
    _ = try control.next()
    return daemon
  }

  @Test func theAgentAllowsItWhileTheAppIsInUse() throws {
    let daemon = try reducedDaemon()
    defer { daemon.stop() }
    let (agent, _) = try daemon.peer(.agent)
    let peer = try daemon.connectApp()
    peer.send(.purpose(text: "Shows the boat on the chart"))
    peer.send(.requestTemporaryFullAccuracy(id: 7, purposeKey: "Docking"))
    #expect(
      try agent.next()
        == .temporaryFullAccuracyRequest(
          id: 1, app: daemon.app, purposeKey: "Docking", purpose: "Shows the boat on the chart"))
    var asking = Self.reducedWhenInUse
    asking.requestInProgress = true
    #expect(try peer.sync() == [.authorization(asking)], "the app hears that a person is asked")
    agent.send(.authorizationDecision(id: 1, status: .whenInUse, accuracy: .full))
    _ = try agent.sync()
    // The accuracy first, then the answer: a completion handler sees the new accuracy.
    #expect(
      try peer.sync() == [
        .authorization(AuthorizationSnapshot(status: .authorizedWhenInUse)),
        .temporaryFullAccuracyResult(id: 7, declined: nil),
      ])
    // The store keeps the decision underneath.
    let stored = try #require(try daemon.store.authorization(app: daemon.app))
    #expect(stored.accuracy == .reducedAccuracy)
    // A second connection without a manager keeps nothing in use: when the manager goes, the
    // temporary accuracy ends and the other connection hears it.
    let other = try daemon.connectApp(register: nil)
    peer.send(.unregister(client: 1))
    _ = try peer.sync()
    #expect(try other.sync() == [.authorization(Self.reducedWhenInUse)])
    #expect(
      try daemon.waitForApps { $0.first?.authorization.accuracy == .reducedAccuracy }.count == 1)
  }

  @Test func aRefusalKeepsReducedAccuracyAndStillAnswers() throws {
    let daemon = try reducedDaemon()
    defer { daemon.stop() }
    let (agent, _) = try daemon.peer(.agent)
    let peer = try daemon.connectApp()
    let second = try daemon.connectApp()
    peer.send(.requestTemporaryFullAccuracy(id: 1, purposeKey: "Docking"))
    guard case .temporaryFullAccuracyRequest(let id, _, _, _) = try agent.next() else {
      Issue.record("the agent was not asked")
      return
    }
    // A second request while the first is asked waits for the same answer.
    second.send(.requestTemporaryFullAccuracy(id: 9, purposeKey: "Docking"))
    _ = try second.sync()
    agent.send(.authorizationDecision(id: id, status: .denied, accuracy: .full))
    _ = try agent.sync()
    #expect(try peer.sync().last == .temporaryFullAccuracyResult(id: 1, declined: nil))
    #expect(try second.sync().last == .temporaryFullAccuracyResult(id: 9, declined: nil))
    #expect(
      try daemon.waitForApps { $0.first?.authorization.accuracy == .reducedAccuracy }.count == 1)
  }

  @Test func requestsNoOneCanAnswerAreDeclinedAtOnce() throws {
    let daemon = try reducedDaemon()
    defer { daemon.stop() }
    let peer = try daemon.connectApp()
    peer.send(.requestTemporaryFullAccuracy(id: 1, purposeKey: "Docking"))
    guard case .temporaryFullAccuracyResult(1, let noAgent?) = try peer.next() else {
      Issue.record("not declined")
      return
    }
    #expect(noAgent.contains("locationctl agent"))
    for (id, key) in [(2, ""), (3, "Dock\u{1B}[2J"), (4, String(repeating: "k", count: 5000))] {
      peer.send(.requestTemporaryFullAccuracy(id: id, purposeKey: key))
      guard case .temporaryFullAccuracyResult(id, _?) = try peer.next() else {
        Issue.record("a bad purpose key was not declined")
        return
      }
    }
    let (control, _) = try daemon.peer(.control)
    control.send(.authorize(id: 2, app: daemon.app, status: .always, accuracy: .full))
    _ = try control.next()
    _ = try peer.sync()
    let (agent, _) = try daemon.peer(.agent)
    peer.send(.requestTemporaryFullAccuracy(id: 5, purposeKey: "Docking"))
    #expect(
      try peer.next()
        == .temporaryFullAccuracyResult(id: 5, declined: "the app already has full accuracy"))
    #expect(try agent.sync().isEmpty, "nobody was asked")
  }

  @Test func theAgentLeavingDeclinesTheWaitingRequests() throws {
    let daemon = try reducedDaemon()
    defer { daemon.stop() }
    let peer = try daemon.connectApp()
    do {
      let (agent, _) = try daemon.peer(.agent)
      peer.send(.requestTemporaryFullAccuracy(id: 3, purposeKey: "Docking"))
      _ = try agent.next()
      agent.shutdownWrite()
      _ = try agent.readUntilClosed()
    }
    let messages = try peer.sync()
    guard case .temporaryFullAccuracyResult(3, let reason?) = messages.last else {
      Issue.record("no answer after the agent left: \(messages)")
      return
    }
    #expect(reason.contains("agent left"))
    #expect(
      messages.contains(.authorization(Self.reducedWhenInUse)),
      "the app hears that the question closed, still approximate: \(messages)")
  }

  /// docs/security.md: requests waiting for the answer are capped by `max-held-requests`; one
  /// beyond it is declined, the others still get the answer.
  @Test func waitingRequestsAreCapped() throws {
    let daemon = try DaemonFixture(policy: .deny) { $0.maximumHeldRequests = 2 }
    defer { daemon.stop() }
    let (control, _) = try daemon.peer(.control)
    control.send(.authorize(id: 1, app: daemon.app, status: .whenInUse, accuracy: .reduced))
    _ = try control.next()
    let (agent, _) = try daemon.peer(.agent)
    let peer = try daemon.connectApp()
    peer.send(.requestTemporaryFullAccuracy(id: 1, purposeKey: "Docking"))
    guard case .temporaryFullAccuracyRequest(let id, _, _, _) = try agent.next() else {
      Issue.record("the agent was not asked")
      return
    }
    peer.send(.requestTemporaryFullAccuracy(id: 2, purposeKey: "Docking"))
    peer.send(.requestTemporaryFullAccuracy(id: 3, purposeKey: "Docking"))
    let early = try peer.sync()
    guard case .temporaryFullAccuracyResult(3, let refusal?) = early.last else {
      Issue.record("the third request was not declined: \(early)")
      return
    }
    #expect(refusal.contains("too many"))
    agent.send(.authorizationDecision(id: id, status: .whenInUse, accuracy: .full))
    _ = try agent.sync()
    let answers = try peer.sync().filter {
      if case .temporaryFullAccuracyResult = $0 { return true }
      return false
    }
    #expect(
      answers == [
        .temporaryFullAccuracyResult(id: 1, declined: nil),
        .temporaryFullAccuracyResult(id: 2, declined: nil),
      ])
  }

  @Test func temporaryAccuracyEndsWhenTheDaemonStarts() throws {
    let store = try LocationStore.inMemory()
    try store.setAuthorization(
      StoredAuthorization(
        status: .authorizedWhenInUse, accuracy: .reducedAccuracy, updated: 1, once: false),
      app: HubConfiguration.executablePath())
    let daemon = try DaemonFixture(policy: .deny, store: store)
    defer { daemon.stop() }
    let (agent, _) = try daemon.peer(.agent)
    let peer = try daemon.connectApp()
    peer.send(.requestTemporaryFullAccuracy(id: 1, purposeKey: "Docking"))
    _ = try agent.next()
    agent.send(.authorizationDecision(id: 1, status: .whenInUse, accuracy: .full))
    _ = try agent.sync()
    _ = try peer.sync()
    // What a crash leaves in the store: the reduced decision, never the temporary full one.
    let stored = try #require(try store.authorization(app: daemon.app))
    #expect(stored.accuracy == .reducedAccuracy)
  }

  @Test func aQuestionInProgressReachesTheAppAndClosesWithTheAnswer() throws {
    let daemon = try DaemonFixture(policy: .deny)
    defer { daemon.stop() }
    let (agent, _) = try daemon.peer(.agent)
    let peer = try daemon.connectApp()
    peer.send(.requestAuthorization(always: false))
    guard case .authorizationRequest(let id, _, _, _) = try agent.next() else {
      Issue.record("the agent was not asked")
      return
    }
    #expect(
      try peer.sync() == [
        .authorization(AuthorizationSnapshot(status: .notDetermined, requestInProgress: true))
      ])
    agent.send(.authorizationDecision(id: id, status: .always, accuracy: .full))
    _ = try agent.sync()
    #expect(try peer.sync() == [.authorization(AuthorizationSnapshot(status: .authorizedAlways))])
  }
}
