import LocationModel
import Testing

@testable import LocationEngine

@Suite struct RegionStateMachineTests {
  struct Row: Sendable {
    var from: RegionState
    var evidence: RegionEvidence
    var action: RegionStateMachine.Action
    var to: RegionState
  }

  static let rows: [Row] = [
    Row(from: .unknown, evidence: .none, action: .none, to: .unknown),
    Row(from: .unknown, evidence: .inside, action: .determine(.inside), to: .inside),
    Row(from: .unknown, evidence: .outside, action: .determine(.outside), to: .outside),
    Row(from: .inside, evidence: .none, action: .none, to: .inside),
    Row(from: .inside, evidence: .inside, action: .none, to: .inside),
    Row(from: .inside, evidence: .outside, action: .exit, to: .outside),
    Row(from: .outside, evidence: .none, action: .none, to: .outside),
    Row(from: .outside, evidence: .outside, action: .none, to: .outside),
    Row(from: .outside, evidence: .inside, action: .enter, to: .inside),
  ]

  @Test(arguments: rows)
  func transition(_ row: Row) {
    var machine = RegionStateMachine(state: row.from)
    #expect(machine.observe(row.evidence) == row.action)
    #expect(machine.state == row.to)
  }

  @Test func rawValuesMatchCLRegionState() {
    #expect(RegionState.unknown.rawValue == 0)
    #expect(RegionState.inside.rawValue == 1)
    #expect(RegionState.outside.rawValue == 2)
  }
}
