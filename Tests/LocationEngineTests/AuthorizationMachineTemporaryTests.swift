import LocationEngine
import LocationModel
import Testing

/// Temporary full accuracy, the question in progress and the end of being in use
/// (`AuthorizationMachine`'s rules).
@Suite struct AuthorizationMachineTemporaryTests {
  typealias Machine = AuthorizationMachine

  static func reduced(_ status: AuthorizationStatus = .authorizedWhenInUse) -> Machine {
    Machine(
      current: AuthorizationSnapshot(status: status, accuracy: .reducedAccuracy), policy: .grant)
  }

  @Test func anAllowedRequestGivesFullAccuracyUntilTheAppIsNoLongerInUse() {
    var machine = Self.reduced()
    #expect(machine.requestTemporaryFullAccuracy(agentAvailable: true) == .ask)
    #expect(machine.current.requestInProgress)
    #expect(machine.requestTemporaryFullAccuracy(agentAvailable: true) == .waiting)
    let granted = AuthorizationSnapshot(
      status: .authorizedWhenInUse, accuracy: .fullAccuracy, temporaryFullAccuracy: true)
    #expect(machine.answeredTemporary(allowed: true) == .apply(granted))
    #expect(!machine.current.requestInProgress)
    // The store keeps the decision underneath.
    #expect(
      machine.current.persisted
        == AuthorizationSnapshot(status: .authorizedWhenInUse, accuracy: .reducedAccuracy))
    #expect(
      machine.noLongerInUse()
        == .apply(AuthorizationSnapshot(status: .authorizedWhenInUse, accuracy: .reducedAccuracy)))
    #expect(machine.noLongerInUse() == .unchanged)
  }

  @Test func aRefusedRequestClosesTheQuestionAndKeepsReducedAccuracy() {
    var machine = Self.reduced(.authorizedAlways)
    _ = machine.requestTemporaryFullAccuracy(agentAvailable: true)
    #expect(
      machine.answeredTemporary(allowed: false)
        == .apply(AuthorizationSnapshot(status: .authorizedAlways, accuracy: .reducedAccuracy)))
    #expect(machine.answeredTemporary(allowed: true) == .unchanged, "no question is open")
  }

  @Test func requestsNoOneCanAnswerAreDeclinedWithTheReason() {
    var noAgent = Self.reduced()
    #expect(
      noAgent.requestTemporaryFullAccuracy(agentAvailable: false)
        == .declined(Machine.noOneToAsk))
    var full = Machine(current: AuthorizationSnapshot(status: .authorizedAlways), policy: .grant)
    #expect(
      full.requestTemporaryFullAccuracy(agentAvailable: true)
        == .declined("the app already has full accuracy"))
    var denied = Self.reduced(.denied)
    #expect(
      denied.requestTemporaryFullAccuracy(agentAvailable: true)
        == .declined("the app is not authorized to use location services"))
    var off = Machine(
      current: AuthorizationSnapshot(
        status: .authorizedWhenInUse, accuracy: .reducedAccuracy, servicesEnabled: false),
      policy: .grant)
    #expect(
      off.requestTemporaryFullAccuracy(agentAvailable: true)
        == .declined("location services are off"))
    #expect(!noAgent.current.requestInProgress)
  }

  @Test func aSettingOrAnAnswerReplacesTemporaryAccuracy() {
    var machine = Self.reduced()
    _ = machine.requestTemporaryFullAccuracy(agentAvailable: true)
    _ = machine.answeredTemporary(allowed: true)
    #expect(
      machine.set(.whenInUse, accuracy: .fullAccuracy)
        == .apply(AuthorizationSnapshot(status: .authorizedWhenInUse)))
    #expect(machine.noLongerInUse() == .unchanged, "a setting is not temporary")
  }

  @Test func theQuestionInProgressIsPartOfTheSnapshotUntilAnswered() {
    var machine = Machine(
      current: AuthorizationSnapshot(status: .notDetermined), policy: .deny)
    #expect(machine.trigger(.startUpdates, agentAvailable: true) == .ask(always: false))
    #expect(machine.current.requestInProgress)
    #expect(machine.current.persisted == AuthorizationSnapshot(status: .notDetermined))
    // The agent leaves and the policy keeps notDetermined: the app still hears that the question
    // closed.
    var left = machine
    #expect(
      left.agentLeft(anotherAgent: false) == .apply(AuthorizationSnapshot(status: .denied)))
    #expect(
      machine.answered(.whenInUse, accuracy: .fullAccuracy)
        == .apply(AuthorizationSnapshot(status: .authorizedWhenInUse)))
    var upgrade = Machine(
      current: AuthorizationSnapshot(status: .authorizedWhenInUse), policy: .deny)
    _ = upgrade.trigger(.request(always: true), agentAvailable: true)
    #expect(
      upgrade.agentLeft(anotherAgent: false)
        == .apply(AuthorizationSnapshot(status: .authorizedWhenInUse)),
      "the policy changes nothing, the question is closed all the same")
  }

  @Test func onceEndsTemporaryAccuracyToo() {
    var machine = Machine(current: AuthorizationSnapshot(status: .notDetermined), policy: .deny)
    _ = machine.trigger(.startUpdates, agentAvailable: true)
    _ = machine.answered(.once, accuracy: .reducedAccuracy)
    _ = machine.requestTemporaryFullAccuracy(agentAvailable: true)
    _ = machine.answeredTemporary(allowed: true)
    #expect(machine.current.accuracy == .fullAccuracy)
    #expect(machine.noLongerInUse() == .apply(AuthorizationSnapshot(status: .notDetermined)))
  }
}
