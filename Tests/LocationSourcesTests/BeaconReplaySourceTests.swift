import Foundation
import LocationFormats
import LocationModel
import Synchronization
import TestSupport
import Testing

@testable import LocationSources

/// A `SourceContext` on a manual clock that records advertisements, with the monotonic time of
/// each (`TestContext` records fixes and headings only).
final class AdvertisementContext: SourceContext {
  private struct State {
    var advertisements: [(advertisement: BeaconAdvertisement, at: Double)] = []
    var fixes = 0
    var failures: [SourceError] = []
    var ends = 0
    var onAdvertisement: (@Sendable (Int) -> Void)?
  }

  /// The runtime's manual clock.
  let clock: ManualClock
  private let state = Mutex(State())

  /// A context at monotonic time 0 and the given wall-clock time.
  init(wall: Double = 1_767_225_600) {
    clock = ManualClock(wall: wall)
  }

  /// The clock's current instant.
  var now: EngineInstant { clock.now }

  /// Counts a fix (a beacon replay should send none).
  func emit(_ fix: Fix) { state.withLock { $0.fixes += 1 } }

  /// Records an advertisement with the monotonic time it arrived.
  func emitAdvertisement(_ advertisement: BeaconAdvertisement) {
    let at = clock.now.monotonic
    let (count, hook) = state.withLock { state in
      state.advertisements.append((advertisement, at))
      return (state.advertisements.count, state.onAdvertisement)
    }
    hook?(count)
  }

  /// Calls `hook` with the number of advertisements so far after each one.
  func onAdvertisement(_ hook: @escaping @Sendable (Int) -> Void) {
    state.withLock { $0.onAdvertisement = hook }
  }

  /// Records a failure.
  func fail(_ error: SourceError) { state.withLock { $0.failures.append(error) } }

  /// Counts an end.
  func end() { state.withLock { $0.ends += 1 } }

  /// Schedules an action on the manual clock.
  func schedule(after seconds: Double, _ action: @escaping @Sendable () -> Void) -> any Cancellable
  {
    clock.schedule(at: clock.now.monotonic + seconds, action)
  }

  /// Moves time forward, running every action that falls due.
  func advance(by seconds: Double) { clock.advance(by: seconds) }

  /// Runs what is due now, at most `limit` actions.
  func runDue(limit: Int = 100_000) { clock.runDue(limit: limit) }

  /// The advertisements emitted, in order.
  var advertisements: [BeaconAdvertisement] { state.withLock { $0.advertisements.map(\.0) } }
  /// The monotonic time of each emission.
  var times: [Double] { state.withLock { $0.advertisements.map(\.at) } }
  /// How many fixes were emitted.
  var fixes: Int { state.withLock { $0.fixes } }
  /// The failures reported.
  var failures: [SourceError] { state.withLock { $0.failures } }
  /// How many times the source said it ended.
  var ends: Int { state.withLock { $0.ends } }
  /// How many actions wait on the clock.
  var pendingCount: Int { clock.pendingCount }
}

/// `BeaconReplaySource` on a manual clock: pacing, re-stamping, instant batches, loop, stop, the
/// fixture file, and the failures of missing, unreadable and useless files. No test sleeps.
@Suite struct BeaconReplaySourceTests {
  typealias Options = SourceURL.ReplayOptions

  static let uuid = BeaconUUID(high: 0xE2C5_6DB5_DFFB_48D2, low: 0xB060_D0F5_A710_96E0)

  /// Advertisements of minors 0, 1, 2, ... at the given recorded offsets from 1 764 662 400.
  static func recording(_ offsets: [Double]) -> BeaconRecording {
    let advertisements = offsets.enumerated().map { index, offset in
      BeaconAdvertisement(
        uuid: uuid, major: 1, minor: UInt16(index), measuredPower: -59, rssi: -70,
        address: "C3:4A:1F:00:00:01", time: 1_764_662_400 + offset)
    }
    return BeaconRecording(
      records: advertisements.map(BeaconRecord.init), advertisements: advertisements)
  }

  /// A replay of ``recording(_:)`` held in memory.
  func replay(_ offsets: [Double], _ options: Options) -> BeaconReplaySource {
    BeaconReplaySource(
      recording: Self.recording(offsets), name: "beacons+replay:///test", options: options)
  }

  @Test func describesItselfAsABeaconSourceAtNoPowerCost() {
    let path = Paths.fixture("beacons", "office.beacons.jsonl")
    let source = BeaconReplaySource(path: path, options: Options(speed: 2, instant: true))
    #expect(source.descriptor.url == "beacons+replay://\(path)?speed=2.0&instant=1")
    #expect(!source.descriptor.producesLocation)
    #expect(source.descriptor.producesBeacons)
    #expect(!source.descriptor.producesHeading)
    #expect(source.descriptor.power == .none)
    let plain = BeaconReplaySource(path: "/tmp/a b.jsonl", options: Options())
    #expect(plain.descriptor.url == "beacons+replay:///tmp/a%20b.jsonl")
  }

  @Test(arguments: [1.0, 4, 0.5])
  func pacesByTheRecordedGapsOverTheSpeed(_ speed: Double) {
    let context = AdvertisementContext()
    replay([0, 0.5, 2, 2, 5], Options(speed: speed)).start(context: context)
    #expect(context.advertisements.count == 1, "the first is emitted at once")
    context.advance(by: 0.25 / speed)
    #expect(context.advertisements.count == 1)
    context.advance(by: 0.25 / speed)
    #expect(context.advertisements.count == 2)
    context.advance(by: 100 / speed)
    #expect(context.times.map { ($0 * speed * 1000).rounded() / 1000 } == [0, 0.5, 2, 2, 5])
    #expect(context.advertisements.map(\.minor) == [0, 1, 2, 3, 4])
    #expect(context.ends == 1)
    #expect(context.failures.isEmpty)
    #expect(context.fixes == 0)
    #expect(context.pendingCount == 0)
  }

  @Test func endsOnlyAfterTheLastAdvertisement() {
    let context = AdvertisementContext()
    replay([0, 1, 3], Options()).start(context: context)
    context.advance(by: 2.9)
    #expect(context.advertisements.count == 2)
    #expect(context.ends == 0)
    context.advance(by: 0.1)
    #expect(context.advertisements.count == 3)
    #expect(context.ends == 1)
  }

  @Test func stampsEachAdvertisementWithTheRuntimesWallTimeWhenPlayed() {
    let context = AdvertisementContext(wall: 2_000_000_000)
    let recording = Self.recording([0, 1.5, 4])
    BeaconReplaySource(recording: recording, name: "t", options: Options(speed: 2))
      .start(context: context)
    context.advance(by: 10)
    #expect(context.advertisements.map(\.time) == [2_000_000_000, 2_000_000_000.75, 2_000_000_002])
    var expected = recording.advertisements
    for index in expected.indices { expected[index].time = context.advertisements[index].time }
    #expect(context.advertisements == expected, "everything else is as recorded")
  }

  @Test func aTimeSlightlyOutOfOrderIsPlayedAtOnceWithoutDelayingTheRest() {
    let context = AdvertisementContext()
    replay([0, 2, 1.5, 3], Options()).start(context: context)
    context.advance(by: 10)
    #expect(context.times == [0, 2, 2, 3])
  }

  @Test func instantEmitsInBatchesOnVirtualTime() {
    let count = BeaconReplaySource.instantBatch * 2 + 10
    let context = AdvertisementContext()
    replay((0..<count).map { Double($0) / 3 }, Options(speed: 0.001, instant: true))
      .start(context: context)
    #expect(context.advertisements.count == BeaconReplaySource.instantBatch)
    context.runDue()
    #expect(context.advertisements.count == count)
    #expect(context.times.allSatisfy { $0 == 0 }, "no virtual time passes")
    #expect(context.ends == 1)
    #expect(context.pendingCount == 0)
  }

  @Test func loopsWithoutEnding() {
    let context = AdvertisementContext()
    replay([0, 1, 2], Options(speed: 2, loop: true)).start(context: context)
    // At 0, 0.5, 1; the loop restarts 1 / speed after the last: 1.5, 2, 2.5; then 3.
    context.advance(by: 3)
    #expect(context.times == [0, 0.5, 1, 1.5, 2, 2.5, 3])
    #expect(context.advertisements.map(\.minor) == [0, 1, 2, 0, 1, 2, 0])
    #expect(context.ends == 0)
    #expect(context.pendingCount == 1)
  }

  @Test func stopMidwayStopsEmissionAndALoop() {
    for loop in [false, true] {
      let context = AdvertisementContext()
      let source = replay([0, 1, 2, 3], Options(loop: loop))
      source.start(context: context)
      context.advance(by: 1.5)
      source.stop()
      context.advance(by: 100)
      #expect(context.advertisements.count == 2)
      #expect(context.ends == 0)
      #expect(context.pendingCount == 0)
    }
  }

  @Test func stopFromInsideAnEmissionStopsIt() {
    let context = AdvertisementContext()
    let source = replay([0, 1, 2, 3], Options())
    context.onAdvertisement { count in if count == 2 { source.stop() } }
    source.start(context: context)
    context.advance(by: 100)
    #expect(context.advertisements.count == 2)
    #expect(context.pendingCount == 0)
  }

  @Test func restartsFromTheBeginningAfterStop() {
    let context = AdvertisementContext()
    let source = replay([0, 1, 2], Options())
    source.start(context: context)
    context.advance(by: 1)
    source.stop()
    let again = AdvertisementContext()
    source.start(context: again)
    again.advance(by: 100)
    #expect(again.advertisements.map(\.minor) == [0, 1, 2])
    #expect(again.ends == 1)
    #expect(context.advertisements.count == 2, "nothing reaches the old context")
  }

  @Test func playsTheOfficeFixture() throws {
    let path = Paths.fixture("beacons", "office.beacons.jsonl")
    let recording = BeaconRecording.decode(
      try Paths.fixtureBytes("beacons", "office.beacons.jsonl"))
    let first = try #require(recording.advertisements.first?.time)
    let source = BeaconReplaySource(path: path, options: Options())
    let context = AdvertisementContext()
    source.start(context: context)
    context.advance(by: 30)
    let heard = recording.advertisements.filter { $0.time - first <= 30 }
    #expect(context.advertisements.count == heard.count)
    #expect(context.advertisements.map(\.minor) == heard.map(\.minor))
    context.advance(by: 31)
    #expect(context.advertisements.count == 402)
    #expect(context.ends == 1)
    #expect(source.problemCount == 0)
    #expect(source.problems.isEmpty)
  }

  @Test func badLinesAreSkippedCountedAndKept() throws {
    let good = BeaconRecording.line(BeaconRecord(Self.recording([0]).advertisements[0]))
    let text = ["# test", good, "{broken", good, #"{"time": 1}"#].joined(separator: "\n")
    let context = AdvertisementContext()
    let (source, path) = try withTemporaryDirectory { directory in
      let path = try write(text, to: "bad.beacons.jsonl", in: directory)
      let source = BeaconReplaySource(path: path, options: Options(instant: true))
      source.start(context: context)
      return (source, path)
    }
    context.runDue()
    #expect(context.advertisements.count == 2)
    #expect(context.ends == 1)
    #expect(context.failures.isEmpty)
    #expect(source.problemCount == 2)
    #expect(source.problems.map(\.line) == [3, 5])
    #expect(source.problems.allSatisfy { $0.file == path })
  }

  @Test func missingFileFailsPermanentlyNamingThePath() {
    let path = "/nonexistent/corelocation-tests/office.beacons.jsonl"
    let context = AdvertisementContext()
    BeaconReplaySource(path: path, options: Options()).start(context: context)
    context.advance(by: 10)
    #expect(context.advertisements.isEmpty)
    #expect(context.ends == 0)
    #expect(context.failures.map(\.code) == [.unavailable])
    #expect(context.failures.first?.isPermanent == true)
    #expect(context.failures.first?.message.contains(path) == true)
  }

  @Test func aDirectoryIsUnreadable() {
    let context = AdvertisementContext()
    BeaconReplaySource(path: Paths.fixtureFolder("beacons").path, options: Options())
      .start(context: context)
    #expect(context.failures.map(\.code) == [.unavailable])
    #expect(context.failures.first?.isPermanent == true)
  }

  @Test func aFileWithoutAUsableLineIsMalformedNamingTheFirstProblem() throws {
    let context = AdvertisementContext()
    let path = try withTemporaryDirectory { directory in
      let path = try write(
        "# nothing here\n\nnot json\n{\"time\": 1}\n", to: "bad.beacons.jsonl", in: directory)
      BeaconReplaySource(path: path, options: Options()).start(context: context)
      return path
    }
    context.advance(by: 10)
    #expect(context.failures.map(\.code) == [.malformed])
    #expect(context.failures.first?.isPermanent == true)
    #expect(context.failures.first?.message.contains(path + ":3") == true)
    #expect(context.advertisements.isEmpty)
    #expect(context.ends == 0)
  }

  @Test func emptyFilesAndFilesWithoutIBeaconsAreMalformed() throws {
    let other = #"{"time": 1, "address": "A", "rssi": -50, "manufacturer": {"6": "0109"}}"#
    for text in ["", "# header only\n", other + "\n"] {
      let context = AdvertisementContext()
      let path = try withTemporaryDirectory { directory in
        let path = try write(text, to: "empty.beacons.jsonl", in: directory)
        BeaconReplaySource(path: path, options: Options(loop: true)).start(context: context)
        return path
      }
      context.advance(by: 10)
      #expect(context.failures.map(\.code) == [.malformed], "\(text)")
      #expect(context.failures.first?.message.contains(path) == true)
      #expect(context.pendingCount == 0)
    }
  }
}
