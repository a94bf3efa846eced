import Testing

@testable import LocationEngine

@Suite struct SourceRunTests {
  @Test func reportsFromAStoppedRunAreStale() {
    var run = SourceRun()
    let first = run.start(at: 0)
    #expect(run.report(.fix, generation: first) == .accepted(recovered: false))
    run.stop(at: 10)
    #expect(run.report(.fix, generation: first) == .stale)
    let second = run.start(at: 20)
    #expect(second != first)
    #expect(run.report(.heading, generation: first) == .stale)
    #expect(run.report(.heading, generation: second) == .accepted(recovered: false))
    #expect(run.starts == 2)
  }

  @Test func aFixEndsAnOutageAndAStopForgetsIt() {
    var run = SourceRun()
    let generation = run.start(at: 0)
    _ = run.report(.failure(permanent: false), generation: generation)
    #expect(run.failing)
    #expect(run.report(.fix, generation: generation) == .accepted(recovered: true))
    #expect(!run.failing)
    _ = run.report(.failure(permanent: false), generation: generation)
    run.stop(at: 1)
    #expect(!run.failing)
  }

  @Test func aFinishStaysUntilCleared() {
    var run = SourceRun()
    var generation = run.start(at: 0)
    _ = run.report(.failure(permanent: true), generation: generation)
    #expect(run.finished)
    run.stop(at: 1)
    generation = run.start(at: 2)
    #expect(run.finished)
    _ = run.report(.end, generation: generation)
    run.clearFinish()
    #expect(!run.finished)
  }

  @Test func onTimeCountsRunsOnly() {
    var run = SourceRun()
    _ = run.start(at: 100)
    #expect(run.onTime(at: 130) == 30)
    run.stop(at: 150)
    #expect(run.onTime(at: 1_000) == 50)
    _ = run.start(at: 2_000)
    #expect(run.onTime(at: 2_010) == 60)
  }
}
