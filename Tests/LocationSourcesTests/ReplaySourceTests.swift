import Geodesy
import LocationModel
import TestSupport
import Testing

@testable import LocationSources

/// `ReplaySource` on a manual scheduler: pacing by the recording's gaps and the speed, instant
/// batches, loop, end, stop, and what each replayed fix carries.
@Suite struct ReplaySourceTests {
  typealias Options = SourceURL.ReplayOptions

  /// Five fixes at recorded offsets 0, 1, 3, 7 and 7.5 s.
  static func unevenTrack() -> ReplayTrack {
    let offsets = [0, 1, 3, 7, 7.5]
    return ReplayTrack(
      fixes: offsets.enumerated().map { index, offset in
        Fix(
          latitude: 52 + Double(index) * 0.001, longitude: 5, horizontalAccuracy: 5,
          time: 1_600_000_000 + offset)
      })
  }

  func replay(_ track: ReplayTrack, _ options: Options) -> ReplaySource {
    ReplaySource(track: track, name: "replay:///test", options: options)
  }

  @Test(arguments: [1.0, 10, 0.5])
  func pacesByTheRecordedGapsOverTheSpeed(_ speed: Double) {
    let context = TestContext()
    let source = replay(Self.unevenTrack(), Options(speed: speed))
    source.start(context: context)
    #expect(context.emissions.count == 1, "the first fix is emitted at once")
    context.advance(by: 0.5 / speed)
    #expect(context.emissions.count == 1)
    context.advance(by: 0.5 / speed)
    #expect(context.emissions.count == 2)
    context.advance(by: 100 / speed)
    let times = context.emissions.map { ($0.at * speed * 1000).rounded() / 1000 }
    #expect(times == [0, 1, 3, 7, 7.5])
    #expect(context.ends == 1)
    #expect(context.failures.isEmpty)
    #expect(context.pendingCount == 0)
  }

  @Test func endsOnlyAfterTheLastFix() {
    let context = TestContext()
    replay(Self.unevenTrack(), Options()).start(context: context)
    context.advance(by: 7)
    #expect(context.emissions.count == 4)
    #expect(context.ends == 0)
    context.advance(by: 0.5)
    #expect(context.emissions.count == 5)
    #expect(context.ends == 1)
  }

  @Test func keepsTheRecordedTimesAndMarksFixesSimulated() {
    let context = TestContext()
    var fixes = Self.unevenTrack().fixes
    fixes[1].quality = .differential
    replay(ReplayTrack(fixes: fixes), Options(instant: true)).start(context: context)
    context.runDue()
    #expect(context.fixes.map(\.time) == fixes.map(\.time))
    #expect(context.fixes.allSatisfy { $0.isSimulated })
    #expect(
      context.fixes.map(\.quality) == [
        .simulated, .differential, .simulated, .simulated, .simulated,
      ])
  }

  @Test func timeRunningBackwardsWaitsOneSecondOverTheSpeed() {
    let fixes = [
      Fix(latitude: 52, longitude: 5, horizontalAccuracy: 5, time: 100),
      Fix(latitude: 52, longitude: 5, horizontalAccuracy: 5, time: 50),
      Fix(latitude: 52, longitude: 5, horizontalAccuracy: 5, time: 52),
    ]
    let context = TestContext()
    replay(ReplayTrack(fixes: fixes), Options(speed: 2)).start(context: context)
    context.advance(by: 10)
    #expect(context.emissions.map(\.at) == [0, 0.5, 1.5])
  }

  @Test func instantEmitsInBatchesOnVirtualTime() {
    let count = ReplaySource.instantBatch * 2 + 50
    let context = TestContext()
    let source = replay(
      ReplayTrack(fixes: northTrack(count: count, speed: 3)), Options(instant: true))
    source.start(context: context)
    #expect(context.emissions.count == ReplaySource.instantBatch)
    context.runDue()
    #expect(context.emissions.count == count)
    #expect(context.emissions.allSatisfy { $0.at == 0 }, "no virtual time passes")
    #expect(context.ends == 1)
    #expect(context.pendingCount == 0)
  }

  @Test func instantIgnoresTheSpeed() {
    let context = TestContext()
    replay(Self.unevenTrack(), Options(speed: 0.001, instant: true)).start(context: context)
    context.runDue()
    #expect(context.emissions.count == 5)
    #expect(context.ends == 1)
  }

  @Test func stopBetweenInstantBatchesStopsEmission() {
    let count = ReplaySource.instantBatch * 3
    let context = TestContext()
    let source = replay(
      ReplayTrack(fixes: northTrack(count: count, speed: 3)), Options(instant: true))
    source.start(context: context)
    source.stop()
    context.runDue()
    #expect(context.emissions.count == ReplaySource.instantBatch)
    #expect(context.ends == 0)
    #expect(context.pendingCount == 0, "stop cancels the pending step")
  }

  @Test func stopMidwayStopsEmission() {
    let context = TestContext()
    let source = replay(Self.unevenTrack(), Options())
    source.start(context: context)
    context.advance(by: 3)
    #expect(context.emissions.count == 3)
    source.stop()
    context.advance(by: 100)
    #expect(context.emissions.count == 3)
    #expect(context.ends == 0)
    #expect(context.pendingCount == 0)
  }

  @Test func stopFromInsideEmitStopsEmission() {
    // The consumer stops the source when the second fix arrives.
    let context = TestContext()
    let source = replay(Self.unevenTrack(), Options())
    context.onEmit { count in if count == 2 { source.stop() } }
    source.start(context: context)
    context.advance(by: 100)
    #expect(context.emissions.count == 2)
    #expect(context.ends == 0)
    #expect(context.pendingCount == 0)
  }

  @Test func stopFromInsideAnInstantBatchTakesEffectAfterTheBatch() {
    let context = TestContext()
    let count = ReplaySource.instantBatch * 2
    let source = replay(
      ReplayTrack(fixes: northTrack(count: count, speed: 3)), Options(instant: true))
    context.onEmit { count in if count == 10 { source.stop() } }
    source.start(context: context)
    context.runDue()
    #expect(context.emissions.count <= ReplaySource.instantBatch)
    #expect(context.ends == 0)
    #expect(context.pendingCount == 0)
  }

  @Test func stopTwiceAndStopBeforeStartAreHarmless() {
    let context = TestContext()
    let source = replay(Self.unevenTrack(), Options())
    source.stop()
    source.start(context: context)
    context.advance(by: 1)
    source.stop()
    source.stop()
    context.advance(by: 100)
    #expect(context.emissions.count == 2)
  }

  @Test func restartsFromTheBeginningAfterStop() {
    let context = TestContext()
    let source = replay(Self.unevenTrack(), Options())
    source.start(context: context)
    context.advance(by: 3)
    source.stop()
    let again = TestContext()
    source.start(context: again)
    again.advance(by: 100)
    #expect(again.fixes.map(\.latitude) == Self.unevenTrack().fixes.map(\.latitude))
    #expect(again.ends == 1)
    #expect(context.emissions.count == 3, "nothing reaches the old context")
  }

  @Test func loopsWithoutEnding() {
    let context = TestContext()
    let track = ReplayTrack(fixes: northTrack(count: 3, speed: 5))
    replay(track, Options(speed: 2, loop: true)).start(context: context)
    // Fixes at 0, 0.5, 1; the loop restarts 1 / speed after the last: 1.5, 2, 2.5; then 3, ...
    context.advance(by: 3)
    #expect(context.emissions.map(\.at) == [0, 0.5, 1, 1.5, 2, 2.5, 3])
    #expect(
      context.fixes.map(\.latitude)
        == (track.fixes + track.fixes + track.fixes[..<1]).map(\.latitude))
    #expect(context.ends == 0)
    #expect(context.pendingCount == 1)
  }

  @Test func stopEndsALoop() {
    let context = TestContext()
    let source = replay(ReplayTrack(fixes: northTrack(count: 3, speed: 5)), Options(loop: true))
    source.start(context: context)
    context.advance(by: 10)
    source.stop()
    let count = context.emissions.count
    context.advance(by: 10)
    #expect(context.emissions.count == count)
    #expect(context.pendingCount == 0)
  }

  @Test func emptyTrackEndsAtOnceEvenWithLoop() {
    let context = TestContext()
    replay(ReplayTrack(fixes: []), Options(loop: true)).start(context: context)
    context.runDue()
    #expect(context.emissions.isEmpty)
    #expect(context.ends == 1)
  }

  @Test func untimedTrackIsStampedWithTheContextsWallTime() {
    let context = TestContext(wall: 2_000_000_000)
    let track = ReplayTrack(
      fixes: northTrack(count: 3, speed: 1).map {
        var fix = $0
        fix.time = 0
        return fix
      }, hasTimes: false)
    replay(track, Options(speed: 1)).start(context: context)
    context.advance(by: 60)
    // Without times the gaps are unknown: one second apart.
    #expect(context.fixes.map(\.time) == [2_000_000_000, 2_000_000_001, 2_000_000_002])
    #expect(context.fixes.allSatisfy { $0.isSimulated })
  }

  @Test func untimedGPXFilePlaysOneSecondApartOnWallTime() throws {
    let context = TestContext(wall: 1_800_000_000)
    let source = ReplaySource(path: Paths.fixture("replay", "untimed.gpx"), options: Options())
    source.start(context: context)
    context.advance(by: 10)
    #expect(context.emissions.map(\.at) == [0, 1, 2])
    #expect(context.fixes.map(\.time) == [1_800_000_000, 1_800_000_001, 1_800_000_002])
    #expect(context.ends == 1)
  }

  /// A first point without a time is played one second before the next, not decades before it
  /// (README: points without a time are played one second apart).
  @Test func untimedFirstPointDoesNotDelayTheRest() {
    let context = TestContext()
    let source = ReplaySource(
      path: Paths.fixture("replay", "leading_untimed.gpx"), options: Options())
    source.start(context: context)
    context.advance(by: 10)
    #expect(context.emissions.map(\.at) == [0, 1, 2, 3])
    #expect(context.fixes.allSatisfy { $0.time > 1_714_564_000 }, "no 1970 timestamps")
  }

  @Test func playsAFileAndEnds() {
    let path = Paths.fixture("replay", "north.gpx")
    let source = ReplaySource(path: path, options: Options(instant: true))
    #expect(source.descriptor.url == "replay://\(path)?instant=1")
    let context = TestContext()
    source.start(context: context)
    context.runDue()
    #expect(context.fixes.count == 10)
    #expect(context.fixes.first?.time == 1_714_564_800)
    #expect(context.fixes.dropFirst().allSatisfy { $0.speed > 11 && $0.speed < 11.2 })
    #expect(context.ends == 1)
  }

  /// A hike with seven points of interest before its track (issue 21): the replay plays the
  /// track alone, from its first point, and never jumps to a waypoint.
  @Test func playsTheTrackOfAFileWithWaypoints() {
    let path = Paths.fixture("gpx", "gpxpy-cerknicko-jezero.gpx")
    let context = TestContext()
    ReplaySource(path: path, options: Options(instant: true)).start(context: context)
    context.runDue()
    #expect(context.fixes.count == 296)
    #expect(context.fixes.first?.latitude == 45.772175035)
    #expect(context.fixes.first?.speed == -1)
    #expect(context.fixes.allSatisfy { $0.speed <= ReplayTrack.maximumDerivedSpeed })
    #expect(context.ends == 1)
  }

  @Test func missingFileFailsNamingThePath() {
    let path = "/nonexistent/corelocation-tests/ride.gpx"
    let context = TestContext()
    ReplaySource(path: path, options: Options()).start(context: context)
    context.advance(by: 10)
    #expect(context.emissions.isEmpty)
    #expect(context.ends == 0)
    let failure = context.failures.first
    #expect(context.failures.count == 1)
    #expect(failure?.code == .unavailable)
    #expect(failure?.isPermanent == true)
    #expect(failure?.message.contains(path) == true)
  }

  @Test func malformedFileFailsWithFileAndLine() {
    let path = Paths.fixture("replay", "malformed.gpx")
    let context = TestContext()
    ReplaySource(path: path, options: Options()).start(context: context)
    #expect(context.failures.map(\.code) == [.malformed])
    #expect(context.failures.first?.message.contains(path + ":8") == true)
  }
}
