import CoreLocation
import Foundation
import LocationServices
import TestSupport
import Testing

/// `CLLocationManager` against the real `locationd` (the built binary, on a private socket and
/// store, with a simulated NMEA receiver as its source). Missing binary: skipped with the reason,
/// a failure under `CI=true`.
@Suite(
  .enabled(
    if: DaemonE2E.available(),
    Comment(rawValue: BuiltPrograms.missingMessage("locationd")))
)
struct DaemonClientLocationdTests {
  static let here = (latitude: 52.0, longitude: 5.0)
  /// About 1.1 km north of `here`.
  static let there = (latitude: 52.01, longitude: 5.0)

  /// locationd on a private directory (policy `grant`), and its socket.
  struct Daemon {
    let process: LocationdProcess
    let socketPath: String

    init(sources: [String]) throws {
      let directory = try LocationdProcess.makeDirectory()
      socketPath = LocationdProcess.socket(directory)
      process = try LocationdProcess(
        LocationdProcess.arguments(directory, sources: sources), directory: directory)
    }

    /// Stops the daemon (SIGTERM) and removes its files.
    func stop() { process.stop() }

    /// Sends a signal and waits for the daemon to end.
    func kill(_ signal: Int32) { process.kill(signal) }

    /// Starts the daemon again on the same socket and store.
    func restart() throws { try process.restart() }

    /// The daemon's apps, asked over a control connection ([] when it does not answer).
    func apps() -> [[String: Any]] {
      guard let control = try? SocketChannel(path: socketPath),
        (try? control.hello("control")) != nil
      else { return [] }
      control.send(#"{"type":"apps","id":1}"#)
      let reply = try? control.waitFor(timeout: 30, "the apps") {
        $0.type == "reply" || $0["id"] != nil
      }
      return reply?.match.objects("apps") ?? []
    }
  }

  /// A manager on its own connection to the daemon.
  struct App {
    let client: DaemonClient
    let scheduler: PumpedScheduler
    let delegate: DaemonDelegate
    let manager: CLLocationManager

    init(socketPath: String) {
      // The default wait for `regionList` (2 s): `monitoredRegions` blocks its caller, here a
      // thread of the tests' shared pool, and the tests poll it until it holds anyway.
      client = DaemonClient(socketPath: socketPath)
      (scheduler, delegate, manager) = boundManager(client)
    }
  }

  @Test func locationsRegionsAndEventsKeptWhileTheAppIsAway() async throws {
    let feed = try NMEAFeed()
    defer { feed.stop() }
    let daemon = try Daemon(sources: ["nmea+tcp://127.0.0.1:\(feed.port)"])
    defer { daemon.stop() }
    #expect(await eventually { FileManager.default.fileExists(atPath: daemon.socketPath) })

    let first = App(socketPath: daemon.socketPath)
    #expect(await eventually { first.client.isConnected })
    let pumpHere = {
      feed.feed(latitude: Self.here.latitude, longitude: Self.here.longitude)
      first.scheduler.pump()
    }
    first.manager.requestAlwaysAuthorization()
    #expect(await eventually(pump: pumpHere) { first.delegate.contains("authorization 3") })
    #expect(first.manager.authorizationStatus == .authorizedAlways)

    first.manager.startUpdatingLocation()
    #expect(
      await eventually(timeout: 60, pump: pumpHere) {
        !first.delegate.locations.withLock { $0.isEmpty }
      })
    let location = try #require(first.delegate.locations.withLock { $0.last })
    #expect(abs(location.coordinate.latitude - Self.here.latitude) < 1e-6)
    first.manager.stopUpdatingLocation()

    let region = CLCircularRegion(
      center: CLLocationCoordinate2D(
        latitude: Self.there.latitude, longitude: Self.there.longitude),
      radius: 200, identifier: "there")
    first.manager.startMonitoring(for: region)
    #expect(await eventually(pump: pumpHere) { first.delegate.contains("start there") })
    #expect(
      await eventually(timeout: 60, pump: pumpHere) {
        first.client.region(identifier: "there", group: "manager")?.state == .outside
      })

    // The app goes away; the device moves into the region: the event waits in the daemon's store.
    first.client.close()
    let app = try #require(daemon.apps().first?["app"] as? String)
    let pumpThere = {
      feed.feed(latitude: Self.there.latitude, longitude: Self.there.longitude)
    }
    let pending = { daemon.apps().first { $0["app"] as? String == app }?["pendingEvents"] as? Int }
    #expect(await eventually(timeout: 60, interval: 0.05, pump: pumpThere) { (pending() ?? 0) > 0 })

    // The next manager of the app hears it, once, and the daemon forgets it.
    let second = App(socketPath: daemon.socketPath)
    defer { second.client.close() }
    #expect(await eventually { second.client.isConnected })
    #expect(
      await eventually(pump: second.scheduler.pump) { second.delegate.contains("enter there") })
    #expect(await eventually(interval: 0.05) { pending() == 0 })
    #expect(second.delegate.count("enter there") == 1)
    #expect(second.manager.monitoredRegions.map(\.identifier) == ["there"])
  }

  /// Two processes of one app (two connections of this process): regions one adds or removes are
  /// in the other's `monitoredRegions`, fetched when it looks.
  @Test func regionsAddedByAnotherProcessOfTheAppAreListed() async throws {
    let daemon = try Daemon(sources: [])
    defer { daemon.stop() }
    #expect(await eventually { FileManager.default.fileExists(atPath: daemon.socketPath) })
    let first = App(socketPath: daemon.socketPath)
    defer { first.client.close() }
    let second = App(socketPath: daemon.socketPath)
    defer { second.client.close() }
    #expect(await eventually { first.client.isConnected })
    #expect(await eventually { second.client.isConnected })
    #expect(second.manager.monitoredRegions.isEmpty)

    first.manager.requestAlwaysAuthorization()
    #expect(
      await eventually(pump: first.scheduler.pump) { first.delegate.contains("authorization 3") })
    for name in ["a", "b"] {
      first.manager.startMonitoring(
        for: CLCircularRegion(
          center: CLLocationCoordinate2D(latitude: Self.here.latitude, longitude: 5.1),
          radius: 100, identifier: name))
    }
    #expect(
      await eventually(pump: first.scheduler.pump) {
        first.delegate.contains("start a") && first.delegate.contains("start b")
      })
    #expect(
      await eventually { Set(second.manager.monitoredRegions.map(\.identifier)) == ["a", "b"] })
    #expect(!second.delegate.contains("start a"))

    first.manager.stopMonitoring(
      for: CLCircularRegion(
        center: CLLocationCoordinate2D(latitude: Self.here.latitude, longitude: 5.1), radius: 100,
        identifier: "a"))
    #expect(await eventually { second.manager.monitoredRegions.map(\.identifier) == ["b"] })
    #expect(first.manager.monitoredRegions.map(\.identifier) == ["b"])
  }

  @Test func updatesResumeAfterTheDaemonIsKilledAndRestarted() async throws {
    let feed = try NMEAFeed()
    defer { feed.stop() }
    let daemon = try Daemon(sources: ["nmea+tcp://127.0.0.1:\(feed.port)"])
    defer { daemon.stop() }
    #expect(await eventually { FileManager.default.fileExists(atPath: daemon.socketPath) })
    let app = App(socketPath: daemon.socketPath)
    defer { app.client.close() }
    #expect(await eventually { app.client.isConnected })
    let pump = {
      feed.feed(latitude: Self.here.latitude, longitude: Self.here.longitude)
      app.scheduler.pump()
    }
    app.manager.startUpdatingLocation()
    #expect(
      await eventually(timeout: 60, pump: pump) { !app.delegate.locations.withLock { $0.isEmpty } })

    daemon.kill(SIGKILL)
    #expect(await eventually(pump: pump) { app.delegate.contains("error 0") })  // locationUnknown
    let message = app.delegate.errors.withLock { $0.last }?.userInfo[NSLocalizedDescriptionKey]
    #expect((message as? String)?.contains("locationd") == true)

    // A stale socket file is left behind by kill -9; the new daemon replaces it.
    try daemon.restart()
    #expect(await eventually(timeout: 60, pump: pump) { app.client.isConnected })
    app.delegate.locations.withLock { $0.removeAll() }
    #expect(
      await eventually(timeout: 60, pump: pump) { !app.delegate.locations.withLock { $0.isEmpty } })
    #expect(app.manager.authorizationStatus == .authorizedWhenInUse)
  }
}
