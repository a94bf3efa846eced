import Dispatch
import Foundation
import LocationEngine
import LocationModel
import LocationProtocol
import LocationServices
import LocationSources
import LocationStore
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// `locationd`'s server: a Unix socket, one `AppHost` per app, one `SourcePool` for all of them
/// (DAEMON.md, "Architecture").
///
/// One I/O thread polls the listening socket and every connection: it accepts, reads, splits
/// lines (``DaemonLineReader``), decodes (``DaemonProtocol``) and handles each message in order.
/// Hubs run on their own executors and deliver from there; deliveries are written by the
/// delivering thread without blocking, and whatever a slow peer does not take waits in its
/// bounded queue (``DaemonConnection``) for the I/O thread.
///
/// Rules (ours, beyond DAEMON.md):
/// - A connection's first message must be `hello`; a wrong version gets `unsupportedVersion` and
///   the connection is closed; control and agent roles need root or the daemon's uid
///   (``DaemonAccess``), else `forbidden` and the connection is closed; an app whose executable
///   cannot be read from `/proc/PID/exe` gets `forbidden` and is closed.
/// - Every other bad message gets an `error` (with the request's `id` when it had one) and counts
///   as a strike; at `strikes` (default 3) the connection is closed. A line over 64 KiB gets
///   `tooLarge` and the connection is closed at once; a connection that ends in the middle of a
///   line gets `malformed`. Blank lines are ignored.
/// - Deliveries for every manager (`authorization`, `regionEvents`) are sent once per connection,
///   never once per manager; a manager registered later starts from the authorization its
///   connection last heard (the welcome, or the last `authorization`).
/// - Authorization: a request from a `notDetermined` app (`requestAuthorization`, or starting
///   updates, a one-time location, significant changes or region monitoring) goes to the first connected agent, and
///   so does `requestAuthorization(always: true)` from a `whenInUse` app; while the agent
///   decides, every further request of that app is held and handled in order after the decision.
///   With no agent, the hub's policy (the configured one) decides. If the agent disconnects
///   first, the next agent is asked, else the policy decides. An agent's `once` lasts until the
///   app's last connection closes, then the app is `notDetermined` again.
/// - An app that may not have locations (not authorized, or services off) gets no answer to
///   `requestRegionState`: it learns nothing, not even a state stored while it was authorized.
/// - An app with reduced accuracy authorization cannot monitor regions (Apple's rule:
///   `regionFailed` with `denied`); its locations are reduced (``ReducedAccuracy``) before they are
///   encoded.
/// - `ack` deletes pending events up to the sequence given, but never beyond the highest sequence
///   this connection was sent.
public final class DaemonServer: Sendable {
  /// The configuration the server runs with.
  public let configuration: DaemonConfiguration
  private let store: LocationStore
  private let persistence: StorePersistence
  private let pool: SourcePool?
  private let sourcesProblem: String?
  private let clock: (any HubClock)?
  private let daemonUID: UInt32
  private let reducer: ReducedAccuracy

  private struct Shared {
    var hosts: [String: AppHost] = [:]
    var started = false
    var stopping = false
    var wakeWrite: Int32 = -1
    /// Connections that asked the I/O thread for attention (writability, overflow).
    var attention: Set<Int> = []
  }

  private let shared = Mutex(Shared())
  private let loop = IOLoop()
  private let finished = DispatchSemaphore(value: 0)

  /// The setting key of the reduced-accuracy secret in the store.
  public static let secretKey = "reducedAccuracySecret"

  /// Creates a server; nothing listens before ``start()``.
  /// - Parameters:
  ///   - configuration: The settings.
  ///   - store: The open store shared by every app.
  ///   - sources: The real sources (tests pass scripted ones); nil: made from the configuration's
  ///     URLs, or discovered as an embedded hub discovers them when none are configured.
  ///   - clock: The clock of every hub and of the pool; nil: real time (each hub on its own serial
  ///     queue). With a `ManualClock`, hubs handle events synchronously on the calling thread.
  ///   - daemonUID: The uid that may use the control role besides root (default: the effective
  ///     uid).
  ///   - environment: The environment used for source discovery.
  public init(
    configuration: DaemonConfiguration, store: LocationStore,
    sources: [any LocationSource]? = nil, clock: (any HubClock)? = nil,
    daemonUID: UInt32 = geteuid(),
    environment: [String: String] = ProcessInfo.processInfo.environment
  ) {
    self.configuration = configuration
    self.store = store
    self.persistence = StorePersistence(store: store)
    self.clock = clock
    self.daemonUID = daemonUID
    var made = sources
    var problem: String?
    if made == nil {
      if !configuration.sources.isEmpty {
        made = configuration.sources.map { SourceFactory.make($0) }
      } else {
        switch HubConfiguration.sources(
          environment, fileExists: { access($0, R_OK) == 0 },
          readFile: { try? String(contentsOfFile: $0, encoding: .utf8) },
          probe: SourceDiscovery.isAvailable)
        {
        case .urls(let urls): made = urls.map { SourceFactory.make($0) }
        case .objects(let make): made = make()
        case .unavailable(let message): problem = message
        }
      }
    }
    if let made, !made.isEmpty {
      pool = clock.map { SourcePool(sources: made, clock: $0) } ?? SourcePool(sources: made)
    } else {
      pool = nil
      problem = problem ?? HubConfiguration.noSourceMessage
    }
    sourcesProblem = problem
    reducer = ReducedAccuracy(secret: Self.secret(in: store))
  }

  /// The reduced-accuracy secret: read from the store, or made and kept there on first use, so that
  /// every cell's offset stays the same across restarts.
  static func secret(in store: LocationStore) -> UInt64 {
    if let text = (try? store.setting(secretKey)) ?? nil, let value = UInt64(text) { return value }
    var generator = SystemRandomNumberGenerator()
    let value = generator.next()
    do {
      try store.setSetting(secretKey, String(value))
    } catch {
      DaemonLog.write("the reduced-accuracy secret could not be stored (\(error)); it will change")
    }
    return value
  }

  // MARK: Life cycle

  /// Creates the socket's directory if needed, binds and listens, restores the hubs of apps with
  /// monitored regions, and starts the I/O thread.
  /// - Throws: ``DaemonSystemError`` when the socket cannot be set up (another daemon listening on
  ///   it is `EADDRINUSE`).
  public func start() throws(DaemonSystemError) {
    let path = configuration.socketPath
    try prepareDirectory(of: path)
    if FileManager.default.fileExists(atPath: path) {
      let probe = try DaemonSyscall.socket(nonBlocking: false)
      defer { DaemonSyscall.close(probe) }
      if (try? DaemonSyscall.connect(probe, path: path)) != nil {
        throw DaemonSystemError(
          operation: "another daemon is listening on \(path)", errno: EADDRINUSE)
      }
      unlink(path)
    }
    let listener = try DaemonSyscall.socket(nonBlocking: true)
    do throws(DaemonSystemError) {
      try DaemonSyscall.bind(listener, path: path)
      // The mode is set before listen(): nobody can connect in between.
      guard chmod(path, configuration.system ? 0o666 : 0o600) == 0 else {
        throw DaemonSystemError(operation: "chmod \(path)", errno: errno)
      }
      try DaemonSyscall.listen(listener, backlog: 128)
    } catch {
      DaemonSyscall.close(listener)
      throw error
    }
    let (wakeRead, wakeWrite): (Int32, Int32)
    do throws(DaemonSystemError) {
      (wakeRead, wakeWrite) = try DaemonSyscall.pipe()
    } catch {
      DaemonSyscall.close(listener)
      unlink(path)
      throw error
    }
    loop.listener = listener
    loop.wakeRead = wakeRead
    shared.withLock {
      $0.wakeWrite = wakeWrite
      $0.started = true
    }
    restoreHosts()
    DaemonLog.write(
      "listening on \(path) (\(configuration.system ? "system" : "user") daemon, policy "
        + "\(configuration.policy.rawValue), sources: "
        + "\(pool?.descriptors.map(\.url).joined(separator: ", ") ?? "none"))")
    let thread = Thread { [self] in
      run()
      finished.signal()
    }
    thread.name = "locationd I/O"
    thread.start()
  }

  /// Stops the server: every connection is closed, the socket file removed, every hub retired.
  /// Returns once the I/O thread has finished. Safe to call more than once.
  public func stop() {
    let (wasRunning, wake) = shared.withLock { shared -> (Bool, Int32) in
      defer { shared.stopping = true }
      return (shared.started && !shared.stopping, shared.wakeWrite)
    }
    guard wasRunning else { return }
    Self.poke(wake)
    finished.wait()
    finished.signal()
  }

  /// Blocks until the server has stopped (after ``stop()`` from another thread).
  public func waitUntilStopped() {
    finished.wait()
    finished.signal()
  }

  private func prepareDirectory(of path: String) throws(DaemonSystemError) {
    let directory = (path as NSString).deletingLastPathComponent
    guard !directory.isEmpty else { return }
    let mode: mode_t = configuration.system ? 0o755 : 0o700
    var info = stat()
    if stat(directory, &info) != 0 {
      do {
        try FileManager.default.createDirectory(
          atPath: directory, withIntermediateDirectories: true,
          attributes: [.posixPermissions: Int(mode)])
      } catch {
        throw DaemonSystemError(operation: "mkdir \(directory)", errno: errno == 0 ? EACCES : errno)
      }
      guard chmod(directory, mode) == 0 else {
        throw DaemonSystemError(operation: "chmod \(directory)", errno: errno)
      }
      return
    }
    // The daemon's own directory (…/locationd) gets its mode even if it existed; a directory the
    // user chose with --socket is left as it is.
    if (directory as NSString).lastPathComponent == "locationd", info.st_uid == geteuid(),
      info.st_mode & 0o777 != mode
    {
      guard chmod(directory, mode) == 0 else {
        throw DaemonSystemError(operation: "chmod \(directory)", errno: errno)
      }
    }
  }

  /// Apps with monitored regions get their hub at once: their regions are watched while they are
  /// away.
  private func restoreHosts() {
    let apps: Set<String>
    do {
      apps = Set(try store.allRegions().map(\.app))
    } catch {
      DaemonLog.write("stored regions unreadable: \(error)")
      return
    }
    for app in apps.sorted() { _ = host(for: app) }
  }

  // MARK: Hosts

  private var hubSources: LocationHub.Sources {
    if let pool { return .objects { pool.relays() } }
    return .unavailable(sourcesProblem ?? HubConfiguration.noSourceMessage)
  }

  /// The live host of an app, made (and started) if there is none. I/O thread only.
  private func host(for app: String) -> AppHost {
    if let existing = shared.withLock({ $0.hosts[app] }) { return existing }
    let host = AppHost(
      app: app, sources: hubSources, persistence: persistence, store: store,
      policy: configuration.policy, clock: clock, launch: configuration.app(id: app)?.launch,
      reducer: reducer, maximumRegions: configuration.maximumRegions)
    shared.withLock { $0.hosts[app] = host }
    host.start()
    return host
  }

  private func liveHost(_ app: String) -> AppHost? { shared.withLock { $0.hosts[app] } }

  /// Retires a host with no connection and no region (on its hub's executor, after the work the
  /// last connection queued).
  private func retireIfIdle(_ host: AppHost) {
    let retire = shared.withLock { shared -> Bool in
      guard !shared.stopping, shared.hosts[host.app] === host, host.markRetiredIfIdle() else {
        return false
      }
      shared.hosts[host.app] = nil
      return true
    }
    if retire { host.retire() }
  }

  // MARK: I/O thread

  private static func poke(_ fd: Int32) {
    guard fd >= 0 else { return }
    var byte: UInt8 = 1
    _ = write(fd, &byte, 1)
  }

  private func attention(_ connection: DaemonConnection) {
    let fd = shared.withLock { shared -> Int32 in
      shared.attention.insert(connection.id)
      return shared.wakeWrite
    }
    Self.poke(fd)
  }

  private func run() {
    var buffer = [UInt8](repeating: 0, count: 65_536)
    var fds: [pollfd] = []
    var order: [Int] = []
    while !shared.withLock({ $0.stopping }) {
      fds.removeAll(keepingCapacity: true)
      order.removeAll(keepingCapacity: true)
      let accepting = loop.sessions.count < configuration.maximumConnections
      fds.append(pollfd(fd: loop.listener, events: Int16(accepting ? POLLIN : 0), revents: 0))
      fds.append(pollfd(fd: loop.wakeRead, events: Int16(POLLIN), revents: 0))
      for (id, session) in loop.sessions {
        var events = Int16(POLLIN)
        if session.connection.wantsWrite { events |= Int16(POLLOUT) }
        fds.append(pollfd(fd: session.connection.fd, events: events, revents: 0))
        order.append(id)
      }
      let ready = poll(&fds, nfds_t(fds.count), -1)
      if ready < 0 {
        if errno == EINTR { continue }
        DaemonLog.write("poll failed: \(String(cString: strerror(errno)))")
        break
      }
      if fds[1].revents != 0 { wakeUp() }
      if fds[0].revents & Int16(POLLIN) != 0 { acceptAll() }
      for (index, id) in order.enumerated() {
        let revents = fds[index + 2].revents
        guard revents != 0, let session = loop.sessions[id] else { continue }
        if revents & Int16(POLLOUT) != 0, session.connection.flush() == .close {
          close(session, overflow: session.connection.overflowed)
          continue
        }
        if revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 { read(session, buffer: &buffer) }
      }
    }
    shutdown()
  }

  private func wakeUp() {
    var sink = [UInt8](repeating: 0, count: 256)
    while Glibc.read(loop.wakeRead, &sink, sink.count) > 0 {}
    let ids = shared.withLock { shared -> Set<Int> in
      defer { shared.attention = [] }
      return shared.attention
    }
    for id in ids.sorted() {
      guard let session = loop.sessions[id] else { continue }
      if session.connection.flush() == .close {
        close(session, overflow: session.connection.overflowed)
      }
    }
  }

  private func acceptAll() {
    while loop.sessions.count < configuration.maximumConnections {
      let fd: Int32?
      do {
        fd = try DaemonSyscall.accept(loop.listener)
      } catch {
        DaemonLog.write("\(error)")
        return
      }
      guard let fd else { return }
      let peer: DaemonPeer
      do {
        let credentials = try DaemonSyscall.peerCredentials(fd)
        peer = DaemonPeer(
          pid: credentials.pid, uid: credentials.uid, gid: credentials.gid,
          executable: DaemonSyscall.executable(pid: credentials.pid))
      } catch {
        DaemonLog.write("\(error); connection refused")
        DaemonSyscall.close(fd)
        continue
      }
      let id = loop.nextConnectionID
      loop.nextConnectionID += 1
      let connection = DaemonConnection(
        id: id, fd: fd, peer: peer, limit: configuration.queueLimit
      ) { [weak self] connection in self?.attention(connection) }
      loop.sessions[id] = Session(connection: connection)
    }
  }

  private func read(_ session: Session, buffer: inout [UInt8]) {
    // A few reads per turn, so that one busy peer cannot starve the others.
    for _ in 0..<4 {
      let result = buffer.withUnsafeMutableBytes {
        DaemonSyscall.read(session.connection.fd, into: $0)
      }
      switch result {
      case .data(let count):
        session.reader.append(buffer[0..<count])
        processLines(session)
        if loop.sessions[session.connection.id] == nil { return }
      case .wouldBlock:
        return
      case .closed:
        if case .truncated(let count) = session.reader.finish() {
          session.connection.send(
            .error(
              DaemonErrorMessage(
                code: .malformed,
                message: "the connection ended in the middle of a line (\(count) bytes)")))
        }
        close(session)
        return
      }
    }
  }

  private func processLines(_ session: Session) {
    while let item = session.reader.next() {
      switch item {
      case .line(let bytes):
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
        do {
          try handle(try DaemonProtocol.decode(line: bytes), session)
        } catch {
          fail(session, error)
        }
        if loop.sessions[session.connection.id] == nil { return }
      case .tooLarge:
        session.connection.send(
          .error(
            DaemonErrorMessage(
              code: .tooLarge,
              message: "a line is longer than \(session.reader.limit) bytes; closing")))
        close(session)
        return
      case .truncated:
        return
      }
    }
  }

  /// Sends an error to the peer and counts a strike; closes the connection at the last one.
  private func fail(_ session: Session, _ error: DaemonProtocolError) {
    guard loop.sessions[session.connection.id] != nil else { return }
    session.connection.send(.error(DaemonErrorMessage(error)))
    session.strikes += 1
    if session.strikes >= configuration.strikes {
      DaemonLog.write(
        "pid \(session.connection.peer.pid): \(session.strikes) protocol errors; disconnected")
      close(session)
    }
  }

  private func close(_ session: Session, overflow: Bool = false) {
    let connection = session.connection
    guard loop.sessions.removeValue(forKey: connection.id) != nil else { return }
    if overflow {
      connection.writeFinal(
        .error(
          DaemonErrorMessage(
            code: .tooLarge,
            message: "the connection fell more than \(4 * connection.limit) bytes behind; closing"))
      )
      DaemonLog.write("pid \(connection.peer.pid): too slow; disconnected")
    }
    connection.markClosed()
    // Unread input would turn the close into a reset that could hide the last error from the peer.
    var sink = [UInt8](repeating: 0, count: 4096)
    for _ in 0..<16 {
      guard
        case .data = sink.withUnsafeMutableBytes({ DaemonSyscall.read(connection.fd, into: $0) })
      else { break }
    }
    DaemonSyscall.close(connection.fd)
    switch session.role {
    case .app:
      guard let host = session.host else { break }
      for (_, manager) in session.managers.sorted(by: { $0.key < $1.key }) {
        host.hub.unregister(manager.id)
      }
      session.managers = [:]
      dropHeldActions(of: connection.id)
      if host.detach(connection) {
        if loop.onceApps.remove(host.app) != nil {
          var snapshot = host.hub.authorization
          snapshot.status = AuthorizationStatus.notDetermined
          snapshot.accuracy = .fullAccuracy
          host.hub.setAuthorization(snapshot)
        }
        host.afterPendingWork { [weak self] in self?.retireIfIdle(host) }
      }
    case .agent:
      loop.agents.removeAll { $0 == connection.id }
      for id in loop.requests.keys.sorted() where loop.requests[id]?.agent == connection.id {
        reroute(id)
      }
    case .control, nil:
      break
    }
  }

  private func shutdown() {
    for id in loop.sessions.keys.sorted() {
      if let session = loop.sessions[id] { close(session) }
    }
    DaemonSyscall.close(loop.listener)
    DaemonSyscall.close(loop.wakeRead)
    let (hosts, wake) = shared.withLock { shared -> ([AppHost], Int32) in
      defer {
        shared.hosts = [:]
        shared.wakeWrite = -1
      }
      return (Array(shared.hosts.values), shared.wakeWrite)
    }
    DaemonSyscall.close(wake)
    unlink(configuration.socketPath)
    for host in hosts { host.retire() }
    DaemonLog.write("stopped")
  }

  // MARK: Messages

  private func handle(_ message: DaemonMessage, _ session: Session) throws(DaemonProtocolError) {
    guard let role = session.role else {
      guard case .hello(let version, let role) = message else {
        throw DaemonProtocolError(
          code: .outOfOrder, message: "the first message must be hello, not \(message.type)")
      }
      hello(session, version: version, role: role)
      return
    }
    switch message {
    case .hello:
      throw DaemonProtocolError(code: .outOfOrder, message: "hello was already received")
    case .ping(let id):
      session.connection.send(.reply(id: id, .done))
    case .register, .unregister, .startUpdates, .changeRequest, .stopUpdates, .requestLocation,
      .startSignificantChanges, .stopSignificantChanges, .requestAuthorization, .addRegion,
      .removeRegion, .requestRegionState, .startHeading, .changeHeading, .stopHeading,
      .allowDeferred, .disallowDeferred, .ack, .refreshRegions:
      guard role == .app, let host = session.host else {
        throw DaemonProtocolError(
          code: .forbidden,
          message: "\(message.type) is an app request; this is a \(role) connection")
      }
      try app(message, session, host)
    case .status(let id), .apps(let id), .authorize(let id, _, _, _), .regions(let id, _),
      .sources(let id), .services(let id, _):
      guard role == .control else {
        throw DaemonProtocolError(
          code: .forbidden, message: "\(message.type) needs the control role", id: id)
      }
      try control(message, session)
    case .authorizationDecision(let id, let status, let accuracy):
      guard role == .agent else {
        throw DaemonProtocolError(
          code: .forbidden, message: "authorizationDecision needs the agent role", id: id)
      }
      try decide(id, status, accuracy, from: session)
    case .welcome, .error, .locations, .authorization, .regionEvents, .regionStarted,
      .regionsChanged, .regionList, .regionFailed, .regionState, .heading, .headingInterference,
      .deferredFinished, .paused,
      .resumed, .reply, .authorizationRequest:
      throw DaemonProtocolError(
        code: .outOfOrder, message: "\(message.type) is sent by the daemon, not to it")
    }
  }

  private func hello(_ session: Session, version: Int, role: DaemonRole) {
    let connection = session.connection
    guard version == DaemonProtocol.version else {
      connection.send(
        .error(
          DaemonErrorMessage(
            code: .unsupportedVersion,
            message:
              "this daemon speaks version \(DaemonProtocol.version); the peer asked for \(version)"
          )))
      close(session)
      return
    }
    let peer = connection.peer
    switch role {
    case .control, .agent:
      guard DaemonAccess.mayControl(peerUID: peer.uid, daemonUID: daemonUID) else {
        connection.send(
          .error(
            DaemonErrorMessage(
              code: .forbidden,
              message: "the \(role) role needs uid 0 or the daemon's uid \(daemonUID)")))
        close(session)
        return
      }
      session.role = role
      if role == .agent { loop.agents.append(connection.id) }
      DaemonLog.write("pid \(peer.pid) (uid \(peer.uid)) connected as \(role)")
      connection.send(
        .welcome(
          DaemonWelcome(
            app: "", uid: Int(peer.uid),
            authorization: AuthorizationSnapshot(
              status: AuthorizationStatus.notDetermined,
              servicesEnabled: persistence.servicesEnabled()),
            maximumRegionRadius: LocationEngine(allowed: false).maximumRegionRadius,
            headingAvailable: pool?.descriptors.contains(where: \.producesHeading) ?? false,
            significantChangeAvailable: pool != nil)))
    case .app:
      guard let executable = peer.executable else {
        connection.send(
          .error(
            DaemonErrorMessage(
              code: .forbidden,
              message: "the executable of pid \(peer.pid) cannot be read; refusing to guess")))
        close(session)
        return
      }
      let app = configuration.appID(forExecutable: executable, uid: peer.uid)
      for _ in 0..<2 {
        let host = host(for: app)
        let maximumRadius = host.hub.maximumRegionRadius
        let heading = host.hub.headingAvailable
        let significant = host.hub.significantChangeAvailable
        let sent = host.attach(connection) { authorization, regions in
          .welcome(
            DaemonWelcome(
              app: app, uid: Int(peer.uid), authorization: authorization, regions: regions,
              maximumRegionRadius: maximumRadius, headingAvailable: heading,
              significantChangeAvailable: significant))
        }
        // A host retired between the lookup and the attach: make a new one.
        guard let sent else { continue }
        session.role = .app
        session.host = host
        session.deliveredSequence = sent
        DaemonLog.write("pid \(peer.pid) (uid \(peer.uid)) connected as app \(app)")
        return
      }
      connection.send(
        .error(DaemonErrorMessage(code: .unsupported, message: "the app could not be attached")))
      close(session)
    }
  }

  // MARK: App role

  private func manager(_ session: Session, _ client: Int) throws(DaemonProtocolError) -> ClientID {
    guard let manager = session.managers[client] else {
      throw DaemonProtocolError(
        code: .notRegistered, message: "client \(client) is not registered on this connection")
    }
    return manager.id
  }

  private func app(_ message: DaemonMessage, _ session: Session, _ host: AppHost)
    throws(DaemonProtocolError)
  {
    if case .ack(let sequence) = message {
      let through = min(
        sequence, max(session.deliveredSequence, session.connection.highestSequence))
      if through > 0 { host.acknowledge(through: through) }
      return
    }
    let action: Action = { [self] () throws(DaemonProtocolError) in
      try perform(message, session, host)
    }
    if var held = loop.requests.first(where: { $0.value.app == host.app }) {
      held.value.actions.append((session.connection.id, action))
      loop.requests[held.key] = held.value
      return
    }
    if let always = authorizationQuestion(message, host), let agent = loop.agents.first {
      let id = loop.nextRequestID
      loop.nextRequestID += 1
      loop.requests[id] = HeldAuthorization(
        app: host.app, always: always, agent: agent, actions: [(session.connection.id, action)])
      loop.sessions[agent]?.connection.send(
        .authorizationRequest(id: id, app: host.app, always: always))
      DaemonLog.write("app \(host.app): asking the agent")
      return
    }
    try action()
  }

  /// Whether a message asks the user (an agent) about authorization, and for `always` or not.
  private func authorizationQuestion(_ message: DaemonMessage, _ host: AppHost) -> Bool? {
    let status = host.hub.authorization.status
    switch message {
    case .requestAuthorization(let always):
      if status == AuthorizationStatus.notDetermined { return always }
      if always, status == AuthorizationStatus.authorizedWhenInUse { return true }
      return nil
    case .startUpdates, .requestLocation:
      return status == AuthorizationStatus.notDetermined ? false : nil
    case .addRegion, .startSignificantChanges:
      return status == AuthorizationStatus.notDetermined ? true : nil
    default:
      return nil
    }
  }

  private func perform(_ message: DaemonMessage, _ session: Session, _ host: AppHost)
    throws(DaemonProtocolError)
  {
    let hub = host.hub
    switch message {
    case .register(let client):
      guard session.managers[client] == nil else {
        throw DaemonProtocolError(
          code: .outOfOrder, message: "client \(client) is already registered")
      }
      guard session.managers.count < configuration.maximumManagers else {
        throw DaemonProtocolError(
          code: .unsupported,
          message: "a connection may register at most \(configuration.maximumManagers) clients")
      }
      let proxy = ManagerProxy(connection: session.connection, client: client, host: host)
      session.managers[client] = (hub.register(proxy), proxy)
    case .unregister(let client):
      hub.unregister(try manager(session, client))
      session.managers[client] = nil
    case .startUpdates(let client, let request):
      hub.startUpdates(try manager(session, client), request)
    case .changeRequest(let client, let request):
      hub.send(.changeRequest(try manager(session, client), request))
    case .stopUpdates(let client):
      hub.send(.stopUpdates(try manager(session, client)))
    case .requestLocation(let client, let request):
      hub.requestLocation(try manager(session, client), request)
    case .startSignificantChanges(let client):
      hub.startSignificantChanges(try manager(session, client))
    case .stopSignificantChanges(let client):
      hub.send(.stopSignificantChanges(try manager(session, client)))
    case .requestAuthorization(let always):
      // Asked of the policy only when no agent decided (an agent's decision is already stored).
      let status = hub.authorization.status
      if status == AuthorizationStatus.notDetermined
        || (always && status == AuthorizationStatus.authorizedWhenInUse
          && loop.agents.isEmpty)
      {
        hub.requestAuthorization(always: always)
      }
    case .addRegion(let client, let group, let region, let initialState):
      let id = try manager(session, client)
      if hub.authorization.isReduced {
        session.connection.send(
          .regionFailed(
            client: client, group: group, identifier: region.identifier, failure: .denied))
        return
      }
      host.noteGroup(group)
      hub.addRegion(region, group: group, initialState: initialState, requester: id)
    case .removeRegion(let group, let identifier):
      hub.removeRegion(identifier: identifier, group: group)
      let connection = session.connection.id
      host.afterPendingWork { host.regionsChanged(by: connection) }
    case .refreshRegions:
      host.refreshRegions(session.connection)
    case .requestRegionState(let client, let group, let identifier):
      let id = try manager(session, client)
      // An app that may not have locations learns nothing, not even a state stored earlier.
      guard hub.authorization.allowsLocation else { return }
      hub.requestRegionState(identifier: identifier, group: group, requester: id)
    case .startHeading(let client, let filter, let orientation):
      hub.send(
        .startHeading(try manager(session, client), filter: filter, orientation: orientation))
    case .changeHeading(let client, let filter, let orientation):
      hub.send(
        .changeHeading(try manager(session, client), filter: filter, orientation: orientation))
    case .stopHeading(let client):
      hub.send(.stopHeading(try manager(session, client)))
    case .allowDeferred(let client, let distance, let timeout):
      hub.allowDeferred(try manager(session, client), distance: distance, timeout: timeout)
    case .disallowDeferred(let client):
      hub.send(.disallowDeferred(try manager(session, client)))
    default:
      break
    }
  }

  // MARK: Agent role

  private func decide(
    _ id: Int, _ decision: DaemonAgentDecision, _ accuracy: DaemonAccuracy, from session: Session
  ) throws(DaemonProtocolError) {
    guard let held = loop.requests[id], held.agent == session.connection.id else {
      throw DaemonProtocolError(
        code: .notFound, message: "no authorization request \(id) is waiting for this agent",
        id: id)
    }
    let status: AuthorizationStatus
    switch decision {
    case .always: status = AuthorizationStatus.authorizedAlways
    case .whenInUse, .once: status = AuthorizationStatus.authorizedWhenInUse
    case .denied: status = AuthorizationStatus.denied
    }
    let snapshot = AuthorizationSnapshot(
      status: status, accuracy: accuracy.authorization,
      servicesEnabled: persistence.servicesEnabled())
    if decision == .once { loop.onceApps.insert(held.app) } else { loop.onceApps.remove(held.app) }
    DaemonLog.write("app \(held.app): the agent decided \(decision.rawValue), \(accuracy.rawValue)")
    resolve(id, snapshot: snapshot)
  }

  /// Gives a held request to the next agent, or to the policy when there is none.
  private func reroute(_ id: Int) {
    guard let held = loop.requests[id] else { return }
    if let agent = loop.agents.first {
      loop.requests[id]?.agent = agent
      loop.sessions[agent]?.connection.send(
        .authorizationRequest(id: id, app: held.app, always: held.always))
    } else {
      resolve(id, snapshot: nil)
    }
  }

  /// Stores a decision (nil: the policy decides) and runs the held requests in order.
  private func resolve(_ id: Int, snapshot: AuthorizationSnapshot?) {
    guard let held = loop.requests.removeValue(forKey: id) else { return }
    let host = liveHost(held.app)
    if let snapshot {
      if let host {
        host.hub.setAuthorization(snapshot)
      } else {
        persistence.setAuthorization(snapshot, app: held.app)
      }
    } else {
      host?.hub.requestAuthorization(always: held.always)
    }
    for (connection, action) in held.actions {
      guard let session = loop.sessions[connection] else { continue }
      do {
        try action()
      } catch {
        fail(session, error)
      }
    }
  }

  private func dropHeldActions(of connection: Int) {
    for id in loop.requests.keys {
      loop.requests[id]?.actions.removeAll { $0.connection == connection }
    }
  }

  // MARK: Control role

  private func control(_ message: DaemonMessage, _ session: Session) throws(DaemonProtocolError) {
    let connection = session.connection
    switch message {
    case .status(let id):
      let clients = loop.sessions.values.sorted { $0.connection.id < $1.connection.id }
        .compactMap { session -> DaemonClientInfo? in
          guard let role = session.role else { return nil }
          return DaemonClientInfo(
            app: session.host?.app ?? "", pid: Int(session.connection.peer.pid),
            uid: Int(session.connection.peer.uid), managers: session.managers.count, role: role)
        }
      let apps = shared.withLock { $0.hosts.keys.sorted() }
      connection.send(
        .reply(
          id: id,
          .status(
            DaemonStatus(
              sources: sourceStatus, clients: clients, apps: apps,
              servicesEnabled: persistence.servicesEnabled()))))
    case .apps(let id):
      connection.send(.reply(id: id, .apps(try appInfos(id))))
    case .authorize(let id, let app, let setting, let accuracy):
      var snapshot = AuthorizationSnapshot(
        status: AuthorizationStatus.notDetermined, accuracy: accuracy.authorization,
        servicesEnabled: persistence.servicesEnabled())
      switch setting {
      case .always: snapshot.status = AuthorizationStatus.authorizedAlways
      case .whenInUse: snapshot.status = AuthorizationStatus.authorizedWhenInUse
      case .denied: snapshot.status = AuthorizationStatus.denied
      case .reset: snapshot.accuracy = .fullAccuracy
      }
      loop.onceApps.remove(app)
      if let host = liveHost(app) {
        // Stored before the reply (the hub stores it again on its executor and tells the app's
        // managers): a `kill -9` after `locationctl` reported success keeps the decision.
        if setting == .reset {
          do {
            try store.removeAuthorization(app: app)
          } catch {
            throw DaemonProtocolError(code: .unsupported, message: "store: \(error)", id: id)
          }
        } else {
          persistence.setAuthorization(snapshot, app: app)
        }
        host.hub.setAuthorization(snapshot)
      } else if setting == .reset {
        do {
          try store.removeAuthorization(app: app)
        } catch {
          throw DaemonProtocolError(code: .unsupported, message: "store: \(error)", id: id)
        }
      } else {
        persistence.setAuthorization(snapshot, app: app)
      }
      DaemonLog.write(
        "app \(app): authorization set to \(setting.rawValue) by pid \(connection.peer.pid)")
      connection.send(.reply(id: id, .done))
    case .regions(let id, let app):
      if let host = liveHost(app) {
        connection.send(.reply(id: id, .regions(host.regionEntries)))
        return
      }
      let stored: [StoredRegion]
      do {
        stored = try store.allRegions().filter { $0.app == app }
      } catch {
        throw DaemonProtocolError(code: .unsupported, message: "store: \(error)", id: id)
      }
      if stored.isEmpty, persistence.authorization(app: app) == nil {
        throw DaemonProtocolError(code: .notFound, message: "no app \(app) is known", id: id)
      }
      let entries = stored.map {
        DaemonRegionEntry(
          group: $0.group,
          region: RegionSpec(
            identifier: $0.identifier, latitude: $0.latitude, longitude: $0.longitude,
            radius: $0.radius, hysteresis: $0.hysteresis, notifyOnEntry: $0.notifyOnEntry,
            notifyOnExit: $0.notifyOnExit),
          state: RegionState(rawValue: $0.state) ?? .unknown)
      }
      connection.send(.reply(id: id, .regions(entries)))
    case .sources(let id):
      connection.send(.reply(id: id, .sources(sourceStatus)))
    case .services(let id, let enabled):
      persistence.setServicesEnabled(enabled)
      let hosts = shared.withLock { $0.hosts.sorted { $0.key < $1.key }.map(\.value) }
      for host in hosts {
        var snapshot = host.hub.authorization
        snapshot.servicesEnabled = enabled
        host.hub.setAuthorization(snapshot)
      }
      DaemonLog.write(
        "location services turned \(enabled ? "on" : "off") by pid \(connection.peer.pid)")
      connection.send(.reply(id: id, .done))
    default:
      break
    }
  }

  private var sourceStatus: [DaemonSourceStatus] {
    (pool?.status ?? []).map {
      let power: String
      switch $0.power {
      case .none: power = "none"
      case .low: power = "low"
      case .high: power = "high"
      }
      return DaemonSourceStatus(
        url: $0.url, running: $0.running, power: power, onSeconds: $0.onSeconds,
        users: $0.subscribers, failure: $0.failing || $0.finished ? $0.lastFailure : nil)
    }
  }

  private func appInfos(_ id: Int) throws(DaemonProtocolError) -> [DaemonAppInfo] {
    let authorized: [String]
    let regions: [StoredRegion]
    do {
      authorized = try store.apps()
      regions = try store.allRegions()
    } catch {
      throw DaemonProtocolError(code: .unsupported, message: "store: \(error)", id: id)
    }
    let hosts = shared.withLock { $0.hosts }
    let names = Set(authorized).union(regions.map(\.app)).union(hosts.keys).sorted()
    let services = persistence.servicesEnabled()
    return names.map { app in
      let host = hosts[app]
      var authorization =
        host?.hub.authorization ?? persistence.authorization(app: app)
        ?? AuthorizationSnapshot(status: AuthorizationStatus.notDetermined)
      authorization.servicesEnabled = services
      let pending = ((try? store.pendingEvents(app: app)) ?? []).count
      return DaemonAppInfo(
        app: app, authorization: authorization,
        regions: host?.regionCount ?? regions.filter { $0.app == app }.count,
        pendingEvents: pending, connected: (host?.connectionCount ?? 0) > 0)
    }
  }
}

/// A request handled later, after an authorization decision; it may fail like any request.
private typealias Action = () throws(DaemonProtocolError) -> Void

/// Requests of an app held while an agent decides.
private struct HeldAuthorization {
  var app: String
  var always: Bool
  /// The agent connection asked.
  var agent: Int
  var actions: [(connection: Int, run: Action)]
}

/// What the I/O thread knows of one connection.
private final class Session {
  let connection: DaemonConnection
  var reader = DaemonLineReader()
  var role: DaemonRole?
  var host: AppHost?
  var managers: [Int: (id: ClientID, proxy: ManagerProxy)] = [:]
  var strikes = 0
  /// The highest pending-event sequence sent on this connection.
  var deliveredSequence: Int64 = 0

  init(connection: DaemonConnection) { self.connection = connection }
}

/// The I/O thread's own state.
///
/// `@unchecked Sendable`: it is written by `start()` before the I/O thread exists and afterwards
/// only by that thread (every message, accept and close is handled there), so no two threads
/// ever touch it at once.
private final class IOLoop: @unchecked Sendable {
  var listener: Int32 = -1
  var wakeRead: Int32 = -1
  var sessions: [Int: Session] = [:]
  var nextConnectionID = 1
  /// Agent connections, in the order they said hello.
  var agents: [Int] = []
  /// Authorization requests waiting for an agent, by request id.
  var requests: [Int: HeldAuthorization] = [:]
  var nextRequestID = 1
  /// Apps authorized "once": back to notDetermined when their last connection closes.
  var onceApps: Set<String> = []
}
