import LocationModel
import Testing

@testable import LocationEngine

@Suite struct AuthorizationMachineTests {
  typealias Machine = AuthorizationMachine

  static func machine(
    _ status: AuthorizationStatus, policy: AuthorizationPolicy = .grant,
    accuracy: AccuracyAuthorization = .fullAccuracy
  ) -> Machine {
    Machine(current: AuthorizationSnapshot(status: status, accuracy: accuracy), policy: policy)
  }

  struct Row: Sendable, CustomTestStringConvertible {
    var trigger: Machine.Trigger
    var status: AuthorizationStatus
    var question: Bool?
    var testDescription: String { "\(trigger) from \(status)" }
  }

  /// Which requests ask, and for what (Apple's rules).
  static let questions: [Row] = [
    Row(trigger: .request(always: false), status: .notDetermined, question: false),
    Row(trigger: .request(always: true), status: .notDetermined, question: true),
    Row(trigger: .request(always: true), status: .authorizedWhenInUse, question: true),
    Row(trigger: .request(always: false), status: .authorizedWhenInUse, question: nil),
    Row(trigger: .request(always: true), status: .denied, question: nil),
    Row(trigger: .request(always: true), status: .restricted, question: nil),
    Row(trigger: .request(always: true), status: .authorizedAlways, question: nil),
    Row(trigger: .startUpdates, status: .notDetermined, question: false),
    Row(trigger: .requestLocation, status: .notDetermined, question: false),
    Row(trigger: .startSignificantChanges, status: .notDetermined, question: true),
    Row(trigger: .addRegion, status: .notDetermined, question: true),
    Row(trigger: .startUpdates, status: .denied, question: nil),
    Row(trigger: .addRegion, status: .authorizedWhenInUse, question: nil),
  ]

  @Test(arguments: questions) func whichRequestsAsk(_ row: Row) {
    #expect(Machine.question(row.trigger, status: row.status) == row.question)
  }

  @Test func theGrantPolicyGivesWhatWasAskedAndTheUpgrade() {
    var machine = Self.machine(.notDetermined)
    #expect(
      machine.trigger(.startUpdates, agentAvailable: false)
        == .apply(AuthorizationSnapshot(status: .authorizedWhenInUse)))
    #expect(
      machine.trigger(.request(always: true), agentAvailable: false)
        == .apply(AuthorizationSnapshot(status: .authorizedAlways)))
    #expect(machine.trigger(.request(always: true), agentAvailable: false) == .unchanged)
  }

  @Test func theDenyPolicyDeniesOnlyTheUndecided() {
    var machine = Self.machine(.notDetermined, policy: .deny)
    #expect(
      machine.trigger(.addRegion, agentAvailable: false)
        == .apply(AuthorizationSnapshot(status: .denied)))
    var inUse = Self.machine(.authorizedWhenInUse, policy: .deny)
    #expect(inUse.trigger(.request(always: true), agentAvailable: false) == .unchanged)
    #expect(inUse.current.status == .authorizedWhenInUse)
  }

  @Test func anAgentIsAskedAndEverythingElseWaits() {
    var machine = Self.machine(.notDetermined)
    #expect(machine.trigger(.addRegion, agentAvailable: true) == .ask(always: true))
    #expect(machine.asking == true)
    #expect(machine.trigger(.startUpdates, agentAvailable: true) == .hold)
    #expect(
      machine.answered(.whenInUse, accuracy: .reducedAccuracy)
        == .apply(AuthorizationSnapshot(status: .authorizedWhenInUse, accuracy: .reducedAccuracy)))
    #expect(machine.asking == nil)
    #expect(machine.trigger(.startUpdates, agentAvailable: true) == .unchanged)
  }

  @Test func anAgentThatLeavesHandsTheQuestionOnOrToThePolicy() {
    var machine = Self.machine(.notDetermined)
    _ = machine.trigger(.startUpdates, agentAvailable: true)
    #expect(machine.agentLeft(anotherAgent: true) == .ask(always: false))
    #expect(machine.asking == false)
    #expect(
      machine.agentLeft(anotherAgent: false)
        == .apply(AuthorizationSnapshot(status: .authorizedWhenInUse)))
    #expect(machine.asking == nil)
    #expect(machine.agentLeft(anotherAgent: false) == .unchanged)
  }

  @Test func onceEndsWhenTheAppIsNoLongerInUse() {
    var machine = Self.machine(.notDetermined)
    _ = machine.trigger(.startUpdates, agentAvailable: true)
    _ = machine.answered(.once, accuracy: .fullAccuracy)
    #expect(machine.lasting == .untilLastConnectionCloses)
    #expect(machine.current.status == .authorizedWhenInUse)
    #expect(
      machine.noLongerInUse() == .apply(AuthorizationSnapshot(status: .notDetermined)))
    #expect(machine.noLongerInUse() == .unchanged)
  }

  @Test func aSettingEndsOnceAndResetForgets() {
    var machine = Self.machine(.notDetermined)
    _ = machine.trigger(.startUpdates, agentAvailable: true)
    _ = machine.answered(.once, accuracy: .fullAccuracy)
    #expect(
      machine.set(.always, accuracy: .reducedAccuracy)
        == .apply(AuthorizationSnapshot(status: .authorizedAlways, accuracy: .reducedAccuracy)))
    #expect(machine.noLongerInUse() == .unchanged)
    #expect(
      machine.set(.reset, accuracy: .reducedAccuracy)
        == .forget(AuthorizationSnapshot(status: .notDetermined)))
  }

  @Test func theServicesSwitchKeepsTheDecision() {
    var machine = Self.machine(.authorizedAlways)
    #expect(
      machine.servicesSwitched(false)
        == .apply(AuthorizationSnapshot(status: .authorizedAlways, servicesEnabled: false)))
    #expect(machine.servicesSwitched(false) == .unchanged)
    #expect(!machine.current.allowsLocation)
  }

  @Test func anAnswerWithNoQuestionChangesNothing() {
    var machine = Self.machine(.denied)
    #expect(machine.answered(.always, accuracy: .fullAccuracy) == .unchanged)
    #expect(machine.current.status == .denied)
  }
}
