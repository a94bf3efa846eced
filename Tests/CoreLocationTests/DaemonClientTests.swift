import CoreLocation
import Foundation
import LocationServices
import Synchronization
import TestSupport
import Testing

/// `CLLocationManager` over a `DaemonClient` talking to a fake `locationd` (raw protocol lines on a
/// real Unix socket).
@Suite struct DaemonClientTests {
  /// A connected client, a manager bound to it, and its delegate.
  struct Setup {
    let daemon: FakeDaemon
    let client: DaemonClient
    let scheduler: PumpedScheduler
    let delegate: DaemonDelegate
    let manager: CLLocationManager

    init(welcome: String = FakeDaemon.welcomeLine()) async throws {
      daemon = try FakeDaemon(welcome: welcome)
      // A generous wait for `regionList`: CI's two cores are shared with the whole suite.
      let client = DaemonClient(socketPath: daemon.path, refreshTimeout: 120)
      self.client = client
      // Waited for without holding a thread of the shared cooperative pool.
      #expect(await eventually { client.isConnected })
      (scheduler, delegate, manager) = boundManager(client)
    }

    func until(_ condition: () -> Bool) async -> Bool {
      await eventually(pump: scheduler.pump, condition)
    }

    func stop() {
      client.close()
      daemon.stop()
    }
  }

  /// Issue 15: `purpose` goes to the daemon when it is set, and again first thing after every
  /// welcome (before the requests a reconnection sends again, one of which may make the daemon
  /// ask its agent).
  @Test func thePurposeIsSentAndSentAgainFirstAfterAReconnection() async throws {
    let setup = try await Setup()
    defer { setup.stop() }
    setPurpose(setup.manager, "Shows your boat on the chart")
    #expect(
      await setup.until {
        setup.daemon.messages("purpose").last?["text"] as? String == "Shows your boat on the chart"
      })
    setup.manager.startUpdatingLocation()
    #expect(await setup.until { !setup.daemon.messages("startUpdates").isEmpty })
    setup.daemon.clearReceived()
    setup.daemon.dropConnection()
    #expect(await setup.until { !setup.daemon.messages("startUpdates").isEmpty })
    let types = setup.daemon.received.compactMap { line -> String? in
      let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
      return object?["type"] as? String
    }
    #expect(Array(types.prefix(2)) == ["hello", "purpose"], "\(types)")
  }

  @Test func locationsAndAuthorizationReachTheDelegate() async throws {
    let setup = try await Setup()
    defer { setup.stop() }
    #expect(await setup.until { setup.delegate.contains("authorization 4") })
    #expect(setup.manager.authorizationStatus == .authorizedWhenInUse)
    setup.manager.desiredAccuracy = 100
    setup.manager.startUpdatingLocation()
    #expect(await setup.until { !setup.daemon.messages("startUpdates").isEmpty })
    let register = try #require(setup.daemon.messages("register").first)
    #expect(register["client"] as? Int == 1)
    let start = try #require(setup.daemon.messages("startUpdates").first)
    #expect(start["client"] as? Int == 1)
    #expect((start["request"] as? [String: Any])?["desiredAccuracy"] as? Double == 100)

    setup.daemon.send(
      #"{"type":"locations","client":1,"locations":["#
        + FakeDaemon.fixLine(latitude: 52.25, longitude: 5.5) + "]}")
    #expect(await setup.until { !setup.delegate.locations.withLock { $0.isEmpty } })
    let location = try #require(setup.delegate.locations.withLock { $0.first })
    #expect(location.coordinate.latitude == 52.25)
    #expect(location.coordinate.longitude == 5.5)
    #expect(location.horizontalAccuracy == 5)

    setup.daemon.send(
      #"{"type":"authorization","authorization":{"status":3,"accuracy":0,"servicesEnabled":true}}"#
    )
    #expect(await setup.until { setup.delegate.contains("authorization 3") })
    #expect(setup.manager.authorizationStatus == .authorizedAlways)

    setup.daemon.send(#"{"type":"error","client":1,"code":"denied","message":"no"}"#)
    #expect(await setup.until { setup.delegate.contains("error 1") })
    setup.manager.stopUpdatingLocation()
    #expect(await setup.until { !setup.daemon.messages("stopUpdates").isEmpty })
  }

  @Test func regionsAreMirroredAndAdded() async throws {
    let setup = try await Setup(
      welcome: FakeDaemon.welcomeLine(
        status: 3, regions: [FakeDaemon.regionEntry("home", state: "inside")]))
    defer { setup.stop() }
    #expect(setup.manager.monitoredRegions.map(\.identifier) == ["home"])
    #expect(setup.manager.maximumRegionMonitoringDistance == 1_000_000)

    let work = CLCircularRegion(
      center: CLLocationCoordinate2D(latitude: 52.2, longitude: 5.2), radius: 200,
      identifier: "work")
    setup.manager.startMonitoring(for: work)
    #expect(await setup.until { !setup.daemon.messages("addRegion").isEmpty })
    let add = try #require(setup.daemon.messages("addRegion").first)
    #expect(add["group"] as? String == "manager")
    #expect((add["region"] as? [String: Any])?["radius"] as? Double == 200)
    setup.daemon.send(
      #"{"type":"regionStarted","client":1,"group":"manager","region":{"identifier":"work","#
        + #""latitude":52.2,"longitude":5.2,"radius":200,"hysteresis":5,"notifyOnEntry":true,"#
        + #""notifyOnExit":true}}"#)
    #expect(await setup.until { setup.delegate.contains("start work") })
    #expect(Set(setup.manager.monitoredRegions.map(\.identifier)) == ["home", "work"])

    setup.manager.stopMonitoring(for: work)
    #expect(await setup.until { !setup.daemon.messages("removeRegion").isEmpty })
    #expect(setup.manager.monitoredRegions.map(\.identifier) == ["home"])
  }

  /// Another process of the app changed its regions (`regionsChanged`): the next
  /// `monitoredRegions` asks the daemon (`refreshRegions`) and answers from its `regionList`; no
  /// delegate hears of it (no manager of this process asked). An event naming a region the copy
  /// lacks still reaches the delegate, with the region the event carries.
  @Test func regionChangesByAnotherProcessAreFetchedWhenListed() async throws {
    let setup = try await Setup(
      welcome: FakeDaemon.welcomeLine(
        status: 3, regions: [FakeDaemon.regionEntry("home", state: "inside")]))
    defer { setup.stop() }
    #expect(await setup.until { !setup.daemon.messages("register").isEmpty })
    let work =
      #"{"identifier":"work","latitude":52.2,"longitude":5.2,"radius":200,"hysteresis":5,"#
      + #""notifyOnEntry":true,"notifyOnExit":true}"#
    // Nothing is fetched before the daemon says something changed.
    #expect(setup.manager.monitoredRegions.map(\.identifier) == ["home"])
    #expect(setup.daemon.messages("refreshRegions").isEmpty)

    setup.daemon.send(
      #"{"type":"regionEvents","group":"manager","events":[{"identifier":"work","kind":"enter","#
        + #""state":"inside","date":1767225600,"region":"# + work + "}]}")
    #expect(await setup.until { setup.delegate.contains("enter work") })

    setup.daemon.send(#"{"type":"regionsChanged"}"#)
    // Authorization after it, so the test knows when the client has read it.
    setup.daemon.send(#"{"type":"authorization","authorization":{"status":4}}"#)
    #expect(await setup.until { setup.delegate.contains("authorization 4") })
    // Listing waits for the daemon's answer: on a thread of its own (not one of the few the
    // tests' tasks share), while the test answers.
    let client = setup.client
    let listed = Mutex<Set<String>?>(nil)
    Thread.detachNewThread {
      let identifiers = Set(client.regions(group: "manager").map(\.spec.identifier))
      listed.withLock { $0 = identifiers }
    }
    #expect(await setup.until { !setup.daemon.messages("refreshRegions").isEmpty })
    setup.daemon.send(
      #"{"type":"regionList","regions":[{"group":"manager","state":"outside","region":"# + work
        + "}]}")
    #expect(await setup.until { listed.withLock { $0 } != nil })
    #expect(listed.withLock { $0 } == ["work"])
    #expect(setup.daemon.messages("refreshRegions").count == 1)
    // Current again: listing asks nothing more.
    #expect(setup.manager.monitoredRegions.map(\.identifier) == ["work"])
    #expect(setup.daemon.messages("refreshRegions").count == 1)
    #expect(!setup.delegate.contains("start work"))
  }

  @Test func pendingEventsAreAcknowledgedAndARedeliveryIsDropped() async throws {
    let setup = try await Setup(
      welcome: FakeDaemon.welcomeLine(status: 3, regions: [FakeDaemon.regionEntry("home")]))
    defer { setup.stop() }
    #expect(await setup.until { !setup.daemon.messages("register").isEmpty })
    let enter =
      #"{"type":"regionEvents","group":"manager","events":[{"identifier":"home","kind":"enter","#
      + #""state":"inside","date":1767225600}],"sequence":7}"#
    setup.daemon.send(enter)
    #expect(await setup.until { setup.delegate.contains("enter home") })
    #expect(
      await setup.until { setup.daemon.messages("ack").contains { $0["sequence"] as? Int == 7 } })
    #expect(setup.client.region(identifier: "home", group: "manager")?.state == .inside)

    // The daemon restarts before it stored the acknowledgement: the event comes again.
    setup.daemon.dropConnection()
    #expect(await setup.until { setup.daemon.connections == 2 && setup.client.isConnected })
    setup.daemon.clearReceived()
    setup.daemon.send(enter)
    #expect(
      await setup.until { setup.daemon.messages("ack").contains { $0["sequence"] as? Int == 7 } })
    let exit = enter.replacingOccurrences(of: #""kind":"enter""#, with: #""kind":"exit""#)
      .replacingOccurrences(of: "inside", with: "outside")
      .replacingOccurrences(of: #""sequence":7"#, with: #""sequence":8"#)
    setup.daemon.send(exit)
    #expect(await setup.until { setup.delegate.contains("exit home") })
    #expect(setup.delegate.count("enter home") == 1)
    #expect(
      await setup.until { setup.daemon.messages("ack").contains { $0["sequence"] as? Int == 8 } })
  }

  @Test func eventsForAnAbsentManagerWaitForOne() async throws {
    let daemon = try FakeDaemon(
      welcome: FakeDaemon.welcomeLine(status: 3, regions: [FakeDaemon.regionEntry("home")]))
    defer { daemon.stop() }
    let client = DaemonClient(socketPath: daemon.path)
    defer { client.close() }
    #expect(await eventually { client.isConnected })
    daemon.send(
      #"{"type":"regionEvents","group":"manager","events":[{"identifier":"home","kind":"enter","#
        + #""state":"inside","date":1767225600}],"sequence":3}"#)
    // Nobody to tell yet: not acknowledged.
    // Held: the mirror shows the state before the entry.
    #expect(
      await eventually { client.region(identifier: "home", group: "manager")?.state == .outside })
    #expect(daemon.messages("ack").isEmpty)

    let (scheduler, delegate, manager) = boundManager(client)
    #expect(await eventually(pump: scheduler.pump) { delegate.contains("enter home") })
    #expect(await eventually { daemon.messages("ack").contains { $0["sequence"] as? Int == 3 } })
    withExtendedLifetime(manager) {}
  }

  /// A kept visit waits for a `CLLocationManager`, reaches its delegate once (a redelivery after
  /// a daemon restart is dropped) and is acknowledged; monitoring requests go to the daemon.
  @Test func keptVisitsWaitForAManagerAndAreAcknowledged() async throws {
    let daemon = try FakeDaemon(
      welcome: FakeDaemon.welcomeLine(status: 3, regions: [FakeDaemon.regionEntry("home")]))
    defer { daemon.stop() }
    let client = DaemonClient(socketPath: daemon.path)
    defer { client.close() }
    #expect(await eventually { client.isConnected })
    let visit =
      #"{"type":"visit","visit":{"latitude":52,"longitude":5,"horizontalAccuracy":20,"#
      + #""arrival":null,"departure":1767229200},"sequence":4}"#
    daemon.send(visit)
    daemon.send(
      #"{"type":"regionEvents","group":"manager","events":[{"identifier":"home","kind":"enter","#
        + #""state":"inside","date":1767225600}],"sequence":5}"#)
    // Both held (the region event, sent after the visit, shows in the mirror): nobody to tell,
    // nothing acknowledged.
    #expect(
      await eventually { client.region(identifier: "home", group: "manager")?.state == .outside })
    #expect(daemon.messages("ack").isEmpty)

    let (scheduler, delegate, manager) = boundManager(client)
    #expect(await eventually(pump: scheduler.pump) { delegate.contains("visit - 1767229200.0") })
    #expect(await eventually(pump: scheduler.pump) { delegate.contains("enter home") })
    #expect(await eventually { daemon.messages("ack").contains { $0["sequence"] as? Int == 5 } })
    daemon.send(visit)
    manager.startMonitoringVisits()
    manager.stopMonitoringVisits()
    #expect(await eventually { !daemon.messages("stopVisits").isEmpty })
    scheduler.pump()
    #expect(delegate.count("visit - 1767229200.0") == 1)
    #expect(daemon.messages("startVisits").first?["client"] as? Int == 1)
  }

  @Test func monitorTakesItsConditionsAndHeldEventsFromTheDaemon() async throws {
    let daemon = try FakeDaemon(
      welcome: FakeDaemon.welcomeLine(
        status: 3,
        regions: [FakeDaemon.regionEntry("gate", group: "monitor:Test", state: "outside")]
      ))
    defer { daemon.stop() }
    let client = DaemonClient(socketPath: daemon.path)
    defer { client.close() }
    #expect(await eventually { client.isConnected })
    // A manager (group "manager") does not take the monitor's event.
    let manager = HubEnvironment.$bound.withValue(HubEnvironment(hub: client, scheduler: nil)) {
      CLLocationManager()
    }
    #expect(await eventually { !daemon.messages("register").isEmpty })
    daemon.send(
      #"{"type":"regionEvents","group":"monitor:Test","events":[{"identifier":"gate","#
        + #""kind":"exit","state":"outside","date":1767225600},{"identifier":"gate","#
        + #""kind":"determined","state":"outside","date":1767225600}],"sequence":11}"#)
    #expect(
      await eventually {
        client.region(identifier: "gate", group: "monitor:Test")?.state == .inside
      })
    // The welcome has the state after the held exit; until the exit is handed over, the mirror
    // shows the state before it (so that the monitor sees the change).
    #expect(daemon.messages("ack").isEmpty)

    let monitor = await HubEnvironment.$bound.withValue(
      HubEnvironment(hub: client, scheduler: nil)
    ) { await CLMonitor("Test") }
    #expect(await monitor.identifiers == ["gate"])
    let deadline = Date().addingTimeInterval(10)
    var state = await monitor.record(for: "gate")?.lastEvent.state
    while state != .unsatisfied && Date() < deadline {
      try await Task.sleep(for: .milliseconds(5))
      state = await monitor.record(for: "gate")?.lastEvent.state
    }
    #expect(state == .unsatisfied)
    // The event carries the time of the crossing, not of its delivery.
    #expect(
      await monitor.record(for: "gate")?.lastEvent.date
        == Date(timeIntervalSince1970: 1_767_225_600))
    #expect(await eventually { daemon.messages("ack").contains { $0["sequence"] as? Int == 11 } })
    withExtendedLifetime(manager) {}
  }

  @Test func anAcknowledgementNeverPassesAHeldEvent() async throws {
    let daemon = try FakeDaemon(
      welcome: FakeDaemon.welcomeLine(
        status: 3,
        regions: [
          FakeDaemon.regionEntry("gate", group: "monitor:X", state: "inside"),
          FakeDaemon.regionEntry("home", state: "outside"),
        ]))
    defer { daemon.stop() }
    let client = DaemonClient(socketPath: daemon.path)
    defer { client.close() }
    #expect(await eventually { client.isConnected })
    let (scheduler, delegate, manager) = boundManager(client)
    #expect(await eventually { !daemon.messages("register").isEmpty })
    // 5 waits for a monitor named X; 6 is for the manager, handed over at once but not
    // acknowledged, since acknowledging 6 would make the daemon forget 5.
    daemon.send(
      #"{"type":"regionEvents","group":"monitor:X","events":[{"identifier":"gate","#
        + #""kind":"exit","state":"outside","date":1767225600},{"identifier":"gate","#
        + #""kind":"determined","state":"outside","date":1767225600}],"sequence":5}"#)
    daemon.send(
      #"{"type":"regionEvents","group":"manager","events":[{"identifier":"home","kind":"enter","#
        + #""state":"inside","date":1767225600}],"sequence":6}"#)
    #expect(await eventually(pump: scheduler.pump) { delegate.contains("enter home") })
    #expect(daemon.messages("ack").isEmpty)

    let monitor = await HubEnvironment.$bound.withValue(
      HubEnvironment(hub: client, scheduler: nil)
    ) { await CLMonitor("X") }
    #expect(await eventually { !daemon.messages("ack").isEmpty })
    #expect(daemon.messages("ack").map { $0["sequence"] as? Int } == [6])
    #expect(await monitor.record(for: "gate")?.lastEvent.state == .unsatisfied)
    withExtendedLifetime(manager) {}
  }

  @Test func reconnectsAndResumesAfterTheDaemonGoesAway() async throws {
    let setup = try await Setup()
    defer { setup.stop() }
    setup.manager.startUpdatingLocation()
    #expect(await setup.until { !setup.daemon.messages("startUpdates").isEmpty })
    setup.daemon.clearReceived()
    setup.daemon.dropConnection()
    #expect(await setup.until { setup.delegate.contains("error 0") })  // locationUnknown
    let error = try #require(setup.delegate.errors.withLock { $0.first })
    #expect(error.code == .locationUnknown)

    // Registration and running updates are sent again on the new connection.
    #expect(await setup.until { !setup.daemon.messages("startUpdates").isEmpty })
    #expect(setup.daemon.connections == 2)
    let types = setup.daemon.received.compactMap { line -> String? in
      ["hello", "register", "startUpdates"].first { line.contains(#""type":"\#($0)""#) }
    }
    #expect(types == ["hello", "register", "startUpdates"])
    setup.daemon.send(
      #"{"type":"locations","client":1,"locations":["#
        + FakeDaemon.fixLine(latitude: 10, longitude: 20) + "]}")
    #expect(await setup.until { !setup.delegate.locations.withLock { $0.isEmpty } })
  }

  @Test func headingsThroughTheDaemon() async throws {
    let setup = try await Setup()
    defer { setup.stop() }
    setup.manager.headingFilter = 5
    setup.manager.startUpdatingHeading()
    #expect(await setup.until { !setup.daemon.messages("startHeading").isEmpty })
    let start = try #require(setup.daemon.messages("startHeading").first)
    #expect(start["filter"] as? Double == 5)
    setup.daemon.send(
      #"{"type":"heading","client":1,"heading":{"magneticHeading":42.5,"trueHeading":-1,"#
        + #""accuracy":5,"x":null,"y":null,"z":null,"time":1767225600,"source":"fake://","#
        + #""isSimulated":false,"declination":null,"limitation":{"kind":"locationUpdatesOff"}}}"#)
    #expect(await setup.until { setup.delegate.contains("heading 42.5") })
    setup.manager.stopUpdatingHeading()
    #expect(await setup.until { !setup.daemon.messages("stopHeading").isEmpty })
  }

  @Test func liveUpdatesStreamThroughTheDaemon() async throws {
    let daemon = try FakeDaemon()
    defer { daemon.stop() }
    let client = DaemonClient(socketPath: daemon.path)
    defer { client.close() }
    #expect(await eventually { client.isConnected })
    let updates = HubEnvironment.$bound.withValue(HubEnvironment(hub: client, scheduler: nil)) {
      CLLocationUpdate.liveUpdates()
    }
    var iterator = updates.makeAsyncIterator()
    #expect(await eventually { !daemon.messages("startUpdates").isEmpty })
    daemon.send(
      #"{"type":"locations","client":1,"locations":["#
        + FakeDaemon.fixLine(latitude: -33.5, longitude: 151.25) + "]}")
    let update = await iterator.next()
    #expect(update?.location?.coordinate.latitude == -33.5)
  }
}

/// Choosing between the daemon and embedded mode (`CORELOCATION_DAEMON`).
@Suite struct DaemonSelectionTests {
  @Test(arguments: [
    ([String: String](), false, LiveServiceSelection.Choice.embedded),
    (["CORELOCATION_DAEMON_SOCKET": "/s"], true, .daemon(socketPaths: ["/s"], required: false)),
    (["CORELOCATION_DAEMON_SOCKET": "/s"], false, .embedded),
    (["CORELOCATION_DAEMON_SOCKET": "/s", "CORELOCATION_SOURCE": "static:///g"], true, .embedded),
    (
      [
        "CORELOCATION_DAEMON": "required", "CORELOCATION_DAEMON_SOCKET": "/s",
        "CORELOCATION_SOURCE": "x",
      ],
      true, .daemon(socketPaths: ["/s"], required: true)
    ),
    (["CORELOCATION_DAEMON": "off", "CORELOCATION_DAEMON_SOCKET": "/s"], true, .embedded),
    (
      ["CORELOCATION_DAEMON": "required", "CORELOCATION_DAEMON_SOCKET": "/s"], false,
      .daemon(socketPaths: ["/s"], required: true)
    ),
    (
      ["CORELOCATION_DAEMON": "required", "XDG_RUNTIME_DIR": "/r"], false,
      .daemon(socketPaths: ["/r/locationd/socket", "/run/locationd/socket"], required: true)
    ),
    (
      ["XDG_RUNTIME_DIR": "/r"], true,
      .daemon(socketPaths: ["/r/locationd/socket"], required: false)
    ),
  ])
  func decides(
    environment: [String: String], exists: Bool, expected: LiveServiceSelection.Choice
  ) {
    #expect(LiveServiceSelection.decide(environment: environment) { _ in exists } == expected)
  }

  @Test func systemSocketWhenTheUserOneIsMissing() {
    let choice = LiveServiceSelection.decide(environment: ["XDG_RUNTIME_DIR": "/r"]) {
      $0 == "/run/locationd/socket"
    }
    #expect(choice == .daemon(socketPaths: ["/run/locationd/socket"], required: false))
  }

  /// An embedded stand-in, so that the tests never build the process's real hub.
  static func embedded() -> LocationHub {
    LocationHub(app: "selection", sources: .objects { [] }, persistence: MemoryPersistence())
  }

  @Test func offIgnoresAnExistingSocket() throws {
    let daemon = try FakeDaemon()
    defer { daemon.stop() }
    let hub = Self.embedded()
    let chosen = LiveServiceSelection.choose(
      environment: ["CORELOCATION_DAEMON": "off", "CORELOCATION_DAEMON_SOCKET": daemon.path],
      embedded: { hub })
    #expect(chosen === hub)
    #expect(daemon.connections == 0)
  }

  @Test func autoUsesARunningDaemon() throws {
    let daemon = try FakeDaemon()
    defer { daemon.stop() }
    // A generous wait for the welcome: a loaded CI machine may take longer than the default 5 s.
    let chosen = LiveServiceSelection.choose(
      environment: ["CORELOCATION_DAEMON_SOCKET": daemon.path], timeout: 60,
      embedded: { Self.embedded() })
    let client = try #require(chosen as? DaemonClient)
    defer { client.close() }
    #expect(client.isConnected)
    #expect(client.app == "org.example.Test")
  }

  @Test func autoFallsBackFromAStaleSocket() throws {
    let stale = try FakeDaemon(listen: false)
    defer { stale.stop() }
    let hub = Self.embedded()
    let chosen = LiveServiceSelection.choose(
      environment: ["CORELOCATION_DAEMON_SOCKET": stale.path], embedded: { hub })
    #expect(chosen === hub)
  }

  @Test func aRefusedHelloFallsBackOrIsReported() async throws {
    let refusing = try FakeDaemon(
      welcome: #"{"type":"error","code":"unsupportedVersion","message":"this daemon speaks 2"}"#)
    defer { refusing.stop() }
    let hub = Self.embedded()
    let auto = LiveServiceSelection.choose(
      environment: ["CORELOCATION_DAEMON_SOCKET": refusing.path], embedded: { hub })
    #expect(auto === hub)

    let chosen = LiveServiceSelection.choose(
      environment: [
        "CORELOCATION_DAEMON": "required", "CORELOCATION_DAEMON_SOCKET": refusing.path,
      ],
      embedded: { hub })
    let client = try #require(chosen as? DaemonClient)
    defer { client.close() }
    let (scheduler, delegate, manager) = boundManager(client)
    manager.startUpdatingLocation()
    // Errors from before the refusal (no daemon yet) may come first on a loaded machine.
    let refused = await eventually(pump: scheduler.pump) {
      delegate.errors.withLock { errors in
        errors.contains {
          ($0.userInfo[NSLocalizedDescriptionKey] as? String)?.contains("unsupportedVersion")
            == true
        }
      }
    }
    #expect(refused, "\(delegate.errors.withLock { $0.map(\.userInfo) })")
  }

  @Test func requiredConnectsWhenTheDaemonStartsLater() async throws {
    var template = Array("/tmp/cl-later-XXXXXX".utf8CString)
    let directory = try #require(mkdtemp(&template).map { String(cString: $0) })
    let chosen = LiveServiceSelection.choose(
      environment: [
        "CORELOCATION_DAEMON": "required", "CORELOCATION_DAEMON_SOCKET": directory + "/socket",
      ], timeout: 1, embedded: { Self.embedded() })
    let client = try #require(chosen as? DaemonClient)
    defer { client.close() }
    let (scheduler, delegate, manager) = boundManager(client)
    manager.startUpdatingLocation()
    #expect(await eventually(pump: scheduler.pump) { delegate.contains("error 0") })

    let daemon = try FakeDaemon(socketIn: directory)
    defer { daemon.stop() }
    #expect(await eventually(pump: scheduler.pump) { !daemon.messages("startUpdates").isEmpty })
    #expect(await eventually(pump: scheduler.pump) { delegate.contains("authorization 4") })
    daemon.send(
      #"{"type":"locations","client":1,"locations":["#
        + FakeDaemon.fixLine(latitude: 1, longitude: 2) + "]}")
    #expect(await eventually(pump: scheduler.pump) { !delegate.locations.withLock { $0.isEmpty } })
  }

  @Test func requiredWithoutADaemonReportsTheError() async throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "cl-required-\(UUID().uuidString)")
    let hub = Self.embedded()
    let chosen = LiveServiceSelection.choose(
      environment: [
        "CORELOCATION_DAEMON": "required",
        "CORELOCATION_DAEMON_SOCKET": directory.appendingPathComponent("socket").path,
      ], embedded: { hub })
    let client = try #require(chosen as? DaemonClient)
    defer { client.close() }
    #expect(!client.isConnected)
    let (scheduler, delegate, manager) = boundManager(client)
    manager.startUpdatingLocation()
    #expect(await eventually(pump: scheduler.pump) { delegate.contains("error 0") })
    let error = try #require(delegate.errors.withLock { $0.first })
    #expect(error.code == .locationUnknown)
    let message = error.userInfo[NSLocalizedDescriptionKey] as? String ?? ""
    #expect(message.contains("CORELOCATION_DAEMON=required"), "\(message)")
    #expect(message.contains("not running"), "\(message)")
  }
}
