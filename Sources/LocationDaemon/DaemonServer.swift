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
/// (`docs/architecture.md`, "locationd").
///
/// One I/O thread polls the listening socket and every connection: it accepts, reads, splits
/// lines (``DaemonLineReader``), decodes (``DaemonProtocol``) and handles each message in order.
/// Hubs run on their own executors and deliver from there; deliveries are written by the
/// delivering thread without blocking, and whatever a slow peer does not take waits in its
/// bounded queue (``DaemonConnection``) for the I/O thread.
///
/// The server is split by concern: this file (life cycle, hosts), `+IO` (the poll loop: accept,
/// read, close), `+Messages` (routing by role, app requests), `+Authorization` (the broker: agents,
/// questions, held requests, on ``AuthorizationMachine``) and `+Control` (`locationctl`'s queries).
///
/// Rules (ours):
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
/// - Authorization follows ``AuthorizationMachine`` (one per app, on the I/O thread): a request
///   that asks goes to the first connected agent, and while the agent decides every further
///   request of that app is held and handled in order after the decision; with no agent the
///   configured policy decides. If the agent disconnects first, the next agent is asked, else the
///   policy decides. An agent's `once` lasts until the app's last connection closes.
/// - An app that may not have locations (not authorized, or services off) gets no answer to
///   `requestRegionState`: it learns nothing, not even a state stored while it was authorized.
/// - An app with reduced accuracy authorization cannot monitor regions (Apple's rule:
///   `regionFailed` with `denied`); its locations are reduced (``ReducedAccuracy``) before they are
///   encoded.
/// - `ack` deletes pending events up to the sequence given, but never beyond the highest sequence
///   this connection was sent.
package final class DaemonServer: Sendable {
  /// The configuration the server runs with.
  package let configuration: DaemonConfiguration
  let store: LocationStore
  let persistence: StorePersistence
  let pool: SourcePool?
  /// The machine's Wi-Fi knowledge: learned in the pool, shown and forgotten by `locationctl wifi`.
  let wifi: WifiKnowledge
  /// The device's positions over MQTT (`[publish]`), while the daemon runs.
  let publisher = Mutex<DevicePublisher?>(nil)
  /// The device's track history (`history = yes`), while the daemon runs.
  let recorder = Mutex<TrackRecorder?>(nil)
  private let sourcesProblem: String?
  let clock: (any HubClock)?
  let daemonUID: UInt32
  /// The system daemon's control group (`control-group`), resolved to a gid at start.
  let controlGroupID: UInt32?
  private let reducer: ReducedAccuracy

  struct Shared {
    var hosts: [String: AppHost] = [:]
    var started = false
    var stopping = false
  }

  /// How other threads wake the I/O thread. A lock of its own, taken last: a connection asks for
  /// attention while its sender holds other locks (an app host's, whose holders may wait for
  /// `shared`: `retireIfIdle` takes `shared`, then the host's), so nothing is locked under it.
  struct Wake {
    var write: Int32 = -1
    /// Connections that asked the I/O thread for attention (writability, overflow).
    var attention: Set<Int> = []
  }

  let shared = Mutex(Shared())
  let wake = Mutex(Wake())
  let loop = IOLoop()
  let finished = DispatchSemaphore(value: 0)

  /// The setting key of the reduced-accuracy secret in the store.
  package static let secretKey = "reducedAccuracySecret"

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
  package init(
    configuration: DaemonConfiguration, store: LocationStore,
    sources: [any LocationSource]? = nil, clock: (any HubClock)? = nil,
    daemonUID: UInt32 = geteuid(),
    environment: [String: String] = ProcessInfo.processInfo.environment
  ) {
    self.configuration = configuration
    self.store = store
    // Every app's hub saves the machine's last known location every 5 s (the engine's
    // `saveInterval`), each on its own beat: one commit per 5 s does for them all.
    self.persistence = StorePersistence(store: store, lastKnownLocationInterval: 5)
    self.clock = clock
    self.daemonUID = daemonUID
    self.controlGroupID = configuration.controlGroup.flatMap(Self.groupID)
    let wifi = WifiKnowledge(
      store: store, learning: configuration.wifiLearning,
      fallback: configuration.wifiFallback.flatMap {
        $0.url.isEmpty ? nil : IchnaeaClient.fallback($0)
      })
    self.wifi = wifi
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
      pool =
        clock.map { SourcePool(sources: made, clock: $0, wifi: wifi) }
        ?? SourcePool(sources: made, wifi: wifi)
    } else {
      pool = nil
      problem = problem ?? HubConfiguration.noSourceMessage
    }
    sourcesProblem = problem
    reducer = ReducedAccuracy(secret: Self.secret(in: store))
  }

  /// Starts publishing the device's positions when `[publish]` is configured.
  private func startPublishing() throws(DaemonSystemError) {
    guard let settings = configuration.publish else { return }
    guard let pool else {
      DaemonLog.write("publish: no location source, so no position to publish")
      return
    }
    let made: DevicePublisher
    do {
      made = try DevicePublisher(
        settings: settings, store: store, sources: .objects { pool.relays() }, clock: clock,
        reducer: reducer, daemonUID: daemonUID,
        regionApps: Set(configuration.apps.filter(\.publishesRegions).map(\.id)))
    } catch {
      throw DaemonSystemError(operation: error.message, errno: EINVAL)
    }
    publisher.withLock { $0 = made }
    made.start()
  }

  /// Starts recording the device's track history when `history = yes`.
  private func startRecording() {
    guard configuration.history.enabled else { return }
    guard let pool else {
      DaemonLog.write("history: no location source, so no position to record")
      return
    }
    let made = TrackRecorder(
      settings: configuration.history, store: store, sources: .objects { pool.relays() },
      clock: clock)
    recorder.withLock { $0 = made }
    made.start()
  }

  /// A group's id from its name or number; nil (and logged) when there is no such group.
  static func groupID(_ name: String) -> UInt32? {
    if let number = UInt32(name) { return number }
    guard let entry = getgrnam(name) else {
      DaemonLog.write("control-group \(name): no such group; only root may use control and agent")
      return nil
    }
    return entry.pointee.gr_gid
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
  package func start() throws(DaemonSystemError) {
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
      // Credentials on every message from the first byte: set on the listener, so that each
      // accepted socket has it from its accept (set after, bytes written in between would carry
      // none).
      try DaemonSyscall.passCredentials(listener)
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
    wake.withLock { $0.write = wakeWrite }
    shared.withLock { $0.started = true }
    restoreHosts()
    startRecording()
    do throws(DaemonSystemError) {
      try startPublishing()
    } catch {
      recorder.withLock { $0 }?.stop()
      DaemonSyscall.close(listener)
      unlink(path)
      throw error
    }
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
  package func stop() {
    let wasRunning = shared.withLock { shared -> Bool in
      defer { shared.stopping = true }
      return shared.started && !shared.stopping
    }
    guard wasRunning else { return }
    publisher.withLock { $0 }?.stop()
    recorder.withLock { $0 }?.stop()
    Self.poke(wake.withLock { $0.write })
    finished.wait()
    finished.signal()
  }

  /// Blocks until the server has stopped (after ``stop()`` from another thread).
  package func waitUntilStopped() {
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

  /// Apps with monitored regions or visits get their hub at once: their regions and visits are
  /// watched while they are away.
  /// Also learns which app identities the store knows (`max-apps-per-uid`), and drops kept events
  /// nobody collected for `pending-event-days`.
  private func restoreHosts() {
    let expiry = Date().timeIntervalSince1970 - configuration.pendingEventDays * 86_400
    if let expired = try? store.expireEvents(before: expiry), expired > 0 {
      DaemonLog.write(
        "\(expired) events nobody collected in \(configuration.pendingEventDays) days dropped"
      )
    }
    let apps: Set<String>
    do {
      apps = Set(try store.allRegions().map(\.app)).union(try store.visitMonitoringApps())
    } catch {
      DaemonLog.write("stored regions unreadable: \(error)")
      return
    }
    loop.knownApps = apps.union((try? store.apps()) ?? [])
    // No app is connected yet: every "allow once" has ended (a crash or a `kill -9` included).
    for app in (try? store.onceApps()) ?? [] {
      do {
        try persistence.setAuthorization(AuthorizationSnapshot(status: .notDetermined), app: app)
      } catch {
        DaemonLog.write(
          "app \(PeerIdentity.displayable(app)): the end of allow once could not be stored "
            + "(\(error.message)); it ends in memory")
      }
      DaemonLog.write("app \(PeerIdentity.displayable(app)): allow once ended (the daemon started)")
    }
    for app in apps.sorted() { _ = host(for: app) }
  }

  /// The uid an app identifier belongs to: a system daemon's end in `@UID`; a user daemon's are
  /// all its user's.
  /// Why a new region of `app` is refused: its uid's apps together monitor `max-regions-per-uid`
  /// regions (summed over the uid's hosts, each count kept by its engine); nil when it may add.
  func regionsOfUIDAtCap(_ app: String) -> String? {
    let uid = owner(of: app)
    let hosts = shared.withLock { $0.hosts.values.filter { owner(of: $0.app) == uid } }
    let total = hosts.reduce(0) { $0 + $1.hub.regionCount }
    guard total >= configuration.maximumRegionsPerUID else { return nil }
    return "the apps of uid \(uid.map(String.init) ?? "?") monitor \(total) regions together; "
      + "at most \(configuration.maximumRegionsPerUID) (max-regions-per-uid)"
  }

  func owner(of app: String) -> UInt32? {
    guard configuration.system else { return daemonUID }
    return app.split(separator: "@").last.flatMap { UInt32($0) }
  }

  // MARK: Hosts

  private var hubSources: LocationHub.Sources {
    if let pool { return .objects { pool.relays() } }
    return .unavailable(sourcesProblem ?? HubConfiguration.noSourceMessage)
  }

  /// The live host of an app, made (and started) if there is none. I/O thread only.
  func host(for app: String) -> AppHost {
    if let existing = shared.withLock({ $0.hosts[app] }) { return existing }
    let host = AppHost(
      app: app, sources: hubSources, persistence: persistence, store: store,
      // A system daemon never starts programs (its configuration may name none).
      clock: clock, launch: configuration.system ? nil : configuration.app(id: app)?.launch,
      reducer: reducer, maximumRegions: configuration.maximumRegions,
      maximumPendingEvents: configuration.maximumPendingEvents,
      wifiLearning: wifi, publisher: { [weak self] in self?.publisher.withLock { $0 } })
    shared.withLock { $0.hosts[app] = host }
    host.start()
    return host
  }

  func liveHost(_ app: String) -> AppHost? { shared.withLock { $0.hosts[app] } }

  /// Retires a host with no connection and no region (on its hub's executor, after the work the
  /// last connection queued).
  func retireIfIdle(_ host: AppHost) {
    let retire = shared.withLock { shared -> Bool in
      guard !shared.stopping, shared.hosts[host.app] === host, host.markRetiredIfIdle() else {
        return false
      }
      shared.hosts[host.app] = nil
      return true
    }
    if retire { host.retire() }
  }
}
