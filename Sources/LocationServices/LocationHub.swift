import Dispatch
import Foundation
import Geodesy
import LocationEngine
import LocationModel
import LocationSources
import LocationStore
import Synchronization

/// The in-process runtime (`docs/architecture.md`, "embedded mode"): the engine, the sources and the store on one
/// serial executor. Every `CLLocationManager` of the process is a client of one hub.
///
/// Events are handled one at a time, in the order they were sent: on a serial dispatch queue for a
/// live hub, or synchronously on the sending thread (a trampoline) for a manual-clock hub. Effects
/// are applied outside the lock.
package final class LocationHub: Sendable {
  /// How the hub finds its sources.
  package enum Sources: Sendable {
    /// These URLs, in order.
    case urls([SourceURL])
    /// Source objects made by the caller (tests, scripted sources).
    case objects(@Sendable () -> [any LocationSource])
    /// None could be configured or discovered; the message says what to do.
    case unavailable(String)
  }

  struct State {
    var engine: LocationEngine
    /// The clients in id order (ids only grow: a new one is appended). The engine delivers a fix
    /// to its clients in this order, and `apply` finds each by walking it: no hashing for each of
    /// a daemon's hundreds of deliveries.
    var clients = HubClientList()
    var nextClient = 1
    /// The app's authorization and the rule that changes it.
    var authorization: AuthorizationMachine
    /// The authorization the engine and the clients were last told.
    var told: AuthorizationSnapshot
    /// The configured sources, made on first demand, in configuration order.
    var candidates: [Candidate]?
    /// The strongest accuracy asked for, or nil when nothing needs locations.
    var demand: Double?
    /// Whether some client wants headings.
    var headingDemand = false
    /// Whether some client ranges beacons or the app monitors beacon regions.
    var beaconDemand = false
    /// Whether a configured source can produce headings, once asked (the configuration is fixed).
    var headingCapable: Bool?
    var timers: [EngineTimer: any Cancellable] = [:]
    var problem: String?
    /// The last permanent failure was a refusal of this app.
    var lastFailureWasDenial = false
    /// Writes waiting for the store, in order (``CommitOutbox``'s rule), and the timer of the
    /// next attempt.
    var outbox = CommitOutbox<HeldWrite>()
    var retryTimer: (any Cancellable)?
    /// Why the last commit failed, while the outbox holds writes.
    var lastStoreFailure: StoreError?
    /// Regions refused in the step being processed because they could not be stored: their
    /// events of the same step are not announced.
    var refused: Set<RegionKey> = []
    /// While set, receivers and scanners that run stay on until a scan meets the last good fix
    /// or this instant (hub monotonic) passes (``LocationHub/learningHold``), and its timer.
    var learningHold: (until: Double, timer: (any Cancellable)?)?
  }

  /// A region's group and identifier.
  struct RegionKey: Hashable {
    var group: String
    var identifier: String
  }

  struct Candidate {
    var source: any LocationSource
    /// Its runs, outages and on-time (``SourceRun``'s rules, shared with `locationd`'s pool).
    var run = SourceRun()

    /// What the location arbiter sees: a source that gives no locations (a compass) is never
    /// chosen for locations.
    var arbiterView: SourceCandidate {
      SourceCandidate(
        nominalAccuracy: source.descriptor.nominalAccuracy, power: source.descriptor.power.rawValue,
        failing: run.failing, finished: run.finished || !source.descriptor.producesLocation)
    }
  }

  /// The app this hub serves (a desktop-file-style id or the executable's path).
  package let app: String
  /// The hub's clock.
  package let clock: any HubClock
  let persistence: any HubPersistence
  let sources: Sources
  /// Whether this hub answers authorization requests itself (embedded mode), or only holds what
  /// another decides (`locationd`, whose broker asks its agents).
  private let decidesAuthorization: Bool
  /// The reduction of locations for reduced accuracy (`locationd`'s; nil in embedded mode, where
  /// the app and the hub are one process).
  private let reducer: ReducedAccuracy?
  /// The machine's Wi-Fi knowledge, when scans are turned into positions here (embedded mode;
  /// `locationd`'s pool does it once for every app).
  let wifi: WifiKnowledge?
  /// The knowledge this hub's receivers teach (its own `wifi` in embedded mode; in `locationd`, the
  /// pool's, where the scans are learned from): while it learns, a Wi-Fi scanner runs beside a
  /// receiver so that its scans meet good fixes, and a receiver about to stop stays on for one
  /// more scan (``LocationHub/learningHold``).
  let learning: WifiKnowledge?
  /// Whether the machine learns from this hub's fixes (`wifi`'s setting in embedded mode;
  /// `locationd`'s `wifi-learning`).
  var learnsWifi: Bool { learning?.learning ?? false }
  let executor: HubExecutor
  let state: Mutex<State>
  /// The run loop that reads the stream sources while it waits (the app's main run loop in
  /// embedded mode), running the engine there for their fixes: ``HubExecutor/runHere(_:)``.
  let readingRunLoop: ReadingRunLoop?

  /// Creates a hub.
  /// - Parameters:
  ///   - app: the app identifier under which authorization is stored.
  ///   - sources: where locations come from.
  ///   - persistence: the store.
  ///   - policy: how requests without a stored decision are answered; nil: the hub does not answer
  ///     them (`locationd` decides, and sets the result with ``setAuthorization(_:)``).
  ///   - clock: `nil` for a live hub (real time, serial queue); a `ManualClock` for deterministic
  ///     use, in which case every event is handled synchronously on the sending thread.
  ///   - maximumRegionCount: the most regions the app may monitor at once (`locationd`'s
  ///     per-app limit); nil: no limit.
  ///   - reducer: the reduction an app with reduced accuracy gets (`locationd`'s), which its
  ///     engine applies to what it derives from locations.
  ///   - wifi: the machine's Wi-Fi knowledge, which turns scans into positions and learns from
  ///     good fixes; nil: scans are dropped.
  ///   - learning: the knowledge this hub's fixes teach, when it is not `wifi` (`locationd`'s
  ///     pool's); nil: `wifi`.
  ///   - readingRunLoop: a run loop that reads the stream sources while it waits (a live hub's
  ///     only); nil: their own threads read.
  package init(
    app: String, sources: Sources, persistence: any HubPersistence,
    policy: AuthorizationPolicy? = .grant, clock: (any HubClock)? = nil,
    maximumRegionCount: Int? = nil, reducer: ReducedAccuracy? = nil, wifi: WifiKnowledge? = nil,
    learning: WifiKnowledge? = nil, readingRunLoop: ReadingRunLoop? = nil
  ) {
    self.readingRunLoop = clock == nil ? readingRunLoop : nil
    self.reducer = reducer
    self.wifi = wifi
    self.learning = learning ?? wifi
    self.app = app
    self.sources = sources
    self.persistence = persistence
    self.decidesAuthorization = policy != nil
    if let clock {
      self.clock = clock
      self.executor = HubExecutor(queue: nil)
    } else {
      let queue = DispatchQueue(label: "corelocation.hub")
      self.clock = LiveClock(queue: queue)
      self.executor = HubExecutor(queue: queue)
    }
    var authorization =
      persistence.authorization(app: app)
      ?? AuthorizationSnapshot(status: AuthorizationStatus.notDetermined)
    authorization.servicesEnabled = persistence.servicesEnabled()
    var engine = LocationEngine(
      allowed: authorization.allowsLocation,
      cachedLocation: Self.cachedLocation(persistence.lastKnownLocation(), from: sources))
    engine.maximumRegionCount = maximumRegionCount
    engine.headingsAllowed = authorization.allowsHeadings
    engine.reduction = authorization.isReduced ? reducer : nil
    engine.fullAccuracy = !authorization.isReduced
    // Regions survive restarts: restore them with their last states, so that a crossing that
    // happened while the process was not running is reported at the first decisive fix.
    for (group, regions) in persistence.regions(app: app).sorted(by: { $0.key < $1.key }) {
      engine.restoreRegions(group: group, regions.map(\.spec), regions.map(\.state))
    }
    // Visit monitoring too: it runs until the app stops it (Apple relaunches the app for it).
    if persistence.monitorsVisits(app: app) { engine.restoreVisitMonitoring() }
    state = Mutex(
      State(
        engine: engine,
        authorization: AuthorizationMachine(current: authorization, policy: policy ?? .grant),
        told: authorization))
  }

  /// The stored last location, when one of the configured sources produced it: a location kept
  /// by an earlier run that read another source (a static file's position before a replayed
  /// track) is never offered. Scripted source objects keep it (their tests decide).
  static func cachedLocation(_ stored: Fix?, from sources: Sources) -> Fix? {
    guard let stored else { return nil }
    switch sources {
    case .urls(let urls):
      return urls.contains { $0.produced(fixSource: stored.source) } ? stored : nil
    case .objects: return stored
    case .unavailable: return nil
    }
  }

  // MARK: Clients

  /// Adds a client; it is told the current authorization at once (Apple calls
  /// `locationManagerDidChangeAuthorization` after creating a manager).
  package func register(_ client: any HubClient) -> ClientID {
    let id = state.withLock { state -> ClientID in
      let id = ClientID(state.nextClient)
      state.nextClient += 1
      state.clients.append(id, client)
      return id
    }
    executor.run { [self] in
      process(.addClient(id))
      let snapshot = state.withLock { $0.authorization.current }
      client.hub(self, deliver: .authorization(snapshot))
    }
    return id
  }

  /// Removes a client; what it asked for ends.
  package func unregister(_ id: ClientID) {
    executor.run { [self] in
      process(.removeClient(id))
      state.withLock { $0.clients.remove(id) }
    }
  }

  /// Hands an event to the engine (in order, on the hub's executor).
  package func send(_ event: EngineEvent) {
    executor.run { [self] in process(event) }
  }

  // MARK: Authorization

  /// The app's authorization now.
  package var authorization: AuthorizationSnapshot { state.withLock { $0.authorization.current } }

  /// Asks for authorization (`requestWhenInUseAuthorization` / `requestAlwaysAuthorization`), by
  /// ``AuthorizationMachine``'s rule with no agent: the policy answers and the answer is stored.
  /// A hub made without a policy (in `locationd`) does nothing here.
  package func requestAuthorization(always: Bool) {
    decide(.request(always: always))
  }

  /// Temporary full accuracy in embedded mode: no one can be asked, so the request is declined
  /// with the reason (``AuthorizationMachine``'s rule) and the stored accuracy stands.
  package func requestTemporaryFullAccuracy(
    purposeKey: String, completion: @escaping @Sendable (String?) -> Void
  ) {
    executor.run { [self] in
      guard !purposeKey.isEmpty else { return completion("the purpose key is empty") }
      var machine = state.withLock { $0.authorization }
      switch machine.requestTemporaryFullAccuracy(agentAvailable: false) {
      case .declined(let reason):
        completion(
          reason == AuthorizationMachine.noOneToAsk
            ? reason + " (embedded mode has no agent; locationd asks through `locationctl agent`)"
            : reason)
      case .ask, .waiting:
        completion(AuthorizationMachine.noOneToAsk)
      }
    }
  }

  /// Sets the app's authorization (tests, `locationctl`, `locationd`'s broker): stored, and every
  /// client is told.
  package func setAuthorization(_ snapshot: AuthorizationSnapshot) {
    executor.run { [self] in
      let previous = state.withLock { state -> AuthorizationSnapshot in
        defer { _ = state.authorization.replace(snapshot) }
        return state.authorization.current
      }
      // Only a question opened or closed (or a temporary accuracy the store does not keep):
      // nothing to store.
      if previous.persisted != snapshot.persisted { submit(.authorization(snapshot)) }
      tell(snapshot)
    }
  }

  /// Runs a request through the authorization machine (on the executor, before the request's own
  /// event) and applies its decision.
  private func decide(_ trigger: AuthorizationMachine.Trigger) {
    guard decidesAuthorization else { return }
    executor.run { [self] in
      let action = state.withLock { $0.authorization.trigger(trigger, agentAvailable: false) }
      switch action {
      case .apply(let next):
        submit(.authorization(next))
        tell(next)
      case .unchanged, .hold, .ask, .forget:
        // With no agent the machine neither holds, asks nor forgets.
        break
      }
    }
  }

  /// Tells the engine and every client the authorization now in force, when it changed.
  private func tell(_ next: AuthorizationSnapshot) {
    let (changed, clients) = state.withLock {
      state -> (Bool, [(id: ClientID, client: any HubClient)]) in
      let changed = state.told != next
      state.told = next
      return (changed, state.clients.all)
    }
    guard changed else { return }
    process(
      .authorization(
        allowed: next.allowsLocation, headings: next.allowsHeadings,
        reduction: next.isReduced ? reducer : nil, fullAccuracy: !next.isReduced))
    for (_, client) in clients { client.hub(self, deliver: .authorization(next)) }
  }

  /// Starts location updates for a client. A `notDetermined` app asks for when-in-use authorization
  /// first, as starting a service does on Apple platforms.
  package func startUpdates(_ id: ClientID, _ request: UpdateRequest) {
    decide(.startUpdates)
    send(.startUpdates(id, request))
  }

  /// Deferred updates for a client (`allowDeferredLocationUpdates(untilTraveled:timeout:)`):
  /// timeouts are taken on the hub's monotonic clock.
  package func allowDeferred(_ id: ClientID, distance: Double, timeout: Double) {
    send(.allowDeferred(id, distance: distance, timeout: timeout))
  }

  /// Starts significant-change monitoring for a client. A `notDetermined` app asks for always
  /// authorization first, as on Apple platforms.
  package func startSignificantChanges(_ id: ClientID) {
    decide(.startSignificantChanges)
    send(.startSignificantChanges(id))
  }

  /// Starts visit monitoring for the app (`startMonitoringVisits()` on any manager). A
  /// `notDetermined` app asks for always authorization first, as for significant change;
  /// `requester` hears `denied` when the app may not have locations.
  package func startVisits(requester: ClientID?) {
    decide(.startSignificantChanges)
    send(.startVisits(requester: requester))
  }

  /// Whether the app monitors visits (on a manual-clock hub, after every earlier call).
  package var monitorsVisits: Bool { state.withLock { $0.engine.monitorsVisits } }

  /// Whether significant-change monitoring can run: some location source is configured or was
  /// discovered (any source serves: a receiver is duty-cycled).
  package var significantChangeAvailable: Bool {
    if case .unavailable = sources { return false }
    return true
  }

  /// Starts ranging the beacons of a constraint for a client (`startRangingBeacons(satisfying:)`).
  /// A `notDetermined` app asks for when-in-use authorization first, as starting updates does.
  package func startRanging(_ id: ClientID, _ constraint: BeaconConstraint) {
    decide(.startUpdates)
    send(.startRanging(id, constraint))
  }

  /// Asks for one location for a client (`requestLocation`).
  package func requestLocation(_ id: ClientID, _ request: UpdateRequest) {
    decide(.requestLocation)
    send(.requestLocation(id, request))
  }

  // MARK: Engine loop

  /// Runs one step of the engine and applies its effects, in order.
  /// - Parameter onAppThread: the step runs on a caller's thread (``HubExecutor/runHere(_:)``: an
  ///   app's reading run loop, or a source's thread such as `locationd`'s pool fan-out): it
  ///   delivers and arms timers there, and hands its first other effect and everything after it
  ///   to the hub's queue, in order, so that the caller never waits for the store (a save of the
  ///   last known location, a region event's commit) or for the sources.
  func process(_ event: EngineEvent, onAppThread: Bool = false) {
    let now = clock.now
    let (effects, clients) = state.withLock { ($0.engine.handle(event, at: now), $0.clients) }
    apply(effects[...], clients: clients, onAppThread: onAppThread)
  }

  private func apply(
    _ effects: ArraySlice<EngineEffect>, clients: HubClientList, onAppThread: Bool
  ) {
    var applied = false
    var cursor = 0
    for index in effects.indices {
      let effect = effects[index]
      // Locations (hundreds per fix in a daemon) go to the clients as they were when the engine
      // ran, looked up without the lock: a client is removed on this executor, after this step,
      // and a new one has no effect before its `addClient` step, so the answer is the same.
      if case .deliverLocations(let id, let fixes) = effect {
        if LatencyTrace.isOn, let last = fixes.last {
          LatencyTrace.mark(.delivery, fixTime: last.time)
        }
        clients.find(id, from: &cursor)?.hub(self, deliver: .locations(fixes))
      } else if onAppThread && !Self.runsOnAppThread(effect) {
        let rest = effects[index...]
        executor.run { [self] in apply(rest, clients: clients, onAppThread: false) }
        return
      } else {
        apply(effect)
        applied = true
      }
    }
    // Only `apply` refuses regions: a step that only delivered locations takes no second lock.
    // A learning hold ends with the monitoring it serves (stopped, authorization withdrawn).
    guard applied else { return }
    let holdEnds = state.withLock { state in
      state.refused.removeAll()
      return state.learningHold != nil && !state.engine.monitorsSignificantChanges
    }
    if holdEnds { endLearningHold() }
  }

  /// Whether an effect is light enough for an app's thread (no store, no sources, no lock held
  /// for long): deliveries and timers.
  private static func runsOnAppThread(_ effect: EngineEffect) -> Bool {
    switch effect {
    case .deliverLocations, .deliverError, .armTimer, .cancelTimer:
      return true
    case .demandSources, .saveLastKnownLocation, .regionAdded, .regionRejected, .regionRemoved,
      .regionEvents, .regionStateReply, .deliverHeading, .headingInterference, .demandHeading,
      .deferredFinished, .pauseUpdates, .resumeUpdates, .visit, .visitMonitoring, .deliverBeacons,
      .rangingFailed, .demandBeacons:
      return false
    }
  }

  func apply(_ effect: EngineEffect) {
    switch effect {
    case .deliverLocations(let id, let fixes):
      client(id)?.hub(self, deliver: .locations(fixes))
    case .deliverError(let id, let error):
      // A source's problem explains an unknown location, and a denial only when a source
      // refused the app (GeoClue); the app's own authorization needs no source's words.
      let message = state.withLock { state in
        error != .denied || state.lastFailureWasDenial ? state.problem : nil
      }
      client(id)?.hub(self, deliver: .error(error, message: message))
    case .demandSources(let accuracy):
      setDemand(accuracy)
    case .armTimer(let timer, let deadline):
      let token = clock.schedule(at: deadline) { [self] in send(.timerFired(timer)) }
      let previous = state.withLock { $0.timers.updateValue(token, forKey: timer) }
      previous?.cancel()
    case .cancelTimer(let timer):
      state.withLock { $0.timers.removeValue(forKey: timer) }?.cancel()
    case .saveLastKnownLocation(let fix):
      // Not held: the next location replaces it, and the store's notice tells the user.
      try? persistence.saveLastKnownLocation(fix)
    case .regionAdded(let group, let spec, let regionState, let requester):
      if let refusal = storeRegion(spec, state: regionState, group: group) {
        refuse(group: group, identifier: spec.identifier, refusal, requester: requester)
      } else if let requester {
        client(requester)?.hub(self, deliver: .regionStarted(group: group, spec))
      }
    case .regionRejected(let group, let identifier, let failure, let requester):
      if let requester {
        client(requester)?.hub(
          self, deliver: .regionFailed(group: group, identifier: identifier, failure))
      }
    case .regionRemoved(let group, let identifier):
      submit(.regionRemoved(group: group, identifier: identifier))
    case .regionEvents(let group, let events):
      // Committed before anyone is told (`docs/architecture.md`, "Store"): announced when the
      // outbox releases them (README, "When the store fails").
      let refused = state.withLock { $0.refused }
      let kept = events.filter {
        !refused.contains(RegionKey(group: group, identifier: $0.identifier))
      }
      if !kept.isEmpty { submit(.regionEvents(group: group, kept, time: clock.now.wall)) }
    case .regionStateReply(let id, let group, let event):
      client(id)?.hub(self, deliver: .regionState(group: group, event))
    case .deliverHeading(let id, let heading):
      client(id)?.hub(self, deliver: .heading(heading))
    case .headingInterference(let id, let interference):
      client(id)?.hub(self, deliver: .headingInterference(interference))
    case .deferredFinished(let id, let failure):
      client(id)?.hub(self, deliver: .deferredFinished(failure?.rawValue))
    case .pauseUpdates(let id):
      HubLog.write(.info, "\(id)", "updates paused: stationary")
      client(id)?.hub(self, deliver: .paused)
    case .resumeUpdates(let id):
      HubLog.write(.info, "\(id)", "updates resumed: moving")
      client(id)?.hub(self, deliver: .resumed)
    case .visit(let visit):
      // Committed before anyone is told (`docs/architecture.md`, "Store"), through the outbox
      // like region events.
      submit(.visit(visit, time: clock.now.wall))
    case .visitMonitoring(let on):
      submit(.visitMonitoring(on, time: clock.now.wall))
    case .demandHeading(let wanted):
      let changed = state.withLock { state -> Bool in
        defer { state.headingDemand = wanted }
        return state.headingDemand != wanted
      }
      if changed { reconcileSources() }
    case .deliverBeacons(let id, let constraint, let beacons):
      client(id)?.hub(self, deliver: .beacons(constraint, beacons))
    case .rangingFailed(let id, let constraint, let error):
      client(id)?.hub(self, deliver: .rangingFailed(constraint, error))
    case .demandBeacons(let wanted):
      let changed = state.withLock { state -> Bool in
        defer { state.beaconDemand = wanted }
        return state.beaconDemand != wanted
      }
      if changed { reconcileSources() }
    }
  }

  // MARK: Regions

  /// Monitors a region in a group for the app, replacing any of the same identifier, starting in
  /// `initialState`; `requester` hears `regionStarted` or `regionFailed`.
  package func addRegion(
    _ spec: RegionSpec, group: String, initialState: RegionState = .unknown, requester: ClientID?
  ) {
    decide(.addRegion)
    send(.addRegion(group: group, spec, initialState: initialState, requester: requester))
  }

  /// Stops monitoring a region.
  package func removeRegion(identifier: String, group: String) {
    send(.removeRegion(group: group, identifier: identifier))
  }

  /// Asks for a region's state; `requester` hears `regionState`.
  package func requestRegionState(identifier: String, group: String, requester: ClientID) {
    send(.requestRegionState(requester, group: group, identifier: identifier))
  }

  /// The regions of a group now (including requests still queued on a live hub's executor is not
  /// guaranteed; on a manual-clock hub every earlier call has been handled).
  package func regions(group: String) -> [(spec: RegionSpec, state: RegionState)] {
    state.withLock { state in
      state.engine.regionSpecs(group: group).map {
        ($0, state.engine.regionState(group: group, identifier: $0.identifier) ?? .unknown)
      }
    }
  }

  /// One region of a group, if monitored.
  /// The regions the app monitors now, every group together.
  package var regionCount: Int { state.withLock { $0.engine.regionCount } }

  /// The newest fix the engine has taken, as its source gave it (not reduced).
  package var latestFix: Fix? { state.withLock { $0.engine.latestFix } }

  package func region(identifier: String, group: String) -> (spec: RegionSpec, state: RegionState)?
  {
    state.withLock { state in
      state.engine.regionSpec(group: group, identifier: identifier).map {
        ($0, state.engine.regionState(group: group, identifier: identifier) ?? .unknown)
      }
    }
  }

  /// The largest radius a region may have, in metres.
  package var maximumRegionRadius: Double { state.withLock { $0.engine.maximumRegionRadius } }

  func client(_ id: ClientID) -> (any HubClient)? {
    state.withLock { $0.clients.client(id) }
  }
}
