import LocationEngine
import Testing

/// `CommitOutbox`'s rule, on a clock the test moves by hand: in order, not yet, exactly once,
/// backoff, episodes.
@Suite struct CommitOutboxTests {
  typealias Outbox = CommitOutbox<String>

  /// What the outbox asked for, in a comparable form.
  static func describe(_ actions: [Outbox.Action]) -> [String] {
    actions.map { action in
      switch action {
      case .commit(let item): "commit \(item)"
      case .release(let item): "release \(item)"
      case .armRetry(let at): "retry at \(at)"
      case .began: "began"
      case .ended(let seconds, let released): "ended after \(seconds) s, \(released) released"
      }
    }
  }

  @Test func aCommitThatSucceedsReleasesAtOnce() {
    var outbox = Outbox()
    #expect(Self.describe(outbox.submit("a", at: 0)) == ["commit a"])
    #expect(Self.describe(outbox.succeeded(at: 0)) == ["release a"])
    #expect(outbox.phase == .idle)
    #expect(outbox.held.isEmpty)
    #expect(!outbox.isFailing)
  }

  /// A failed commit holds its item and every later one, retries with doubling delays up to
  /// the cap, and releases all of them in order, each once, when a commit succeeds.
  @Test func failuresHoldEverythingInOrderUntilTheStoreTakesIt() {
    var outbox = Outbox(initialDelay: 1, maximumDelay: 8)
    #expect(Self.describe(outbox.submit("a", at: 0)) == ["commit a"])
    #expect(Self.describe(outbox.failed(at: 0)) == ["began", "retry at 1.0"])
    #expect(Self.describe(outbox.submit("b", at: 0.5)) == [])
    #expect(Self.describe(outbox.submit("c", at: 0.7)) == [])
    #expect(outbox.held == ["a", "b", "c"])
    #expect(Self.describe(outbox.retryDue(at: 0.9)) == [], "not due yet")
    var now = 1.0
    var delays: [Double] = []
    for _ in 0..<6 {
      #expect(Self.describe(outbox.retryDue(at: now)) == ["commit a"])
      guard case .armRetry(let at)? = outbox.failed(at: now).last else {
        Issue.record("no retry armed")
        return
      }
      delays.append(at - now)
      now = at
    }
    #expect(delays == [2, 4, 8, 8, 8, 8])
    #expect(Self.describe(outbox.retryDue(at: now)) == ["commit a"])
    #expect(Self.describe(outbox.succeeded(at: now)) == ["release a", "commit b"])
    #expect(Self.describe(outbox.succeeded(at: now)) == ["release b", "commit c"])
    #expect(
      Self.describe(outbox.succeeded(at: now)) == ["release c", "ended after \(now) s, 3 released"])
    #expect(outbox.phase == .idle)
    #expect(!outbox.isFailing)
  }

  /// A failure later in the line (after the first held item went through) keeps the episode:
  /// the user hears of it once.
  @Test func anEpisodeIsToldOnceHoweverManyFailuresItHas() {
    var outbox = Outbox()
    _ = outbox.submit("a", at: 0)
    _ = outbox.submit("b", at: 0)
    #expect(Self.describe(outbox.failed(at: 0)) == ["began", "retry at 1.0"])
    _ = outbox.retryDue(at: 1)
    #expect(Self.describe(outbox.succeeded(at: 1)) == ["release a", "commit b"])
    #expect(Self.describe(outbox.failed(at: 1)) == ["retry at 2.0"], "no second began")
    _ = outbox.retryDue(at: 2)
    #expect(
      Self.describe(outbox.succeeded(at: 2)) == ["release b", "ended after 2.0 s, 2 released"])
    _ = outbox.submit("c", at: 3)
    #expect(Self.describe(outbox.failed(at: 3)) == ["began", "retry at 4.0"], "a new episode")
  }

  /// Reports that answer no request (a late timer, a second report) change nothing: nothing is
  /// released twice or without a commit.
  @Test func strayReportsReleaseNothing() {
    var outbox = Outbox()
    #expect(Self.describe(outbox.succeeded(at: 0)) == [])
    #expect(Self.describe(outbox.failed(at: 0)) == [])
    #expect(Self.describe(outbox.retryDue(at: 0)) == [])
    _ = outbox.submit("a", at: 0)
    _ = outbox.failed(at: 0)
    #expect(Self.describe(outbox.succeeded(at: 0.5)) == [], "no commit was asked for")
    #expect(Self.describe(outbox.retryDue(at: 1)) == ["commit a"])
    #expect(Self.describe(outbox.retryDue(at: 1)) == [], "already committing")
    #expect(Self.describe(outbox.succeeded(at: 1)).first == "release a")
    #expect(Self.describe(outbox.succeeded(at: 1)) == [])
  }

  @Test(arguments: [(1, 1.0), (2, 2.0), (3, 4.0), (6, 32.0), (7, 60.0), (100, 60.0)])
  func backoffDoublesUpToTheCap(failures: Int, delay: Double) {
    #expect(Outbox().delay(afterFailures: failures) == delay)
  }
}
