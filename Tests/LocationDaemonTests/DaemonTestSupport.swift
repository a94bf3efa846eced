import Foundation
import Geodesy
import LocationDaemon
import LocationEngine
import LocationModel
import LocationProtocol
import LocationServices
import LocationSources
import LocationStore
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

/// An in-process daemon on a private socket, its hubs and source pool on a `ManualClock`, with one
/// scripted source the test drives.
final class DaemonFixture {
  let directory: String
  let socketPath: String
  let clock = ManualClock()
  let source = ScriptedSource()
  let store: LocationStore
  let server: DaemonServer
  /// This test process's app identifier (its executable), as the daemon sees it.
  let app = HubConfiguration.executablePath()

  init(
    policy: AuthorizationPolicy = .grant, store: LocationStore? = nil,
    directory: String? = nil, extraSources: [ScriptedSource] = [],
    configure: (inout DaemonConfiguration) -> Void = { _ in }
  ) throws {
    DaemonLog.enabled.store(false, ordering: .relaxed)
    let directory =
      directory ?? NSTemporaryDirectory() + "ld-" + String(UUID().uuidString.prefix(8))
    self.directory = directory
    socketPath = directory + "/run/locationd/socket"
    self.store = try store ?? LocationStore.inMemory()
    var configuration = DaemonConfiguration(
      socketPath: socketPath, storePath: directory + "/store.sqlite")
    configuration.policy = policy
    configure(&configuration)
    server = DaemonServer(
      configuration: configuration, store: self.store, sources: [source] + extraSources,
      clock: clock,
      daemonUID: geteuid(), environment: [:])
    try server.start()
  }

  /// Stops the server and removes the directory.
  func stop() {
    server.stop()
    try? FileManager.default.removeItem(atPath: directory)
  }

  /// A raw connection.
  func connect() throws -> TestPeer { try TestPeer(path: socketPath) }

  /// A connection that said hello in a role and got its welcome.
  func peer(_ role: DaemonRole) throws -> (TestPeer, DaemonWelcome) {
    let peer = try connect()
    peer.send(.hello(version: 1, role: role))
    guard case .welcome(let welcome) = try peer.next() else {
      throw TestFailure("no welcome")
    }
    return (peer, welcome)
  }

  /// An app connection with manager 1 registered.
  func connectApp(register client: Int? = 1) throws -> TestPeer {
    let (peer, _) = try peer(.app)
    if let client {
      peer.send(.register(client: client))
      _ = try peer.sync()
    }
    return peer
  }

  /// Polls the daemon (over a control connection) until a condition on the app list holds.
  func waitForApps(_ condition: ([DaemonAppInfo]) -> Bool) throws -> [DaemonAppInfo] {
    let (control, _) = try peer(.control)
    let deadline = monotonicSeconds() + 10
    var id = 1000
    while monotonicSeconds() < deadline {
      id += 1
      control.send(.apps(id: id))
      if case .reply(id, .apps(let apps)) = try control.next(), condition(apps) { return apps }
    }
    throw TestFailure("the app list never reached the expected state")
  }
}
