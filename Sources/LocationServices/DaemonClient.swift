import Dispatch
import Foundation
import Geodesy
import LocationEngine
import LocationModel
import LocationProtocol
import LocationSources
import Synchronization

/// A `LocationService` that speaks to `locationd` over its Unix socket (`docs/protocol.md`, protocol v1):
/// one connection per process, shared by every manager, monitor and live-updates stream.
///
/// Rules (ours; Apple's `locationd` is private):
/// - The connection says `hello` as an `app`; the daemon's `welcome` fills a local mirror of the
///   app's authorization, regions (every group, with their states), largest region radius, heading
///   and significant-change availability, which deliveries keep current, so the synchronous
///   getters answer at once.
/// - A manager's `ClientID` is the protocol's `client` number (1, 2, ... in registration order,
///   never reused in a process).
/// - Requests are written, and deliveries handed to clients, in order, on one serial queue; the
///   socket is read on a thread of its own.
/// - Region events the daemon kept while the app was away carry a `sequence`: each is handed to the
///   clients once a client of its group (`HubClient.regionGroups`) is registered, then acknowledged
///   (`ack` names the highest sequence below which everything was handed over). A sequence seen
///   before (the daemon restarted before it stored the acknowledgement) is dropped: exactly once.
///   While an event is held, the mirror shows its region's state before the event (the welcome
///   already has the state after it), so that a `CLMonitor` opened later sees the change. Visits
///   are kept and sequenced by the same rule, and wait for a client of the `manager` group (a
///   `CLLocationManager`).
/// - When the daemon goes away, every client with updates, a location request or headings running
///   receives `locationUnknown` (with a message saying the daemon is being reconnected, or, in
///   `CORELOCATION_DAEMON=required` mode, that it is required and not running); so does a service
///   started while disconnected. A pending `requestLocation` ends with that error, deferred updates
///   finish with `deferredFailed`. The client reconnects with backoff (50 ms, doubling to 5 s) and
///   sends again what is running: every client's registration, updates, significant-change
///   monitoring and heading. Region, visit and authorization requests made while disconnected are
///   sent, in order, after the reconnection (visit monitoring is the app's, kept by the daemon). It never falls back to embedded mode once chosen.
/// - `setAuthorization` is not available to an app: the daemon decides (`locationctl authorize`);
///   the call is ignored.
package final class DaemonClient: LocationService {
  /// What the client knows of one registered client.
  struct Record {
    var client: any HubClient
    var groups: Set<String>
    var updates: UpdateRequest?
    var locationRequest: UpdateRequest?
    var heading: (filter: Double, orientation: HeadingOrientation)?
    var significantChanges = false
    var deferring = false
    /// The beacon constraints it ranges (sent again after a reconnection).
    var ranging: Set<BeaconConstraint> = []
  }

  /// The mirror of the daemon's state for this app.
  struct Mirror {
    var authorization = AuthorizationSnapshot(status: AuthorizationStatus.notDetermined)
    /// Regions by group, then identifier.
    var regions: [String: [String: (spec: RegionSpec, state: RegionState)]] = [:]
    var maximumRegionRadius = RegionSpec.defaultMaximumRadius
    var headingAvailable = false
    var significantChangeAvailable = false
    var beaconsAvailable = false
  }

  /// A sequenced region event, or visit, not yet handed to any client.
  struct HeldEvents {
    /// The group whose clients take it: a visit's is `manager` (every `CLLocationManager`).
    var group: String
    /// The region events (none for a visit).
    var events: [RegionEvent]
    var sequence: Int64
    var visit: Visit? = nil
  }

  /// The group of the clients that take visits: `CLLocationManager`s.
  static let visitGroup = "manager"

  struct State {
    var clients: [Int: Record] = [:]
    var nextClient = 1
    var mirror = Mirror()
    /// The connected descriptor, if any, and the connection's generation.
    var fd: Int32?
    var generation = 0
    /// The daemon's welcome arrived on the current connection.
    var welcomed = false
    /// The app identifier the daemon gave this process.
    var app: String?
    /// Requests made while disconnected, sent after the next welcome.
    var outbox: [DaemonMessage] = []
    /// Initial states of regions asked for and not yet started.
    var initialStates: [String: RegionState] = [:]
    /// Sequenced events received, by sequence: handed over (true) or held (false).
    var sequences: [Int64: Bool] = [:]
    /// Everything up to this sequence was acknowledged.
    var acknowledged: Int64 = 0
    var held: [HeldEvents] = []
    var backoff = DaemonClient.initialBackoff
    /// Why the client is not connected, for the errors clients receive.
    var problem: String
    /// The app's `purpose`, sent after every welcome.
    var purpose: String?
    /// Why the daemon refused the current connection's hello, if it did.
    var refusal: String?
    /// The first connection attempt has an outcome (`waitForConnection`).
    var firstOutcome = false
    var closed = false
    /// Another process of the app changed its regions since the mirror's copy was made
    /// (`regionsChanged`); the next `regions(group:)` asks for them again.
    var regionsStale = false
    /// A `refreshRegions` is on its way and its `regionList` has not arrived.
    var refreshing = false
    /// Regions this process removed while a refresh was on its way: the list may still have them.
    var removedDuringRefresh: Set<String> = []
    /// Threads waiting in `regions(group:)` for the `regionList`.
    var refreshWaiters: [DispatchSemaphore] = []
    /// Temporary full accuracy requests waiting for their answer, by `id`.
    var temporaryRequests: [Int: @Sendable (String?) -> Void] = [:]
    var nextTemporaryRequest = 1
    /// The reading run loop's side of the current connection, if it reads.
    var runLoopReading: RunLoopReading?
  }

  /// Lines the reader thread handed to `queue` and `queue` has not handled yet.
  let readerBacklog = Atomic<Int>(0)
  /// Lines read by the reader thread and by the reading run loop, since the client was made.
  package let linesReadByThread = Atomic<Int>(0)
  package let linesReadByRunLoop = Atomic<Int>(0)
  /// The reading run loop's objects alive, one per connection at most (each holds two epoll
  /// instances until Core Foundation lets go of it).
  package let runLoopReadings = LiveCount()

  static let initialBackoff = 0.05
  static let maximumBackoff = 5.0

  /// The socket paths tried, in order, at every connection attempt.
  package let socketPaths: [String]
  /// Whether the daemon is required (`CORELOCATION_DAEMON=required`): errors say so.
  package let required: Bool
  /// The longest wait in `regions(group:)` for the daemon's `regionList`, in seconds.
  let refreshTimeout: Double
  /// The run loop that reads the socket while it waits (`RunLoopReading`), if any.
  let readingRunLoop: ReadingRunLoop?
  /// The service's clock (real time).
  package let clock: any HubClock
  let queue: DispatchQueue
  /// Set on `queue`, to tell when a getter runs there (where it must not wait for the queue).
  static let queueKey = DispatchSpecificKey<Bool>()
  let state: Mutex<State>
  private let firstAttempt = DispatchGroup()

  /// Creates a client and starts connecting (in the background).
  /// - Parameters:
  ///   - socketPaths: the sockets to try, in order, at each attempt.
  ///   - required: whether the daemon is required; the errors clients receive while it is
  ///     unreachable say so.
  ///   - refreshTimeout: the longest wait in `regions(group:)` for the daemon's `regionList`, in
  ///     seconds.
  ///   - readingRunLoop: the run loop that reads the socket itself while it waits (the main run
  ///     loop by default, where `CLLocationManager` delegates usually run); nil: only the reader
  ///     thread reads.
  package init(
    socketPaths: [String], required: Bool = false,
    refreshTimeout: Double = DaemonClient.defaultRefreshTimeout,
    readingRunLoop: ReadingRunLoop? = .main
  ) {
    self.socketPaths = socketPaths
    self.required = required
    self.refreshTimeout = refreshTimeout
    self.readingRunLoop = readingRunLoop
    let queue = DispatchQueue(label: "corelocation.daemon-client")
    queue.setSpecific(key: Self.queueKey, value: true)
    self.queue = queue
    self.clock = LiveClock(queue: queue)
    let problem =
      required
      ? Self.requiredMessage(paths: socketPaths, reason: "not connected yet")
      : "locationd is not connected yet"
    state = Mutex(State(problem: problem))
    firstAttempt.enter()
    queue.async { [self] in connect() }
  }

  /// Creates a client for one socket and starts connecting.
  /// - Parameters:
  ///   - socketPath: the daemon's socket.
  ///   - required: whether the daemon is required.
  ///   - refreshTimeout: the longest wait for the daemon's `regionList`, in seconds.
  ///   - readingRunLoop: the run loop that reads the socket while it waits (the main run loop by
  ///     default), or nil.
  package convenience init(
    socketPath: String, required: Bool = false,
    refreshTimeout: Double = DaemonClient.defaultRefreshTimeout,
    readingRunLoop: ReadingRunLoop? = .main
  ) {
    self.init(
      socketPaths: [socketPath], required: required, refreshTimeout: refreshTimeout,
      readingRunLoop: readingRunLoop)
  }

  /// Waits until the first connection attempt has an outcome: the daemon's welcome, or a failure.
  /// - Parameter timeout: the longest wait, in seconds.
  /// - Returns: whether the client is connected and welcomed now.
  package func waitForConnection(timeout: Double) -> Bool {
    yieldRunLoopReading()
    _ = firstAttempt.wait(timeout: .now() + timeout)
    return isConnected
  }

  /// Whether the client is connected and the daemon's welcome arrived.
  package var isConnected: Bool { state.withLock { $0.fd != nil && $0.welcomed } }

  /// The app identifier the daemon gave this process (from its executable), once welcomed.
  package var app: String? { state.withLock { $0.app } }

  /// Disconnects for good: no reconnection; clients are not told. For tests and shutdown.
  package func close() {
    let fd = state.withLock { state -> Int32? in
      state.closed = true
      return state.fd
    }
    if let fd { DaemonClientSocket.shutdown(fd) }
  }

  // MARK: LocationService

  /// Adds a client under the next `client` number; it is told the mirrored authorization at once,
  /// and the daemon hears `register` (now, or after the next welcome).
  /// - Parameter client: the consumer of the deliveries.
  /// - Returns: the client's identifier (its `client` number).
  package func register(_ client: any HubClient) -> ClientID {
    let number = state.withLock { state -> Int in
      let number = state.nextClient
      state.nextClient += 1
      return number
    }
    let groups = client.regionGroups
    queue.async { [self] in
      let (snapshot, welcomed) = state.withLock { state in
        state.clients[number] = Record(client: client, groups: groups)
        return (state.mirror.authorization, state.welcomed)
      }
      if welcomed { write(.register(client: number)) }
      client.hub(self, deliver: .authorization(snapshot))
      if welcomed { releaseHeldEvents() }
    }
    return ClientID(number)
  }

  /// Removes a client; the daemon hears `unregister` and ends what it asked for.
  /// - Parameter id: the client.
  package func unregister(_ id: ClientID) {
    queue.async { [self] in
      let (known, welcomed) = state.withLock { state in
        (state.clients.removeValue(forKey: id.rawValue) != nil, state.welcomed)
      }
      if known, welcomed { write(.unregister(client: id.rawValue)) }
    }
  }

  /// Sends a client's request as its protocol message (events an app cannot send are ignored).
  /// - Parameter event: the request.
  package func send(_ event: EngineEvent) {
    queue.async { [self] in handle(event) }
  }

  /// The app's authorization as the daemon last said.
  package var authorization: AuthorizationSnapshot { state.withLock { $0.mirror.authorization } }

  /// Asks the daemon for authorization (its agent or policy decides).
  /// - Parameter always: whether always authorization is asked for.
  package func requestAuthorization(always: Bool) {
    queue.async { [self] in request(.requestAuthorization(always: always)) }
  }

  /// Keeps the app's reason and tells the daemon (now, and after every welcome).
  package func setPurpose(_ text: String?) {
    let welcomed = state.withLock { state -> Bool in
      state.purpose = text
      return state.welcomed
    }
    if welcomed { queue.async { [self] in write(.purpose(text: text ?? "")) } }
  }

  /// Ignored: the daemon decides an app's authorization (`locationctl authorize`).
  /// - Parameter snapshot: the authorization the caller wanted.
  package func setAuthorization(_ snapshot: AuthorizationSnapshot) {
    HubLog.write(
      .info, "daemon", "setAuthorization ignored: locationd decides (locationctl authorize)")
  }

  /// Starts location updates for a client (`startUpdates`; sent again after a reconnection).
  /// - Parameters:
  ///   - id: the client.
  ///   - request: accuracy, distance filter, pausing and activity.
  package func startUpdates(_ id: ClientID, _ request: UpdateRequest) {
    send(.startUpdates(id, request))
  }

  /// Asks for one location for a client (`requestLocation`).
  /// - Parameters:
  ///   - id: the client.
  ///   - request: accuracy and distance filter.
  package func requestLocation(_ id: ClientID, _ request: UpdateRequest) {
    send(.requestLocation(id, request))
  }

  /// Starts significant-change monitoring for a client (sent again after a reconnection).
  /// - Parameter id: the client.
  package func startSignificantChanges(_ id: ClientID) {
    send(.startSignificantChanges(id))
  }

  /// Starts visit monitoring for the app.
  package func startVisits(requester: ClientID?) {
    send(.startVisits(requester: requester))
  }

  /// Starts ranging beacons for a client (sent again after a reconnection).
  package func startRanging(_ id: ClientID, _ constraint: BeaconConstraint) {
    send(.startRanging(id, constraint))
  }

  /// Whether the daemon has a source that hears beacons (from the welcome).
  package var beaconsAvailable: Bool { state.withLock { $0.mirror.beaconsAvailable } }

  /// Whether the daemon has a location source (from the welcome).
  package var significantChangeAvailable: Bool {
    state.withLock { $0.mirror.significantChangeAvailable }
  }

  /// Deferred updates for a client (`allowDeferred`); a lost connection finishes them with
  /// `deferredFailed`.
  /// - Parameters:
  ///   - id: the client.
  ///   - distance: metres.
  ///   - timeout: seconds.
  package func allowDeferred(_ id: ClientID, distance: Double, timeout: Double) {
    send(.allowDeferred(id, distance: distance, timeout: timeout))
  }

  /// Monitors a region (`addRegion`); the mirror lists it once the daemon says it started.
  /// - Parameters:
  ///   - spec: the region.
  ///   - group: `manager` or `monitor:NAME`.
  ///   - initialState: the state assumed until a decisive fix.
  ///   - requester: the client told `regionStarted` or `regionFailed`.
  package func addRegion(
    _ spec: RegionSpec, group: String, initialState: RegionState, requester: ClientID?
  ) {
    send(.addRegion(group: group, spec, initialState: initialState, requester: requester))
  }

  /// Stops monitoring a region: gone from the mirror at once, the daemon hears `removeRegion`.
  /// - Parameters:
  ///   - identifier: the region.
  ///   - group: its group.
  package func removeRegion(identifier: String, group: String) {
    send(.removeRegion(group: group, identifier: identifier))
  }

  /// Asks the daemon for a region's state (`requestRegionState`).
  /// - Parameters:
  ///   - identifier: the region.
  ///   - group: its group.
  ///   - requester: the client told the answer.
  package func requestRegionState(identifier: String, group: String, requester: ClientID) {
    send(.requestRegionState(requester, group: group, identifier: identifier))
  }

  /// The mirrored regions of a group, by identifier. When another process of the app changed its
  /// regions since the mirror's copy was made, they are asked for again first (see
  /// `refreshRegionsIfStale`).
  /// - Parameter group: the group.
  /// - Returns: its regions and their states.
  package func regions(group: String) -> [(spec: RegionSpec, state: RegionState)] {
    refreshRegionsIfStale()
    return state.withLock { state in
      (state.mirror.regions[group] ?? [:]).values.sorted { $0.spec.identifier < $1.spec.identifier }
    }
  }

  /// One mirrored region.
  /// - Parameters:
  ///   - identifier: the region.
  ///   - group: its group.
  /// - Returns: the region and its state, or `nil`.
  package func region(identifier: String, group: String) -> (spec: RegionSpec, state: RegionState)?
  {
    state.withLock { $0.mirror.regions[group]?[identifier] }
  }

  /// The default for `refreshTimeout`, in seconds.
  package static let defaultRefreshTimeout = 2.0

  /// After the daemon said another process of the app changed its regions (`regionsChanged`),
  /// asks for them (`refreshRegions`) and waits for the answer, at most `refreshTimeout`; without
  /// an answer the mirror is used as it is. A process that never lists its regions never fetches
  /// them: the daemon tells it once and then waits for the question. Not on the client's queue,
  /// where the answer is handled (a delivery reads the mirror as it is).
  func refreshRegionsIfStale() {
    guard DispatchQueue.getSpecific(key: Self.queueKey) == nil else { return }
    let semaphore = DispatchSemaphore(value: 0)
    let ask = state.withLock { state -> Bool? in
      guard state.regionsStale, state.welcomed else { return nil }
      state.refreshWaiters.append(semaphore)
      defer { state.refreshing = true }
      return !state.refreshing
    }
    guard let ask else { return }
    if ask { queue.async { [self] in write(.refreshRegions) } }
    yieldRunLoopReading()
    _ = semaphore.wait(timeout: .now() + refreshTimeout)
  }

  /// Ends the waits for a `regionList` (it arrived, a welcome replaced the mirror, or the
  /// connection ended).
  func endRefresh(_ state: inout State) {
    state.refreshing = false
    state.removedDuringRefresh = []
    for waiter in state.refreshWaiters { waiter.signal() }
    state.refreshWaiters = []
  }

  /// The daemon's largest region radius, metres (from the welcome).
  package var maximumRegionRadius: Double { state.withLock { $0.mirror.maximumRegionRadius } }

  /// Whether the daemon has a source that can produce headings (from the welcome).
  package var headingAvailable: Bool { state.withLock { $0.mirror.headingAvailable } }

  // MARK: Requests (on the queue)

  /// Sends a request that is not part of a client's running state: now if welcomed, else after the
  /// next welcome.
  func request(_ message: DaemonMessage) {
    let welcomed = state.withLock { state -> Bool in
      if !state.welcomed { state.outbox.append(message) }
      return state.welcomed
    }
    if welcomed { write(message) }
  }

  /// Delivers to one client, if it is registered.
  func deliver(_ delivery: HubDelivery, to number: Int) {
    guard let client = state.withLock({ $0.clients[number]?.client }) else { return }
    client.hub(self, deliver: delivery)
  }

  /// Delivers to every client, in registration order.
  func deliverToAll(_ delivery: HubDelivery) {
    let clients = state.withLock { $0.clients.sorted { $0.key < $1.key }.map(\.value.client) }
    for client in clients { client.hub(self, deliver: delivery) }
  }

  /// Writes one message on the current connection; a failure ends the connection (the reader then
  /// reports the end and the client reconnects).
  func write(_ message: DaemonMessage) {
    guard let fd = state.withLock({ $0.fd }) else { return }
    do {
      try DaemonClientSocket.writeAll(fd, DaemonProtocol.encode(message))
    } catch {
      HubLog.write(.info, "daemon", "\(error)")
      DaemonClientSocket.shutdown(fd)
    }
  }

  // MARK: Connection (on the queue)

  /// Tries each socket path; on success starts the reader and says hello, else schedules a retry.
  func connect() {
    guard !state.withLock({ $0.closed || $0.fd != nil }) else { return }
    var failures: [String] = []
    for path in socketPaths {
      do {
        let fd = try DaemonClientSocket.connect(path: path)
        let generation = state.withLock { state -> Int in
          state.fd = fd
          state.welcomed = false
          state.refusal = nil
          state.generation += 1
          return state.generation
        }
        HubLog.write(.info, "daemon", "connected to \(path)")
        startReader(fd: fd, generation: generation)
        write(.hello(version: DaemonProtocol.version, role: .app))
        return
      } catch {
        failures.append(error.message)
      }
    }
    let reason = failures.isEmpty ? "no socket path" : failures.joined(separator: "; ")
    connectionFailed(reason: reason)
  }

  /// The attempt failed (or the daemon refused the hello): clients are told on their next request,
  /// and a retry is scheduled.
  func connectionFailed(reason: String) {
    let problem =
      required
      ? Self.requiredMessage(paths: socketPaths, reason: reason)
      : "locationd is not reachable (\(reason)); reconnecting"
    let (delay, first, closed) = state.withLock { state -> (Double, Bool, Bool) in
      state.problem = problem
      let delay = state.backoff
      state.backoff = min(Self.maximumBackoff, state.backoff * 2)
      let first = !state.firstOutcome
      state.firstOutcome = true
      return (delay, first, state.closed)
    }
    HubLog.write(.info, "daemon", reason)
    if first { firstAttempt.leave() }
    guard !closed else { return }
    queue.asyncAfter(deadline: .now() + delay) { [self] in connect() }
  }

  /// The welcome arrived: refresh the mirror, tell clients of a changed authorization, send again
  /// what is running and what waited in the outbox, then hand over held region events.
  func welcomed(_ welcome: DaemonWelcome) {
    var regions: [String: [String: (spec: RegionSpec, state: RegionState)]] = [:]
    for entry in welcome.regions {
      regions[entry.group, default: [:]][entry.region.identifier] = (entry.region, entry.state)
    }
    let (changed, first, records, outbox) = state.withLock {
      state -> (Bool, Bool, [(Int, Record)], [DaemonMessage]) in
      let changed = state.mirror.authorization != welcome.authorization
      state.mirror = Mirror(
        authorization: welcome.authorization, regions: regions,
        maximumRegionRadius: welcome.maximumRegionRadius,
        headingAvailable: welcome.headingAvailable,
        significantChangeAvailable: welcome.significantChangeAvailable,
        beaconsAvailable: welcome.beaconsAvailable)
      for held in state.held.reversed() { Self.rewind(held, in: &state.mirror) }
      state.regionsStale = false
      endRefresh(&state)
      state.welcomed = true
      state.app = welcome.app
      state.backoff = Self.initialBackoff
      let first = !state.firstOutcome
      state.firstOutcome = true
      let outbox = state.outbox
      state.outbox = []
      return (changed, first, state.clients.sorted { $0.key < $1.key }, outbox)
    }
    HubLog.write(.info, "daemon", "welcomed as \(welcome.app)")
    // The reason first: a request below may make the daemon ask the agent.
    if let purpose = state.withLock({ $0.purpose }) { write(.purpose(text: purpose)) }
    for (number, record) in records {
      write(.register(client: number))
      if let updates = record.updates {
        write(.startUpdates(client: number, request: updates))
      }
      if record.significantChanges { write(.startSignificantChanges(client: number)) }
      if let heading = record.heading {
        write(
          .startHeading(client: number, filter: heading.filter, orientation: heading.orientation))
      }
      for constraint in record.ranging.sorted() {
        write(.startRanging(client: number, constraint: constraint))
      }
    }
    for message in outbox { write(message) }
    if changed { deliverToAll(.authorization(welcome.authorization)) }
    if first { firstAttempt.leave() }
    releaseHeldEvents()
  }
}
