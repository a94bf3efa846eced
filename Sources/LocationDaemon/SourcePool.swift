import Dispatch
import Geodesy
import LocationEngine
import LocationModel
import LocationServices
import LocationSources
import Synchronization

/// One set of real sources shared by many app hubs (`docs/architecture.md`, "locationd").
///
/// The pool owns the real `LocationSource` objects. Each app hub gets its own relays
/// (`relays()`): one `RelaySource` per pool source, with the same descriptor, so that every hub's
/// arbiter chooses among relays exactly as it would among real sources. Starting a relay acquires
/// its pool source and stopping it releases it; the hardware runs once, for as long as any relay
/// holds it.
///
/// Rules (ours):
/// - **Start and stop.** The first acquire of a pool source starts the real source, with a context
///   of the pool's own whose `now` and `schedule` use the pool's clock; the last release stops it.
/// - **Fan-out.** Every fix, heading sample, failure and end the real source reports goes to every
///   relay that holds it, in the order the source reported them. A relay that acquires a source
///   that is already running is sent, at once, the last fix of the current run (so that a
///   late-coming app is answered as soon as it would be by a source it started itself, such as a
///   static position repeated once a minute), or, while the source is in an outage, that
///   failure (so that its hub fails over as it would).
/// - **Outages.** A transient failure (`isPermanent == false`) reaches every relay; the real source
///   keeps running and retries; its next fix ends the outage and reaches every relay again.
/// - **Failed or ended for good.** A permanent failure or an end reaches every relay and the pool
///   stops the real source at once. A relay that acquires the source while any relay still holds it
///   is told the same at once (the failure, or the end), and the source is not started again. Once
///   every relay has released it, the next acquire starts the real source afresh (as an embedded
///   hub restarts its finished sources when locations are asked for again): a file that appeared,
///   a recording played from its beginning.
/// - **Order and races.** Real starts and stops, and every delivery, are queued under the pool's
///   lock and performed outside it, one at a time and in queue order, by whichever thread finds the
///   queue idle (a trampoline: a delivery that leads to another start or stop, even synchronously,
///   queues it behind itself instead of recursing). Each run of a real source has a generation, so
///   reports from a run that has been stopped are dropped. A delivery queued for a relay that has
///   released the source by the time the delivery is performed is dropped; a delivery being
///   performed while a relay stops may still reach its context once (`LocationHub` ignores it by
///   its own generation).
/// - **Accounting.** The pool measures, on its clock, how long each real source has been running
///   in total (`SourcePoolStatus.onSeconds`): every source reports when it is on.
package final class SourcePool: Sendable {
  /// How many relays a source's rehearsal reaches (the first to acquire it;
  /// `SourceContext.rehearse`).
  package static let rehearsedRelays = 4

  /// The clock the real sources run on, and on which their running time is measured.
  package let clock: any HubClock
  private let pooled: [PooledSource]

  /// Creates a pool over real sources; nothing is started before a relay is.
  /// - Parameters:
  ///   - sources: the real sources, in configuration order; the pool owns them from now on (nobody
  ///     else starts or stops them).
  ///   - clock: the clock given to the real sources (`now`, `schedule`) and used for `onSeconds`.
  ///   - wifi: the machine's Wi-Fi knowledge: a scan becomes a position here, once for every app
  ///     (relays receive the position as the source's fix), and every fix is noted for learning.
  package init(sources: [any LocationSource], clock: any HubClock, wifi: WifiKnowledge? = nil) {
    self.clock = clock
    self.pooled = sources.map { PooledSource(source: $0, clock: clock, wifi: wifi) }
  }

  /// Creates a pool whose sources run on real time, their timers firing on a serial queue of the
  /// pool's own.
  /// - Parameter sources: the real sources, in configuration order.
  package convenience init(sources: [any LocationSource], wifi: WifiKnowledge? = nil) {
    self.init(
      sources: sources, clock: LiveClock(queue: DispatchQueue(label: "corelocation.sourcepool")),
      wifi: wifi)
  }

  /// The descriptors of the pool's sources, in configuration order.
  package var descriptors: [SourceDescriptor] { pooled.map(\.source.descriptor) }

  /// A new set of relays, one per pool source in configuration order, each with its real source's
  /// descriptor; give one set to each app hub (`LocationHub.Sources.objects { pool.relays() }`).
  /// - Returns: `RelaySource` objects, none of them started.
  package func relays() -> [any LocationSource] {
    pooled.map { RelaySource(pooled: $0) }
  }

  /// What each pool source is doing now, in configuration order.
  package var status: [SourcePoolStatus] {
    let now = clock.now.monotonic
    return pooled.map { $0.status(now: now) }
  }
}

/// What one pool source is doing (`SourcePool.status`, `locationctl status`).
package struct SourcePoolStatus: Sendable, Equatable {
  /// The source's URL (its descriptor's).
  package var url: String
  /// Its power cost while running (its descriptor's).
  package var power: PowerCost
  /// Whether the real source is running now.
  package var running: Bool
  /// How many relays hold it now (started and not yet stopped), whether or not it runs.
  package var subscribers: Int
  /// Seconds the real source has been running in total, on the pool's clock, including the
  /// current run.
  package var onSeconds: Double
  /// How many times the real source has been started.
  package var starts: Int
  /// Whether it is in an outage it may recover from (a transient failure and no fix since).
  package var failing: Bool
  /// Whether it has failed or ended for good and stays so until every relay has released it.
  package var finished: Bool
  /// The message of the last failure it reported (transient or permanent), if any.
  package var lastFailure: String?

  /// Creates a status.
  package init(
    url: String, power: PowerCost, running: Bool, subscribers: Int, onSeconds: Double,
    starts: Int = 0, failing: Bool = false, finished: Bool = false, lastFailure: String? = nil
  ) {
    self.url = url
    self.power = power
    self.running = running
    self.subscribers = subscribers
    self.onSeconds = onSeconds
    self.starts = starts
    self.failing = failing
    self.finished = finished
    self.lastFailure = lastFailure
  }
}

/// One real source of a pool and the relays that hold it.
final class PooledSource: Sendable {
  /// What a delivery carries.
  enum Report: Sendable {
    case fix(Fix)
    case heading(HeadingSample)
    case advertisement(BeaconAdvertisement)
    case failure(SourceError)
    case end
  }

  /// Something to do outside the lock, in queue order.
  private enum Action {
    case start(generation: Int)
    case stop
    /// `releases`: the state's release count when queued; while it is unchanged every target
    /// still holds the source.
    case deliver([Subscriber], Report, releases: Int)
  }

  /// A relay holding the source: its subscription number and its context.
  private struct Subscriber {
    var id: Int
    var context: any SourceContext
  }

  /// How a run finished for good.
  private enum Finish {
    case failed(SourceError)
    case ended
  }

  private struct State {
    /// The relays holding the source, in acquisition order (increasing subscription numbers).
    var subscribers: [Subscriber] = []
    var nextSubscription = 1
    /// How many holds have been released so far.
    var releases = 0
    /// The real source's runs, outages, finish and on-time (``SourceRun``'s rules, shared with
    /// the embedded hub).
    var run = SourceRun()
    /// How it finished for good, while it is finished.
    var finish: Finish?
    /// The transient failure of an outage, until the next fix.
    var outage: SourceError?
    /// The last fix of the current run.
    var lastFix: Fix?
    var lastFailure: String?
    var outbox: [Action] = []
    var draining = false

    /// Stops the real source.
    mutating func markStopped(at now: Double) {
      run.stop(at: now)
      outbox.append(.stop)
    }

    /// Queues a report to every relay holding the source (the array is shared, not copied).
    mutating func broadcast(_ report: Report) {
      guard !subscribers.isEmpty else { return }
      outbox.append(.deliver(subscribers, report, releases: releases))
    }

    /// A report to every relay holding the source, when nothing is queued and nobody delivers:
    /// the caller takes the queue and delivers it at once to the relays returned (then drains
    /// what its deliveries queued), which is what queuing and draining it would do, without the
    /// trip through the queue on the way from the receiver to the apps. Otherwise it is queued
    /// (`broadcast`), and nil is returned.
    mutating func takeDelivery(of report: Report) -> [Subscriber]? {
      guard !draining, outbox.isEmpty else {
        broadcast(report)
        return nil
      }
      guard !subscribers.isEmpty else { return nil }
      draining = true
      return subscribers
    }

    /// Queues a report to one relay.
    mutating func send(_ report: Report, to subscriber: Subscriber) {
      outbox.append(.deliver([subscriber], report, releases: releases))
    }
  }

  let source: any LocationSource
  /// The machine's Wi-Fi knowledge (scans become fixes here), if any.
  let wifi: WifiKnowledge?
  private let clock: any HubClock
  private let state = Mutex(State())

  init(source: any LocationSource, clock: any HubClock, wifi: WifiKnowledge? = nil) {
    self.source = source
    self.clock = clock
    self.wifi = wifi
  }

  // MARK: Relays

  /// Adds a relay's context; starts the real source if it is the first, or tells the newcomer what
  /// it missed (the run's last fix, an outage, a finish).
  /// - Returns: the subscription number to release with.
  func acquire(_ context: any SourceContext) -> Int {
    let now = clock.now.monotonic
    let id = state.withLock { state -> Int in
      let id = state.nextSubscription
      state.nextSubscription += 1
      let subscriber = Subscriber(id: id, context: context)
      state.subscribers.append(subscriber)
      if let finish = state.finish {
        switch finish {
        case .failed(let error): state.send(.failure(error), to: subscriber)
        case .ended: state.send(.end, to: subscriber)
        }
      } else if !state.run.running {
        state.lastFix = nil
        state.outage = nil
        state.outbox.append(.start(generation: state.run.start(at: now)))
      } else if let outage = state.outage {
        state.send(.failure(outage), to: subscriber)
      } else if let fix = state.lastFix {
        state.send(.fix(fix), to: subscriber)
      }
      return id
    }
    drain()
    return id
  }

  /// Removes a relay's context; stops the real source if it was the last, and forgets a finish.
  func release(_ id: Int) {
    let now = clock.now.monotonic
    state.withLock { state in
      guard let index = state.subscribers.firstIndex(where: { $0.id == id }) else { return }
      state.subscribers.remove(at: index)
      state.releases += 1
      guard state.subscribers.isEmpty else { return }
      state.finish = nil
      state.run.clearFinish()
      if state.run.running { state.markStopped(at: now) }
    }
    drain()
  }

  /// Whether the current run reported an outage it has not recovered from.
  var isInOutage: Bool { state.withLock { $0.outage != nil } }

  // MARK: The real source's reports

  /// A report from the real source's run `generation`.
  func received(_ report: Report, generation: Int) {
    let now = clock.now.monotonic
    let (current, direct) = state.withLock { state -> (Bool, [Subscriber]?) in
      let kind: SourceRun.Report
      switch report {
      case .fix: kind = .fix
      case .heading: kind = .heading
      case .advertisement: kind = .advertisement
      case .failure(let error): kind = .failure(permanent: error.isPermanent)
      case .end: kind = .end
      }
      guard state.run.report(kind, generation: generation) != .stale else { return (false, nil) }
      switch report {
      case .fix(let fix):
        state.outage = nil
        state.lastFix = fix
        return (true, state.takeDelivery(of: report))
      case .heading:
        return (true, state.takeDelivery(of: report))
      case .advertisement:
        state.outage = nil
        return (true, state.takeDelivery(of: report))
      case .failure(let error):
        state.lastFailure = error.message
        state.broadcast(report)
        if error.isPermanent {
          state.finish = .failed(error)
          state.markStopped(at: now)
        } else {
          state.outage = error
        }
      case .end:
        state.finish = .ended
        state.broadcast(report)
        state.markStopped(at: now)
      }
      return (true, nil)
    }
    guard current else { return }
    if let direct {
      deliver(report, to: direct)
      continueDraining()
      return
    }
    switch report {
    case .failure(let error):
      HubLog.write(
        .info, source.descriptor.url,
        "pool: " + (error.isPermanent ? "failed for good: " : "failed; retrying: ") + error.message)
    case .end:
      HubLog.write(.info, source.descriptor.url, "pool: ended")
    case .fix, .heading, .advertisement:
      break
    }
    drain()
  }

  /// Hands a rehearsal (`SourceContext.rehearse`) to the first relays' hubs, when it comes from
  /// the current run: nothing is recorded, queued or delivered.
  func rehearse(_ fix: Fix, generation: Int) {
    let targets = state.withLock { state -> ArraySlice<Subscriber> in
      guard state.run.generation == generation else { return [] }
      return state.subscribers.prefix(SourcePool.rehearsedRelays)
    }
    for target in targets { target.context.rehearse(fix) }
  }

  // MARK: The queue

  /// Performs queued actions until the queue is empty, unless another call is doing so already.
  private func drain() {
    let mine = state.withLock { state -> Bool in
      guard !state.draining, !state.outbox.isEmpty else { return false }
      state.draining = true
      return true
    }
    guard mine else { return }
    continueDraining()
  }

  /// Performs queued actions until the queue is empty, for the caller that holds it.
  private func continueDraining() {
    while let action = nextAction() {
      perform(action)
    }
  }

  /// The next action, with deliveries narrowed to the relays still holding the source; nil (and
  /// the queue released) when there is none.
  private func nextAction() -> Action? {
    state.withLock { state -> Action? in
      while !state.outbox.isEmpty {
        let action = state.outbox.removeFirst()
        guard case .deliver(let targets, let report, let releases) = action,
          releases != state.releases
        else { return action }
        // Some relay released the source since this was queued: keep those still holding it.
        let holding = Set(state.subscribers.map(\.id))
        let live = targets.filter { holding.contains($0.id) }
        if !live.isEmpty { return .deliver(live, report, releases: state.releases) }
      }
      state.draining = false
      return nil
    }
  }

  private func perform(_ action: Action) {
    switch action {
    case .start(let generation):
      HubLog.write(.info, source.descriptor.url, "pool: starting")
      source.start(context: PoolSourceContext(pooled: self, clock: clock, generation: generation))
    case .stop:
      HubLog.write(.info, source.descriptor.url, "pool: stopped")
      source.stop()
    case .deliver(let targets, let report, _):
      deliver(report, to: targets)
    }
  }

  /// Hands a report to relays, in order (a queued delivery, or one that found the queue empty).
  private func deliver(_ report: Report, to targets: [Subscriber]) {
    for target in targets {
      switch report {
      case .fix(let fix): target.context.emit(fix)
      case .heading(let sample): target.context.emitHeading(sample)
      case .advertisement(let advertisement): target.context.emitAdvertisement(advertisement)
      case .failure(let error): target.context.fail(error)
      case .end: target.context.end()
      }
    }
  }

  // MARK: Status

  /// The status now (`now`: the pool clock's monotonic reading).
  func status(now: Double) -> SourcePoolStatus {
    let descriptor = source.descriptor
    return state.withLock { state in
      SourcePoolStatus(
        url: descriptor.url, power: descriptor.power, running: state.run.running,
        subscribers: state.subscribers.count, onSeconds: state.run.onTime(at: now),
        starts: state.run.starts, failing: state.run.running && state.run.failing,
        finished: state.finish != nil, lastFailure: state.lastFailure)
    }
  }
}

/// What a real source sees of the pool: its reports go to the pool, tagged with the run's
/// generation; time is the pool's clock.
private struct PoolSourceContext: SourceContext {
  let pooled: PooledSource
  let clock: any HubClock
  let generation: Int

  var now: EngineInstant {
    let now = clock.now
    return EngineInstant(monotonic: now.monotonic, wall: now.wall)
  }

  /// `fix`, named after the real source when it names none.
  private func named(_ fix: Fix) -> Fix {
    var fix = fix
    if fix.source.isEmpty { fix.source = pooled.source.descriptor.url }
    return fix
  }

  func emit(_ fix: Fix) {
    let fix = named(fix)
    // Noted before the relays hear the fix; what it taught is written to the store after it has
    // reached every app (`WifiKnowledge.learn`: a commit waits for the disk).
    let learned = pooled.wifi?.learn(fix)
    pooled.received(.fix(fix), generation: generation)
    if let learned { pooled.wifi?.store(learned) }
  }

  func emitScan(_ scan: WifiScan) {
    var scan = scan
    if scan.source.isEmpty { scan.source = pooled.source.descriptor.url }
    guard let wifi = pooled.wifi else { return }
    // Not located: an outage, once (the relays' hubs run the next source beside it).
    let generation = generation
    let pooled = pooled
    wifi.receive(
      scan, failing: pooled.isInOutage,
      emit: { pooled.received(.fix($0), generation: generation) },
      fail: { pooled.received(.failure($0), generation: generation) })
  }

  func emitHeading(_ sample: HeadingSample) {
    var sample = sample
    if sample.source.isEmpty { sample.source = pooled.source.descriptor.url }
    pooled.received(.heading(sample), generation: generation)
  }

  func emitAdvertisement(_ advertisement: BeaconAdvertisement) {
    pooled.received(.advertisement(advertisement), generation: generation)
  }

  func fail(_ error: SourceError) { pooled.received(.failure(error), generation: generation) }

  func rehearse(_ fix: Fix) { pooled.rehearse(named(fix), generation: generation) }

  func end() { pooled.received(.end, generation: generation) }

  func schedule(after seconds: Double, _ action: @escaping @Sendable () -> Void) -> any Cancellable
  {
    clock.schedule(at: clock.now.monotonic + seconds, action)
  }
}
