import Foundation
import Geodesy
import LocationEngine
import LocationModel
import LocationProtocol
import LocationServices
import LocationSources
import LocationStore
import Synchronization

/// One app inside the daemon: its `LocationHub`, its connections, and the events kept for it while
/// it is away (`docs/architecture.md`, "locationd").
///
/// The host is itself a permanent client of its hub. Deliveries meant for every manager
/// (`authorization`, `regionEvents`, `visit`) reach the app through the host, once per connection
/// (the per-manager clients ignore them). The region events the app would be told
/// (`shouldNotify`) are kept in the store with the states they change, in one transaction, and
/// visits likewise, until a connection acknowledges them; while no connection of the app is open, the app's launch command, if any,
/// is run (at most once a minute until the app connects).
///
/// Lock order: the server's state, then a host's, then a connection's output, then the hub's
/// state. Under these locks only the hub's reads (`regions(group:)`, `authorization`) are called,
/// which take the hub's lock alone and never wait for its executor.
final class AppHost: HubClient {
  /// The app identifier.
  let app: String
  /// The app's hub.
  let hub: LocationHub
  let store: LocationStore
  private let launchCommand: String?
  private let reducer: ReducedAccuracy
  /// The daemon's publisher, if any (`[publish]`), for the regions and events of an app that
  /// opted in (`publish-regions`).
  let publisher: @Sendable () -> DevicePublisher?

  private struct State {
    var connections: [Int: DaemonConnection] = [:]
    /// Every group the app has had regions in (the hub has no list of groups).
    var groups: Set<String>
    /// Monotonic time of the last launch, until a connection arrives.
    var lastLaunch: Double?
    var permanentID: ClientID?
    /// Taken out of service: no connection may attach any more.
    var retired = false
    /// The hub's answer to the host's own registration (not a change) has been seen.
    var registered = false
    /// For each evaluation committed by `commitRegionEvents`, the sequence under which its
    /// events were kept (nil: nothing to tell), in order; the hub's delivery of the same events,
    /// which follows each commit, takes the first.
    var kept: [Int64?] = []
    /// For each visit committed by `commitVisit`, the sequence it was kept under, in order; the
    /// hub's delivery of the same visit, which follows each commit, takes the first.
    var keptVisits: [Int64] = []
    /// The connections whose copy of the app's regions is current (`regionsChanged`).
    var current: Set<Int> = []
  }

  private let state: Mutex<State>
  /// The last fixes encoded for the app's managers (`encodedLocations`).
  private let lastEncoded = Mutex<EncodedLocations?>(nil)

  /// The store's kind for a kept `regionEvents` message.
  static let pendingKind = "regionEvents"
  /// The store's kind for a kept `visit` message.
  static let visitKind = "visit"
  /// The kind a kept message that can no longer be read is set aside under: kept for a person to
  /// look at, never acknowledged unseen.
  static let unreadableKind = "unreadable"
  /// Events kept for the app at most (`max-pending-events`); the oldest go first, logged.
  private let maximumPendingEvents: Int
  /// Seconds between two launches of an app that does not connect.
  static let launchInterval: Double = 60

  init(
    app: String, sources: LocationHub.Sources, persistence: any HubPersistence,
    store: LocationStore, clock: (any HubClock)?, launch: String?,
    reducer: ReducedAccuracy, maximumRegions: Int? = nil, maximumPendingEvents: Int = .max,
    wifiLearning: WifiKnowledge? = nil,
    publisher: @escaping @Sendable () -> DevicePublisher? = {
      nil
    }
  ) {
    self.maximumPendingEvents = maximumPendingEvents
    self.publisher = publisher
    self.app = app
    self.store = store
    self.launchCommand = launch
    self.reducer = reducer
    let keeping = KeepingPersistence(base: persistence)
    hub = LocationHub(
      // The server's authorization broker decides; the hub holds what it decided.
      app: app, sources: sources, persistence: keeping, policy: nil, clock: clock,
      maximumRegionCount: maximumRegions, reducer: reducer, learning: wifiLearning)
    state = Mutex(State(groups: Set(persistence.regions(app: app).keys)))
    keeping.host.withLock { $0.value = self }
  }

  /// Registers the host with its hub; restored regions start being watched.
  func start() {
    let id = hub.register(self)
    state.withLock { $0.permanentID = id }
  }

  /// Unregisters the host from its hub (the daemon stops, or the app has gone with no regions).
  func retire() {
    if let id = state.withLock({ $0.permanentID.take() }) { hub.unregister(id) }
  }

  // MARK: Deliveries for every manager

  func hub(_ hub: LocationHub, deliver delivery: HubDelivery) {
    switch delivery {
    case .authorization(let snapshot):
      // The first one answers the host's registration: nothing changed, connections know it.
      let connections = state.withLock { state -> [DaemonConnection] in
        guard state.registered else {
          state.registered = true
          return []
        }
        return state.connections.sorted { $0.key < $1.key }.map(\.value)
      }
      for connection in connections { connection.send(.authorization(snapshot)) }
    case .regionEvents(let group, let events):
      regionEvents(group: group, events)
    case .visit(let visit):
      visitEvent(visit)
    case .locations, .error, .regionStarted, .regionFailed, .regionState, .heading,
      .headingInterference, .deferredFinished, .paused, .resumed, .beacons, .rangingFailed:
      // The host asks for nothing of its own.
      break
    }
  }

  /// Commits one evaluation's region states together with the events the app would be told
  /// (`shouldNotify`), kept as one pending batch, in one transaction: a crash (even `kill -9`)
  /// leaves either both or neither. The batch stays pending until a connection of the app
  /// acknowledges it, whether the app is connected now (the events go out at once with their
  /// sequence) or away (the next connection receives them): a connection that closes before
  /// reading them loses nothing, and a client drops a sequence it has already seen. Called on the
  /// hub's executor; the hub delivers the same events (`regionEvents`) only when this returns.
  /// - Throws: `StoreError` when nothing was committed (a full disk): the hub holds the events
  ///   and calls again later (README, "When the store fails"); nothing is kept or announced
  ///   meanwhile.
  func commitRegionEvents(
    _ events: [RegionEvent], group: String, time: Double, base: any HubPersistence
  ) throws(StoreError) {
    try state.withLock { (state) throws(StoreError) in
      let told = events.filter(\.shouldNotify)
      guard !told.isEmpty else {
        try base.commitRegionEvents(events, group: group, app: app, time: time)
        state.kept.append(nil)
        return
      }
      let line = DaemonProtocol.encode(
        .regionEvents(
          group: group, events: told.map { DaemonRegionEvent($0, date: time) }, sequence: nil))
      let publisher = regionPublisher
      let transitions =
        publisher?.transitionMessages(
          told, group: group, app: app, fix: hub.latestFix, time: time) ?? []
      state.kept.append(
        try keep(line: line, kind: Self.pendingKind, time: time, operation: "commitRegionEvents") {
          try base.commitRegionEvents(events, group: group, app: app, time: time)
          // The app's transitions leave the machine with the events, or neither does.
          if let publisher, !transitions.isEmpty { try publisher.outbox.submit(transitions) }
        })
    }
  }

  /// Commits what `commit` writes and the app's pending event of `kind` (the line without its
  /// newline) in one transaction, and drops the app's oldest events beyond `max-pending-events`
  /// (logged). Called under the host's lock.
  /// - Returns: The event's sequence.
  /// - Throws: `StoreError` when nothing was committed.
  private func keep(
    line: [UInt8], kind: String, time: Double, operation: String,
    commit: () throws -> Void
  ) throws(StoreError) -> Int64 {
    let payload = String(decoding: line.dropLast(), as: UTF8.self)
    let maximum = maximumPendingEvents
    let app = app
    do {
      let (sequence, dropped) = try store.transaction { () throws -> (Int64, Int) in
        try commit()
        let sequence = try store.appendEvent(
          PendingEvent(app: app, kind: kind, payload: payload, time: time))
        return (sequence, try store.trimEvents(app: app, keeping: maximum))
      }
      if dropped > 0 {
        DaemonLog.write(
          "app \(app): \(dropped) old events dropped: at most \(maximum) are kept "
            + "(max-pending-events)")
      }
      return sequence
    } catch let error as StoreError {
      throw error
    } catch {
      throw StoreError(code: .other, message: "\(error)", operation: operation)
    }
  }

  /// Commits a visit as a pending event of the app, kept until a connection acknowledges it (as
  /// `commitRegionEvents` keeps region events): sent at once to the connections open now, or to
  /// the next one. Called on the hub's executor; the hub delivers the visit only when this returns.
  /// - Throws: `StoreError` when nothing was committed: the hub holds the visit and calls again.
  func commitVisit(_ visit: Visit, time: Double, base: any HubPersistence) throws(StoreError) {
    try state.withLock { (state) throws(StoreError) in
      let line = DaemonProtocol.encode(.visit(visit, sequence: nil))
      state.keptVisits.append(
        try keep(line: line, kind: Self.visitKind, time: time, operation: "commitVisit") {
          try base.commitVisit(visit, app: app, time: time)
        })
    }
  }

  /// A committed visit: to every open connection with its sequence, or kept for the next one
  /// (the app's launch command, if any, runs).
  private func visitEvent(_ visit: Visit) {
    let now = hub.clock.now.monotonic
    let launch = state.withLock { state -> Bool in
      let sequence = state.keptVisits.isEmpty ? nil : state.keptVisits.removeFirst()
      return sendOrLaunch(&state, sequence: sequence, now: now) {
        DaemonProtocol.encode(.visit(visit, sequence: sequence))
      }
    }
    if launch, let launchCommand { AppLauncher.launch(launchCommand, app: app) }
  }

  /// An event with its `sequence` (nil: not kept) goes to every open connection; with none open,
  /// a kept event waits in the store for the next one, and the result says whether to start the
  /// app (it has a launch command and was not started in the last `launchInterval`).
  private func sendOrLaunch(
    _ state: inout State, sequence: Int64?, now: Double, encode: () -> [UInt8]
  ) -> Bool {
    guard state.connections.isEmpty else {
      let bytes = encode()
      for (_, connection) in state.connections.sorted(by: { $0.key < $1.key }) {
        if let sequence { connection.noteSequence(sequence) }
        connection.enqueue(bytes, droppable: false)
      }
      return false
    }
    guard sequence != nil, launchCommand != nil else { return false }
    if let last = state.lastLaunch, now - last < Self.launchInterval { return false }
    state.lastLaunch = now
    return true
  }

  private func regionEvents(group: String, _ events: [RegionEvent]) {
    let date = hub.clock.now.wall
    let now = hub.clock.now.monotonic
    // Each event names its region, for a process whose copy of the regions is out of date.
    let described = events.map {
      DaemonRegionEvent(
        $0, date: date, region: hub.region(identifier: $0.identifier, group: group)?.spec)
    }
    let launch = state.withLock { state -> Bool in
      let sequence = state.kept.isEmpty ? nil : state.kept.removeFirst()
      return sendOrLaunch(&state, sequence: sequence, now: now) {
        DaemonProtocol.encode(
          .regionEvents(group: group, events: described, sequence: sequence))
      }
    }
    if launch, let launchCommand { AppLauncher.launch(launchCommand, app: app) }
  }

  // MARK: Connections

  /// Adds a connection of the app: sends the welcome, then every pending event in sequence order.
  /// Both are queued under the host's lock, so that no live event can come between them.
  /// - Parameters:
  ///   - withholding: The app may not have precise locations: its regions go without their
  ///     states and its pending events stay kept for a later connection.
  /// - Returns: The highest sequence sent (0 when none), or nil when the host was retired (the
  ///   caller makes a new one).
  func attach(
    _ connection: DaemonConnection, withholding: Bool = false,
    welcome: (AuthorizationSnapshot, [DaemonRegionEntry]) ->
      DaemonMessage
  ) -> Int64? {
    state.withLock { state -> Int64? in
      guard !state.retired else { return nil }
      state.connections[connection.id] = connection
      state.current.insert(connection.id)
      state.lastLaunch = nil
      var entries = entries(groups: state.groups)
      if withholding {
        for index in entries.indices { entries[index].state = .unknown }
      }
      connection.send(welcome(hub.authorization, entries))
      guard !withholding else { return 0 }
      let pending: [PendingEvent]
      do {
        pending = try store.pendingEvents(app: app)
      } catch {
        DaemonLog.write("app \(app): pending events unreadable: \(error)")
        return 0
      }
      var highest: Int64 = 0
      for event in pending {
        highest = max(highest, event.sequence)
        guard event.kind == Self.pendingKind || event.kind == Self.visitKind else { continue }
        // The daemon's own record, however long: not a peer's line, so no peer line limit.
        let decoded = try? DaemonProtocol.decode(line: Array(event.payload.utf8), limit: .max)
        if event.kind == Self.visitKind, case .visit(let visit, _) = decoded {
          connection.send(.visit(visit, sequence: event.sequence))
          continue
        }
        guard event.kind == Self.pendingKind,
          case .regionEvents(let group, let events, _) = decoded
        else {
          DaemonLog.write(
            "app \(app): pending event \(event.sequence) is unreadable; kept aside (kind "
              + "\(Self.unreadableKind)), not delivered")
          try? store.setEventKind(app: app, sequence: event.sequence, kind: Self.unreadableKind)
          continue
        }
        connection.send(.regionEvents(group: group, events: events, sequence: event.sequence))
      }
      return highest
    }
  }

  /// Removes a connection.
  /// - Returns: Whether no connection of the app remains.
  @discardableResult
  func detach(_ connection: DaemonConnection) -> Bool {
    state.withLock { state -> Bool in
      state.connections[connection.id] = nil
      state.current.remove(connection.id)
      return state.connections.isEmpty
    }
  }

  /// Marks the host retired when no connection is open, no region is monitored and visits are
  /// not.
  /// - Returns: Whether it was retired now.
  func markRetiredIfIdle() -> Bool {
    state.withLock { state -> Bool in
      guard !state.retired, state.connections.isEmpty, !hub.monitorsVisits else { return false }
      let regions = state.groups.reduce(0) { $0 + hub.regions(group: $1).count }
      guard regions == 0 else { return false }
      state.retired = true
      return true
    }
  }

  /// The app's regions changed through one connection (on the hub's executor, once the change is
  /// in the hub): every other connection whose copy of the regions was current is told
  /// `regionsChanged`, once, and is no longer current until it asks again (`refreshRegions`).
  /// Each change costs a look at the connections still current, not a line to every connection:
  /// 500 processes of one app adding 100 regions each would otherwise send 25 million lines.
  /// - Parameter connection: The connection that made the change.
  func regionsChanged(by connection: Int) {
    state.withLock { state in
      guard state.current.count > (state.current.contains(connection) ? 1 : 0) else { return }
      let bytes = DaemonProtocol.encode(.regionsChanged)
      for id in state.current.sorted() where id != connection {
        state.connections[id]?.enqueue(bytes, droppable: false)
      }
      state.current = state.current.contains(connection) ? [connection] : []
    }
  }

  /// Sends a connection the app's regions (`regionList`) once every change made before has
  /// reached the hub, and counts its copy as current again.
  /// - Parameter connection: The connection that asked.
  func refreshRegions(_ connection: DaemonConnection) {
    afterPendingWork { [self] in
      state.withLock { state in
        guard state.connections[connection.id] != nil else { return }
        state.current.insert(connection.id)
        connection.send(.regionList(entries(groups: state.groups)))
      }
    }
  }

  /// How many connections of the app are open.
  var connectionCount: Int { state.withLock { $0.connections.count } }

  /// Deletes pending events up to and including `sequence` (the app's `ack`).
  func acknowledge(through sequence: Int64) {
    do {
      try store.deleteEvents(app: app, throughSequence: sequence, kind: Self.pendingKind)
      try store.deleteEvents(app: app, throughSequence: sequence, kind: Self.visitKind)
    } catch {
      DaemonLog.write("app \(app): acknowledged events could not be deleted: \(error)")
    }
  }

  // MARK: Regions

  /// Remembers a group the app uses.
  func noteGroup(_ group: String) {
    _ = state.withLock { $0.groups.insert(group) }
  }

  /// The app's regions, every group, with their states.
  var regionEntries: [DaemonRegionEntry] { entries(groups: state.withLock { $0.groups }) }

  /// The number of regions the app monitors.
  var regionCount: Int {
    state.withLock { $0.groups }.reduce(0) { $0 + hub.regions(group: $1).count }
  }

  private func entries(groups: Set<String>) -> [DaemonRegionEntry] {
    groups.sorted().flatMap { group in
      hub.regions(group: group).map {
        DaemonRegionEntry(group: group, region: $0.spec, state: $0.state)
      }
    }
  }

  // MARK: Helpers

  /// Locations as this app may see them: reduced when its accuracy authorization is reduced.
  func visible(_ fixes: [Fix]) -> [Fix] {
    hub.authorization.isReduced ? fixes.map(reducer.apply) : fixes
  }

  /// The `locations` line for manager `client` of a connection, with the fixes as the app may
  /// see them (`visible`): the fixes are encoded once per delivery to all the app's managers,
  /// which receive the same fixes one after another on the hub's executor, and the line once
  /// per manager number (most connections have one manager, number 1: a daemon serving 500
  /// such connections builds one line per fix and sends the same bytes 500 times).
  func encodedLocations(client: Int, fixes: [Fix]) -> [UInt8] {
    let reduced = hub.authorization.isReduced
    return lastEncoded.withLock { cache in
      guard var encoded = cache.take(), encoded.fixes == fixes, encoded.reduced == reduced else {
        var encoded = encoding(fixes, reduced: reduced)
        defer { cache = encoded }
        return encoded.line(client: client)
      }
      defer { cache = encoded }
      return encoded.line(client: client)
    }
  }

  /// The `locations` line `encodedLocations` would build for `fixes`, built without its cache
  /// (the rehearsal of a delivery, `ManagerProxy.rehearse`).
  func rehearseEncoding(client: Int, fixes: [Fix]) -> [UInt8] {
    var encoded = encoding(fixes, reduced: hub.authorization.isReduced)
    return encoded.line(client: client)
  }

  /// The fixes encoded as the app may see them (`reduced`: with its reduced accuracy).
  private func encoding(_ fixes: [Fix], reduced: Bool) -> EncodedLocations {
    let json = DaemonProtocol.encodeFixes(reduced ? fixes.map(reducer.apply) : fixes)
    return EncodedLocations(fixes: fixes, reduced: reduced, json: json)
  }

  /// Runs `body` on the hub's executor after every call made to the hub before this one (a
  /// one-shot client whose first delivery is the barrier).
  func afterPendingWork(_ body: @escaping @Sendable () -> Void) {
    let barrier = BarrierClient(body)
    let id = hub.register(barrier)
    barrier.registered(id, hub: hub)
  }
}

/// A client that runs one closure at its first delivery, then leaves.
private final class BarrierClient: HubClient {
  private struct State {
    var body: (@Sendable () -> Void)?
    var id: ClientID?
    var fired = false
  }

  private let state: Mutex<State>

  init(_ body: @escaping @Sendable () -> Void) { state = Mutex(State(body: body)) }

  func hub(_ hub: LocationHub, deliver delivery: HubDelivery) {
    let (body, id) = state.withLock { state -> ((@Sendable () -> Void)?, ClientID?) in
      guard !state.fired else { return (nil, nil) }
      state.fired = true
      defer { state.body = nil }
      return (state.body, state.id)
    }
    body?()
    if let id { hub.unregister(id) }
  }

  func registered(_ id: ClientID, hub: LocationHub) {
    let fired = state.withLock { state -> Bool in
      state.id = id
      return state.fired
    }
    if fired { hub.unregister(id) }
  }
}

extension ManagerProxy {
  /// What a denied app is told: which switch or decision stops it, and the command that changes
  /// it (issue 15: "location access denied" alone left the user guessing).
  static func deniedMessage(app: String, servicesEnabled: Bool) -> String {
    guard servicesEnabled else {
      return "location services are off in locationd; `locationctl services on` turns them on"
    }
    let safe = app.allSatisfy { $0.isLetter || $0.isNumber || "/._-+:@".contains($0) }
    let quoted = safe ? app : "'" + app.replacingOccurrences(of: "'", with: "'\\''") + "'"
    return "locationd has not authorized \(app): `locationctl authorize \(quoted) when-in-use`"
      + " grants it, or a running `locationctl agent` answers its request"
  }
}

/// One manager of a connection, as its hub sees it: deliveries for this manager are sent with its
/// number; those for every manager are left to the `AppHost`.
final class ManagerProxy: HubClient {
  let connection: DaemonConnection
  let client: Int
  let host: AppHost

  init(connection: DaemonConnection, client: Int, host: AppHost) {
    self.connection = connection
    self.client = client
    self.host = host
  }

  /// Encodes the locations' line, as a delivery would, and drops it (`HubClient.rehearse`):
  /// nothing is cached or sent.
  func rehearse(_ fixes: [Fix]) {
    withExtendedLifetime(host.rehearseEncoding(client: client, fixes: fixes)) {}
  }

  func hub(_ hub: LocationHub, deliver delivery: HubDelivery) {
    switch delivery {
    case .locations(let fixes):
      let line = host.encodedLocations(client: client, fixes: fixes)
      if LatencyTrace.isOn, let last = fixes.last {
        LatencyTrace.mark(.encoded, fixTime: last.time)
      }
      connection.enqueue(line, droppable: true)
      if LatencyTrace.isOn, let last = fixes.last { LatencyTrace.mark(.sent, fixTime: last.time) }
    case .error(let error, let message):
      let code: DaemonErrorCode
      let fallback: String
      switch error {
      case .locationUnknown:
        code = .locationUnknown
        fallback = "no location is available yet"
      case .denied:
        code = .denied
        fallback = Self.deniedMessage(
          app: host.app, servicesEnabled: hub.authorization.servicesEnabled)
      case .sourcesEnded:
        code = .sourcesEnded
        fallback = "every location source has ended"
      case .rangingUnavailable:
        // Ranging failures travel as `rangingFailed`, not as errors.
        return
      }
      connection.send(
        .error(DaemonErrorMessage(code: code, message: message ?? fallback, client: client)))
    case .authorization, .regionEvents, .visit:
      // For every manager: the host sends them.
      break
    case .regionStarted(let group, let spec):
      connection.send(.regionStarted(client: client, group: group, region: spec))
      host.regionsChanged(by: connection.id)
    case .regionFailed(let group, let identifier, let failure):
      connection.send(
        .regionFailed(client: client, group: group, identifier: identifier, failure: failure))
    case .regionState(let group, let event):
      connection.send(
        .regionState(
          client: client, group: group,
          event: DaemonRegionEvent(
            event, date: hub.clock.now.wall,
            region: hub.region(identifier: event.identifier, group: group)?.spec)))
    case .heading(let heading):
      connection.send(.heading(client: client, heading))
    case .headingInterference(let interference):
      connection.send(.headingInterference(client: client, interference))
    case .deferredFinished(let code):
      connection.send(.deferredFinished(client: client, code: code))
    case .paused:
      connection.send(.paused(client: client))
    case .resumed:
      connection.send(.resumed(client: client))
    case .beacons(let constraint, let beacons):
      connection.send(.beacons(client: client, constraint: constraint, beacons: beacons))
    case .rangingFailed(let constraint, let error):
      connection.send(
        .rangingFailed(
          client: client, constraint: constraint,
          reason: error == .denied ? .denied : .unavailable))
    }
  }
}
