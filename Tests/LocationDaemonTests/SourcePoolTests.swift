import Dispatch
import Foundation
import Geodesy
import LocationDaemon
import LocationEngine
import LocationModel
import LocationServices
import LocationSources
import Synchronization
import TestSupport
import Testing

/// `SourcePool` and `RelaySource` on a `ManualClock`: one real start for many relays, fan-out,
/// outages and ends under many clients, late relays, on-time accounting, and two app hubs fed by
/// one real source. No sleeps.
@Suite struct SourcePoolTests {
  let clock = ManualClock()

  // MARK: Starting and stopping

  @Test func relaysHaveTheRealDescriptorsAndStartNothing() throws {
    let gnss = PoolTestSource(url: "test://gnss", power: .high)
    let compass = PoolTestSource(url: "test://compass", power: .low, heading: true)
    let pool = SourcePool(sources: [gnss, compass], clock: clock)
    let first = pool.relays()
    let second = pool.relays()
    #expect(first.map(\.descriptor) == [gnss.descriptor, compass.descriptor])
    #expect(second.map(\.descriptor) == [gnss.descriptor, compass.descriptor])
    #expect(first[0] !== second[0], "each hub gets relays of its own")
    #expect(pool.descriptors == [gnss.descriptor, compass.descriptor])
    #expect(gnss.starts == 0 && compass.starts == 0)
    #expect(
      pool.status == [
        SourcePoolStatus(
          url: "test://gnss", power: .high, running: false, subscribers: 0, onSeconds: 0),
        SourcePoolStatus(
          url: "test://compass", power: .low, running: false, subscribers: 0, onSeconds: 0),
      ])
  }

  @Test func twoRelaysShareOneStartAndTheLastReleaseStops() throws {
    let source = PoolTestSource()
    let pool = SourcePool(sources: [source], clock: clock)
    let a = try #require(pool.relays().first as? RelaySource)
    let b = try #require(pool.relays().first as? RelaySource)
    a.start(context: RecordingContext())
    b.start(context: RecordingContext())
    #expect(source.starts == 1)
    #expect(source.isRunning)
    #expect(a.isStarted && b.isStarted)
    #expect(pool.status.first?.subscribers == 2)
    #expect(pool.status.first?.running == true)
    a.stop()
    #expect(source.stops == 0, "b still holds it")
    #expect(pool.status.first?.subscribers == 1)
    b.stop()
    #expect(source.stops == 1)
    #expect(!source.isRunning)
    #expect(pool.status.first?.running == false)
    #expect(pool.status.first?.subscribers == 0)
    a.stop()
    #expect(source.stops == 1, "stopping a stopped relay does nothing")
    a.start(context: RecordingContext())
    #expect(source.starts == 2, "the next acquire starts it again")
    #expect(pool.status.first?.starts == 2)
  }

  @Test func restartingARelayHoldsOnce() throws {
    let source = PoolTestSource()
    let pool = SourcePool(sources: [source], clock: clock)
    let relay = try #require(pool.relays().first)
    let old = RecordingContext()
    let new = RecordingContext()
    relay.start(context: old)
    relay.start(context: new)
    #expect(pool.status.first?.subscribers == 1)
    source.emit(fix(52, 5))
    #expect(old.reports.isEmpty)
    #expect(new.reports == [.fix(fix(52, 5, source: "test://source"))])
    relay.stop()
    #expect(!source.isRunning)
  }

  // MARK: Fan-out

  @Test func fixesAndHeadingsReachEveryRelayInOrder() throws {
    let source = PoolTestSource(heading: true)
    let pool = SourcePool(sources: [source], clock: clock)
    let contexts = (0..<3).map { _ in RecordingContext() }
    let relays = try contexts.map { _ in try #require(pool.relays().first) }
    for (relay, context) in zip(relays, contexts) { relay.start(context: context) }
    let sample = HeadingSample(time: 1_767_225_600, magneticHeading: 90, accuracy: 5, source: "")
    source.emit(fix(52, 5))
    source.emitHeading(sample)
    source.emit(fix(52.1, 5, time: 1_767_225_601))
    var named = sample
    named.source = "test://source"
    let expected: [PoolReport] = [
      .fix(fix(52, 5, source: "test://source")), .heading(named),
      .fix(fix(52.1, 5, time: 1_767_225_601, source: "test://source")),
    ]
    for context in contexts { #expect(context.reports == expected) }
    relays[1].stop()
    source.emit(fix(52.2, 5, time: 1_767_225_602))
    #expect(contexts[1].reports.count == 3, "a stopped relay hears nothing more")
    #expect(contexts[0].reports.count == 4)
    #expect(contexts[2].reports.count == 4)
  }

  /// A source's rehearsal (its wake-up before an epoch, `SourceContext.rehearse`; issue 19)
  /// reaches the first relays only, as a rehearsal: nothing is reported, and the pool's last fix,
  /// sent to a late relay, stays the real one.
  @Test func aRehearsalReachesTheFirstRelaysAndChangesNothing() throws {
    let source = PoolTestSource()
    let pool = SourcePool(sources: [source], clock: clock)
    let contexts = (0..<6).map { _ in RecordingContext() }
    let relays = try contexts.map { _ in try #require(pool.relays().first) }
    for (relay, context) in zip(relays, contexts) { relay.start(context: context) }
    source.emit(fix(52, 5))
    source.rehearse(fix(53, 5))
    let real = fix(52, 5, source: "test://source")
    let rehearsal = fix(53, 5, source: "test://source")
    let reached = SourcePool.rehearsedRelays
    #expect(
      contexts.map(\.rehearsed)
        == Array(repeating: [rehearsal], count: reached)
        + Array(repeating: [], count: 6 - reached))
    for context in contexts { #expect(context.reports == [.fix(real)]) }
    let late = RecordingContext()
    try #require(pool.relays().first).start(context: late)
    #expect(late.reports == [.fix(real)])
    for relay in relays { relay.stop() }
  }

  /// What a delivery makes happen in the pool (the source emitting again, a relay letting go)
  /// is done after every relay has had the report being delivered, as the queue orders it: a
  /// report that finds nothing queued goes to the relays at once (issue 19: no trip through the
  /// queue between the receiver and the apps) under the same rules.
  @Test func whatADeliveryMakesHappenComesAfterIt() throws {
    let source = PoolTestSource()
    let pool = SourcePool(sources: [source], clock: clock)
    let relays = try (0..<3).map { _ in try #require(pool.relays().first) }
    let next = fix(52.1, 5, time: 1_767_225_601)
    let contexts = [
      RecordingContext { fix in
        guard fix.latitude == 52 else { return }
        source.emit(next)
        relays[1].stop()
      },
      RecordingContext(), RecordingContext(),
    ]
    for (relay, context) in zip(relays, contexts) { relay.start(context: context) }
    source.emit(fix(52, 5))
    let first = PoolReport.fix(fix(52, 5, source: "test://source"))
    let second = PoolReport.fix(fix(52.1, 5, time: 1_767_225_601, source: "test://source"))
    #expect(contexts[0].reports == [first, second])
    #expect(contexts[1].reports == [first], "let go of during the first's delivery: not the next")
    #expect(contexts[2].reports == [first, second], "the first fix before the one it caused")
    #expect(pool.status.first?.subscribers == 2)
  }

  @Test func aLateRelayIsSentTheLastFixOfTheRun() throws {
    let source = PoolTestSource()
    let pool = SourcePool(sources: [source], clock: clock)
    let early = RecordingContext()
    let late = RecordingContext()
    try #require(pool.relays().first).start(context: early)
    try #require(pool.relays().first).start(context: late)
    #expect(late.reports.isEmpty, "no fix yet")
    source.emit(fix(52, 5))
    source.emit(fix(52.1, 5, time: 1_767_225_601))
    let later = RecordingContext()
    try #require(pool.relays().first).start(context: later)
    #expect(later.reports == [.fix(fix(52.1, 5, time: 1_767_225_601, source: "test://source"))])
    #expect(source.starts == 1)
  }

  @Test func aFreshRunForgetsTheLastFix() throws {
    let source = PoolTestSource()
    let pool = SourcePool(sources: [source], clock: clock)
    let relay = try #require(pool.relays().first)
    relay.start(context: RecordingContext())
    source.emit(fix(52, 5))
    relay.stop()
    let context = RecordingContext()
    relay.start(context: context)
    #expect(context.reports.isEmpty, "a fix of an earlier run is not replayed")
  }

  // MARK: Outages, ends

  @Test func aSourceDyingAndReturningUnderManyClients() throws {
    let source = PoolTestSource()
    let pool = SourcePool(sources: [source], clock: clock)
    let contexts = (0..<50).map { _ in RecordingContext() }
    for context in contexts { try #require(pool.relays().first).start(context: context) }
    #expect(source.starts == 1)
    source.emit(fix(52, 5))
    let outage = SourceError(.disconnected, "test: gone", isPermanent: false)
    source.fail(outage)
    #expect(pool.status.first?.failing == true)
    #expect(pool.status.first?.running == true, "the real source keeps retrying")
    #expect(pool.status.first?.lastFailure == "test: gone")
    // A relay that starts during the outage hears of it at once.
    let during = RecordingContext()
    try #require(pool.relays().first).start(context: during)
    #expect(during.reports == [.failure(outage)])
    source.emit(fix(52.5, 5, time: 1_767_225_700))
    let back = PoolReport.fix(fix(52.5, 5, time: 1_767_225_700, source: "test://source"))
    for context in contexts {
      #expect(
        context.reports == [.fix(fix(52, 5, source: "test://source")), .failure(outage), back])
    }
    #expect(during.reports == [.failure(outage), back])
    #expect(pool.status.first?.failing == false)
    #expect(source.starts == 1 && source.stops == 0, "never restarted for the outage")
    // It dies again, and again returns.
    source.fail(outage)
    source.emit(fix(52.6, 5, time: 1_767_225_701))
    #expect(contexts.allSatisfy { $0.reports.count == 5 && $0.reports.last?.isFix == true })
  }

  @Test(arguments: [true, false])
  func aSourceFinishedForGoodIsStoppedAndLateRelaysAreToldAtOnce(ended: Bool) throws {
    let source = PoolTestSource()
    let pool = SourcePool(sources: [source], clock: clock)
    let first = RecordingContext()
    let holder = try #require(pool.relays().first)
    holder.start(context: first)
    let failure = SourceError(.unavailable, "test: no such file", isPermanent: true)
    let finish: PoolReport = ended ? .end : .failure(failure)
    if ended { source.end() } else { source.fail(failure) }
    #expect(first.reports == [finish])
    #expect(source.stops == 1, "the pool stops a source that finished")
    #expect(pool.status.first?.running == false)
    #expect(pool.status.first?.finished == true)
    #expect(pool.status.first?.lastFailure == (ended ? nil : "test: no such file"))
    let late = RecordingContext()
    let lateRelay = try #require(pool.relays().first)
    lateRelay.start(context: late)
    #expect(late.reports == [finish], "told at once")
    #expect(source.starts == 1, "not started again while held")
    // Once nobody holds it, the next acquire starts it afresh.
    holder.stop()
    lateRelay.stop()
    #expect(pool.status.first?.finished == false)
    let fresh = RecordingContext()
    try #require(pool.relays().first).start(context: fresh)
    #expect(source.starts == 2)
    #expect(fresh.reports.isEmpty)
  }

  @Test func reportsOfAStoppedRunAreDropped() throws {
    let source = PoolTestSource()
    let pool = SourcePool(sources: [source], clock: clock)
    let relay = try #require(pool.relays().first)
    relay.start(context: RecordingContext())
    let stale = try #require(source.context)
    relay.stop()
    let context = RecordingContext()
    relay.start(context: context)
    stale.emit(fix(1, 1))
    stale.fail(SourceError(.disconnected, "old", isPermanent: true))
    stale.end()
    #expect(context.reports.isEmpty)
    #expect(pool.status.first?.running == true)
    #expect(pool.status.first?.lastFailure == nil)
  }

  @Test func aSourceFailingInsideStartReachesTheRelay() throws {
    let failure = SourceError(.unavailable, "test: cannot open", isPermanent: true)
    let source = PoolTestSource(onStart: { $0.fail(failure) })
    let pool = SourcePool(sources: [source], clock: clock)
    let context = RecordingContext()
    try #require(pool.relays().first).start(context: context)
    #expect(context.reports == [.failure(failure)])
    #expect(source.stops == 1)
  }

  // MARK: Time

  @Test func onSecondsCountOnlyRunningTimeOnThePoolClock() throws {
    let source = PoolTestSource()
    let pool = SourcePool(sources: [source], clock: clock)
    let a = try #require(pool.relays().first)
    let b = try #require(pool.relays().first)
    clock.advance(by: 10)
    #expect(pool.status.first?.onSeconds == 0)
    a.start(context: RecordingContext())
    clock.advance(by: 5)
    #expect(pool.status.first?.onSeconds == 5)
    b.start(context: RecordingContext())
    clock.advance(by: 1)
    a.stop()
    clock.advance(by: 1.5)
    #expect(pool.status.first?.onSeconds == 7.5, "two holders still one real run")
    b.stop()
    clock.advance(by: 100)
    #expect(pool.status.first?.onSeconds == 7.5)
    a.start(context: RecordingContext())
    clock.advance(by: 2.5)
    #expect(pool.status.first?.onSeconds == 10)
    source.end()
    clock.advance(by: 50)
    #expect(pool.status.first?.onSeconds == 10, "a finished source is off")
  }

  @Test func realSourcesRunOnThePoolClock() throws {
    try withTemporaryDirectory { directory in
      let path = directory + "/geolocation"
      try "52.1\n5.1\n3\n25\n".write(toFile: path, atomically: true, encoding: .utf8)
      let source = StaticSource(path: path)
      let pool = SourcePool(sources: [source], clock: clock)
      let early = RecordingContext()
      let late = RecordingContext()
      let relay = try #require(pool.relays().first)
      relay.start(context: early)
      #expect(early.reports.count == 1, "a static position is emitted at once")
      clock.advance(by: 30)
      try #require(pool.relays().first).start(context: late)
      #expect(late.reports == early.reports, "and a late relay gets it at once too")
      clock.advance(by: 30)
      #expect(early.reports.count == 2, "repeated on the pool clock")
      #expect(late.reports.count == 2)
      guard case .fix(let repeated) = early.reports.last else {
        Issue.record("expected a fix")
        return
      }
      #expect(repeated.time == clock.now.wall)
      #expect(repeated.latitude == 52.1 && repeated.horizontalAccuracy == 25)
    }
  }

  // MARK: Races

  @Test func concurrentStartsAndStopsNeverOverlapRealRuns() throws {
    let source = PoolTestSource()
    let pool = SourcePool(sources: [source], clock: clock)
    let relays = try (0..<8).map { _ in try #require(pool.relays().first) }
    DispatchQueue.concurrentPerform(iterations: relays.count + 1) { index in
      if index == relays.count {
        for step in 0..<500 { source.emit(fix(52, 5, time: 1_767_225_600 + Double(step))) }
        return
      }
      for _ in 0..<200 {
        relays[index].start(context: RecordingContext())
        relays[index].stop()
      }
    }
    #expect(!source.isRunning)
    #expect(source.starts == source.stops)
    #expect(!source.overlapped, "the real source was never started twice without a stop")
    #expect(pool.status.first?.subscribers == 0)
    #expect(pool.status.first?.running == false)
  }

  // MARK: Hubs

  /// One source in a pool, two apps' hubs over its relays, a client of each running updates.
  fileprivate func twoAppsUpdating() -> (
    source: PoolTestSource, pool: SourcePool, hubs: [LocationHub], clients: [RecordingClient],
    ids: [ClientID]
  ) {
    let source = PoolTestSource()
    let pool = SourcePool(sources: [source], clock: clock)
    let hubs = ["org.example.one", "org.example.two"].map {
      LocationHub(
        app: $0, sources: .objects { pool.relays() }, persistence: MemoryPersistence(),
        clock: clock)
    }
    let clients = hubs.map { _ in RecordingClient() }
    let ids = zip(hubs, clients).map { hub, client in hub.register(client) }
    for (hub, id) in zip(hubs, ids) { hub.startUpdates(id, UpdateRequest()) }
    return (source, pool, hubs, clients, ids)
  }

  @Test func twoAppHubsShareOneRealSource() throws {
    let (source, pool, hubs, clients, ids) = twoAppsUpdating()
    #expect(source.starts == 1, "one real start for two apps")
    #expect(hubs.allSatisfy { $0.runningSources == ["test://source"] })
    #expect(pool.status.first?.subscribers == 2)
    source.emit(fix(52, 5))
    clock.advance(by: 1)
    source.emit(fix(52.001, 5, time: 1_767_225_601))
    for client in clients {
      #expect(client.locations.map(\.latitude) == [52, 52.001])
      #expect(client.locations.allSatisfy { $0.source == "test://source" })
      #expect(client.errors.isEmpty)
    }
    // The source dies and returns: both apps hear the failure and then fixes again.
    source.fail(SourceError(.disconnected, "test: gone", isPermanent: false))
    clock.advance(by: 1)
    source.emit(fix(52.002, 5, time: 1_767_225_603))
    for client in clients {
      #expect(client.locations.map(\.latitude) == [52, 52.001, 52.002])
    }
    #expect(source.starts == 1)
    hubs[0].send(.stopUpdates(ids[0]))
    #expect(source.isRunning, "the other app still needs it")
    source.emit(fix(52.003, 5, time: 1_767_225_604))
    #expect(clients[0].locations.count == 3)
    #expect(clients[1].locations.count == 4)
    hubs[1].send(.stopUpdates(ids[1]))
    #expect(!source.isRunning)
    #expect(source.stops == 1)
    #expect(pool.status.first?.onSeconds == 2)
  }

  @Test func aSourceEndingUnderTwoAppsEndsForBothAndRunsAgainWhenAskedAgain() throws {
    let (source, pool, hubs, clients, ids) = twoAppsUpdating()
    source.emit(fix(52, 5))
    source.end()
    for client in clients {
      #expect(client.locations.count == 1)
      #expect(client.errors.map(\.0) == [.sourcesEnded], "each app hears the end")
    }
    #expect(source.starts == 1 && source.stops == 1)
    #expect(hubs.allSatisfy { $0.runningSources.isEmpty }, "both hubs let go of their relays")
    #expect(pool.status.first?.subscribers == 0)
    // One app asks again: the source runs afresh, once.
    hubs[0].send(.stopUpdates(ids[0]))
    hubs[0].startUpdates(ids[0], UpdateRequest())
    #expect(source.starts == 2)
    source.emit(fix(52.1, 5, time: 1_767_225_601))
    // (The engine first hands out its cached location, then the new run's fix.)
    #expect(clients[0].locations.last?.latitude == 52.1)
    #expect(clients[1].locations.count == 1)
  }

  @Test func anAppStartingLaterIsAnsweredAtOnce() throws {
    let source = PoolTestSource()
    let pool = SourcePool(sources: [source], clock: clock)
    let first = LocationHub(
      app: "org.example.one", sources: .objects { pool.relays() },
      persistence: MemoryPersistence(), clock: clock)
    let second = LocationHub(
      app: "org.example.two", sources: .objects { pool.relays() },
      persistence: MemoryPersistence(), clock: clock)
    let one = RecordingClient()
    let two = RecordingClient()
    first.startUpdates(first.register(one), UpdateRequest())
    source.emit(fix(52, 5))
    second.startUpdates(second.register(two), UpdateRequest())
    #expect(two.locations.map(\.latitude) == [52])
    #expect(source.starts == 1)
  }
}

/// What a relay's context was told.
private enum PoolReport: Equatable {
  case fix(Fix)
  case heading(HeadingSample)
  case failure(SourceError)
  case end

  var isFix: Bool {
    if case .fix = self { return true }
    return false
  }
}

/// A context that records what it is told.
private final class RecordingContext: SourceContext {
  private let recorded = Mutex<[PoolReport]>([])
  private let rehearsals = Mutex<[Fix]>([])
  /// Runs after each fix is recorded: a relay whose delivery makes more happen.
  private let afterFix: @Sendable (Fix) -> Void

  init(afterFix: @escaping @Sendable (Fix) -> Void = { _ in }) { self.afterFix = afterFix }

  var reports: [PoolReport] { recorded.withLock { $0 } }
  var rehearsed: [Fix] { rehearsals.withLock { $0 } }
  func rehearse(_ fix: Fix) { rehearsals.withLock { $0.append(fix) } }
  var now: EngineInstant { EngineInstant(monotonic: 0, wall: 0) }
  func emit(_ fix: Fix) {
    recorded.withLock { $0.append(.fix(fix)) }
    afterFix(fix)
  }
  func emitHeading(_ sample: HeadingSample) { recorded.withLock { $0.append(.heading(sample)) } }
  func fail(_ error: SourceError) { recorded.withLock { $0.append(.failure(error)) } }
  func end() { recorded.withLock { $0.append(.end) } }
  func schedule(after seconds: Double, _ action: @escaping @Sendable () -> Void) -> any Cancellable
  {
    NeverCancellable()
  }
}

/// A timer that never fires, for contexts whose sources schedule nothing the test waits for.
struct NeverCancellable: Cancellable {
  func cancel() {}
}

/// A real source the test drives: it remembers its context while running, counts starts and stops,
/// and notices a start while already running.
private final class PoolTestSource: LocationSource {
  private struct State {
    var context: (any SourceContext)?
    var starts = 0
    var stops = 0
    var overlapped = false
  }

  let descriptor: SourceDescriptor
  private let onStart: @Sendable (any SourceContext) -> Void
  private let state = Mutex(State())

  init(
    url: String = "test://source", power: PowerCost = .high, heading: Bool = false,
    onStart: @escaping @Sendable (any SourceContext) -> Void = { _ in }
  ) {
    descriptor = SourceDescriptor(
      url: url, nominalAccuracy: 5, power: power, producesHeading: heading)
    self.onStart = onStart
  }

  func start(context: any SourceContext) {
    state.withLock {
      if $0.context != nil { $0.overlapped = true }
      $0.context = context
      $0.starts += 1
    }
    onStart(context)
  }

  func stop() {
    state.withLock {
      $0.context = nil
      $0.stops += 1
    }
  }

  var context: (any SourceContext)? { state.withLock { $0.context } }
  var isRunning: Bool { context != nil }
  var starts: Int { state.withLock { $0.starts } }
  var stops: Int { state.withLock { $0.stops } }
  var overlapped: Bool { state.withLock { $0.overlapped } }

  func emit(_ fix: Fix) { context?.emit(fix) }
  func rehearse(_ fix: Fix) { context?.rehearse(fix) }
  func emitHeading(_ sample: HeadingSample) { context?.emitHeading(sample) }
  func fail(_ error: SourceError) { context?.fail(error) }
  func end() { context?.end() }
}

/// A fix with a source name.
private func fix(
  _ latitude: Double, _ longitude: Double, time: Double = 1_767_225_600, source: String
) -> Fix {
  Fix(latitude: latitude, longitude: longitude, horizontalAccuracy: 5, time: time, source: source)
}
