import Foundation
import LocationProtocol
import TestSupport
import Testing

@testable import LocationDaemon

/// `requests-per-uid`: one uid's connections are served at most at the configured rate (a
/// token bucket of one second), and nothing they send is lost while they wait.
@Suite struct UIDWorkBudgetTests {
  @Test func bucketRefillsAtItsRateUpToOneSecond() {
    var budget = UIDWorkBudget(rate: 100, now: 0)
    #expect(budget.available && budget.tokens == 100)
    budget.spend(150)
    #expect(!budget.available)
    #expect(abs(budget.secondsUntilAvailable - 0.51) < 1e-9)
    budget.refill(now: 0.25)
    #expect(budget.tokens == -25 && !budget.available)
    budget.refill(now: 0.6)
    #expect(budget.available && abs(budget.tokens - 10) < 1e-9)
    budget.refill(now: 100)
    #expect(budget.tokens == 100)
    budget.refill(now: 50)  // time does not run backwards
    #expect(budget.tokens == 100)
  }

  /// A burst of 400 pings against a budget of 100 a second: every one is answered, in order,
  /// and the last answer cannot come before the budget allowed it (the first 100 at once, the
  /// rest at 100 a second: at least 2.9 s, with the connection's own cost).
  @Test func aFloodIsServedAtTheRateAndNothingIsLost() throws {
    let daemon = try DaemonFixture { $0.requestsPerUID = 100 }
    defer { daemon.stop() }
    let peer = try daemon.connect()
    let started = monotonicSeconds()
    peer.send(.hello(version: DaemonProtocol.version, role: .app))
    for id in 1...400 { peer.send(.ping(id: id)) }
    guard case .welcome = try peer.next(timeout: 60) else {
      Issue.record("no welcome")
      return
    }
    var replies: [Int] = []
    while replies.count < 400 {
      guard case .reply(let id, .done) = try peer.next(timeout: 60) else {
        Issue.record("not a reply")
        return
      }
      replies.append(id)
    }
    #expect(replies == Array(1...400))
    #expect(monotonicSeconds() - started >= 2.9)
  }
}
