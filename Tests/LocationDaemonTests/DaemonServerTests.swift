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
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// The daemon in-process on a private socket, hubs on a `ManualClock`, spoken to with raw lines over
/// real sockets. No sleeps: every wait is a poll on a socket with a deadline, and `ping` is the
/// barrier that says every earlier message has been handled.
@Suite struct DaemonServerTests {
  static let home = RegionSpec(identifier: "home", latitude: 52, longitude: 5, radius: 100)

  // MARK: Handshake

  @Test func helloGetsWelcomeWithTheKernelsIdentity() throws {
    let daemon = try DaemonFixture()
    defer { daemon.stop() }
    let peer = try daemon.connect()
    peer.send(#"{"type":"hello","version":1,"role":"app","app":"org.example.Liar"}"#)
    guard case .welcome(let welcome) = try peer.next() else {
      Issue.record("no welcome")
      return
    }
    #expect(welcome.version == 1)
    #expect(welcome.app == daemon.app, "the claim is ignored; the executable is the identity")
    #expect(welcome.uid == Int(getuid()))
    #expect(welcome.authorization.status == AuthorizationStatus.notDetermined)
    #expect(welcome.regions.isEmpty)
  }

  @Test func socketAndDirectoryAreTheUsersOnly() throws {
    let daemon = try DaemonFixture()
    defer { daemon.stop() }
    let socket = try FileManager.default.attributesOfItem(atPath: daemon.socketPath)
    let directory = try FileManager.default.attributesOfItem(
      atPath: (daemon.socketPath as NSString).deletingLastPathComponent)
    #expect((socket[.posixPermissions] as? Int) == 0o600)
    #expect((directory[.posixPermissions] as? Int) == 0o700)
  }

  @Test func aSecondDaemonOnTheSameSocketIsRefusedAndStopRemovesTheSocket() throws {
    let daemon = try DaemonFixture()
    var configuration = daemon.server.configuration
    configuration.storePath = ":memory:"
    let second = DaemonServer(
      configuration: configuration, store: try LocationStore.inMemory(), sources: [],
      clock: ManualClock(), environment: [:])
    #expect {
      try second.start()
    } throws: { error in
      (error as? DaemonSystemError)?.errno == EADDRINUSE
    }
    daemon.server.stop()
    #expect(!FileManager.default.fileExists(atPath: daemon.socketPath))
    daemon.stop()
  }

  @Test func anotherVersionIsRefusedAndClosed() throws {
    let daemon = try DaemonFixture()
    defer { daemon.stop() }
    let peer = try daemon.connect()
    peer.send(.hello(version: 2, role: .app))
    let messages = try peer.readUntilClosed()
    #expect(messages.map(\.errorCode) == [.unsupportedVersion])
  }

  @Test func messagesBeforeHelloAreOutOfOrder() throws {
    let daemon = try DaemonFixture()
    defer { daemon.stop() }
    let peer = try daemon.connect()
    peer.send(.register(client: 1))
    #expect(try peer.next().errorCode == .outOfOrder)
    peer.send(.hello(version: 1, role: .app))
    guard case .welcome = try peer.next() else {
      Issue.record("no welcome after the strike")
      return
    }
    peer.send(.hello(version: 1, role: .app))
    #expect(try peer.next().errorCode == .outOfOrder)
  }

  // MARK: Misbehaving clients

  /// Malformed, unknown, incomplete and unregistered requests: an error each to the sender only,
  /// the third closes it; another client keeps receiving every fix.
  @Test func badMessagesHurtOnlyTheSender() throws {
    let daemon = try DaemonFixture()
    defer { daemon.stop() }
    let good = try daemon.connectApp()
    good.send(.startUpdates(client: 1, request: UpdateRequest(pausesAutomatically: true)))
    _ = try good.sync()
    let bad = try daemon.connectApp()

    bad.send("{not json")
    #expect(try bad.next().errorCode == .malformed)
    daemon.source.emit(fix(52, 5, time: 1_767_225_601))
    bad.send(#"{"type":"teleport","client":1}"#)
    #expect(try bad.next().errorCode == .unknownType)
    daemon.source.emit(fix(52.001, 5, time: 1_767_225_602))
    bad.send(#"{"type":"startUpdates","client":7}"#)
    let closing = try bad.readUntilClosed()
    #expect(closing.map(\.errorCode) == [.notRegistered])
    daemon.source.emit(fix(52.002, 5, time: 1_767_225_603))

    let received = try good.sync().compactMap(\.fixes).flatMap { $0 }
    #expect(received.map(\.time).suffix(3) == [1_767_225_601, 1_767_225_602, 1_767_225_603])
  }

  @Test func missingFieldsAndControlRequestsFromAnAppAreErrorsWithTheirID() throws {
    let daemon = try DaemonFixture()
    defer { daemon.stop() }
    let peer = try daemon.connectApp()
    peer.send(#"{"type":"addRegion","client":1,"group":"manager"}"#)
    #expect(try peer.next().errorCode == .missingField)
    peer.send(.status(id: 9))
    guard case .error(let error) = try peer.next() else {
      Issue.record("no error")
      return
    }
    #expect(error.code == .forbidden)
    #expect(error.id == 9)
  }

  @Test func anOversizedLineIsRefusedAndClosedWhileOthersContinue() throws {
    let daemon = try DaemonFixture()
    defer { daemon.stop() }
    let good = try daemon.connectApp()
    good.send(.startUpdates(client: 1, request: UpdateRequest(pausesAutomatically: true)))
    _ = try good.sync()
    let bad = try daemon.connectApp()
    bad.sendRaw(Array(repeating: UInt8(ascii: "x"), count: 70_000))
    #expect(try bad.readUntilClosed().map(\.errorCode) == [.tooLarge])
    daemon.source.emit(fix(52, 5, time: 1_767_225_601))
    #expect(try good.sync().compactMap(\.fixes).flatMap { $0 }.last?.time == 1_767_225_601)
  }

  @Test func aConnectionEndingInTheMiddleOfALineIsTold() throws {
    let daemon = try DaemonFixture()
    defer { daemon.stop() }
    let peer = try daemon.connectApp()
    peer.sendRaw(Array(#"{"type":"register","cli"#.utf8))
    peer.shutdownWrite()
    #expect(try peer.readUntilClosed().map(\.errorCode) == [.malformed])
  }

  @Test func managerNumbersAreTheConnectionsOwn() throws {
    let daemon = try DaemonFixture()
    defer { daemon.stop() }
    let first = try daemon.connectApp(register: 1)
    let second = try daemon.connectApp(register: nil)
    second.send(.stopUpdates(client: 1))
    #expect(try second.next().errorCode == .notRegistered)
    first.send(.register(client: 1))
    #expect(try first.next().errorCode == .outOfOrder)
    first.send(.unregister(client: 1))
    first.send(.stopUpdates(client: 1))
    #expect(try first.next().errorCode == .notRegistered)
  }

  // MARK: Authorization

  @Test func aDeniedAppReceivesNothing() throws {
    let daemon = try DaemonFixture()
    defer { daemon.stop() }
    let (control, _) = try daemon.peer(.control)
    control.send(.authorize(id: 1, app: daemon.app, status: .denied, accuracy: .full))
    #expect(try control.next() == .reply(id: 1, .done))

    let peer = try daemon.connect()
    peer.send(.hello(version: 1, role: .app))
    guard case .welcome(let welcome) = try peer.next() else {
      Issue.record("no welcome")
      return
    }
    #expect(welcome.authorization.status == AuthorizationStatus.denied)
    peer.send(.register(client: 1))
    peer.send(.startUpdates(client: 1, request: UpdateRequest(pausesAutomatically: true)))
    peer.send(.requestLocation(client: 1, request: UpdateRequest(pausesAutomatically: true)))
    peer.send(
      .addRegion(client: 1, group: "manager", region: Self.home, initialState: .unknown))
    peer.send(.requestAuthorization(always: true))
    _ = try peer.sync()
    daemon.source.emit(fix(52, 5, time: 1_767_225_601))
    let messages = try peer.sync()
    #expect(messages.allSatisfy { $0.fixes == nil }, "no location, ever")
    #expect(!daemon.source.isRunning, "nothing runs for a denied app")
  }

  @Test func deniedAppGetsDeniedErrorsAndRegionFailures() throws {
    let daemon = try DaemonFixture(policy: .deny)
    defer { daemon.stop() }
    let peer = try daemon.connectApp()
    peer.send(.startUpdates(client: 1, request: UpdateRequest(pausesAutomatically: true)))
    peer.send(
      .addRegion(client: 1, group: "manager", region: Self.home, initialState: .unknown))
    let messages = try peer.sync()
    #expect(messages.contains(.authorization(AuthorizationSnapshot(status: .denied))))
    #expect(messages.contains { $0.errorCode == .denied })
    #expect(
      messages.contains(
        .regionFailed(client: 1, group: "manager", identifier: "home", failure: .denied)))
  }

  @Test func controlChangesReachTheAppAtOnce() throws {
    let daemon = try DaemonFixture()
    defer { daemon.stop() }
    let peer = try daemon.connectApp()
    let (control, _) = try daemon.peer(.control)
    control.send(.authorize(id: 1, app: daemon.app, status: .always, accuracy: .reduced))
    #expect(try control.next() == .reply(id: 1, .done))
    #expect(
      try peer.sync() == [
        .authorization(AuthorizationSnapshot(status: .authorizedAlways, accuracy: .reducedAccuracy))
      ])
    control.send(.services(id: 2, enabled: false))
    #expect(try control.next() == .reply(id: 2, .done))
    #expect(
      try peer.sync() == [
        .authorization(
          AuthorizationSnapshot(
            status: .authorizedAlways, accuracy: .reducedAccuracy, servicesEnabled: false))
      ])
  }

  @Test func reducedAccuracyAppsGetReducedLocationsAndNoRegions() throws {
    let daemon = try DaemonFixture()
    defer { daemon.stop() }
    let (control, _) = try daemon.peer(.control)
    control.send(.authorize(id: 1, app: daemon.app, status: .whenInUse, accuracy: .reduced))
    _ = try control.next()
    let peer = try daemon.connectApp()
    peer.send(.startUpdates(client: 1, request: UpdateRequest(pausesAutomatically: true)))
    peer.send(
      .addRegion(client: 1, group: "manager", region: Self.home, initialState: .unknown))
    var precise = fix(52.123_456, 5.123_456, time: 1_767_225_601)
    precise.altitude = 12
    precise.speed = 3
    _ = try peer.sync()
    daemon.source.emit(precise)
    let messages = try peer.sync()
    let received = messages.compactMap(\.fixes).flatMap { $0 }
    #expect(received.count == 1)
    #expect(received.allSatisfy { $0.horizontalAccuracy >= 3000 && $0.altitude == nil })
    #expect(received.allSatisfy { $0.latitude != precise.latitude })
    #expect(received.allSatisfy { $0.speed < 0 })
  }

  @Test func anAgentDecidesForAnUndecidedAppAndHeldRequestsFollow() throws {
    let daemon = try DaemonFixture(policy: .deny)
    defer { daemon.stop() }
    let (agent, _) = try daemon.peer(.agent)
    let peer = try daemon.connectApp()
    peer.send(.startUpdates(client: 1, request: UpdateRequest(pausesAutomatically: true)))
    guard case .authorizationRequest(let id, let app, let always, _) = try agent.next() else {
      Issue.record("the agent was not asked")
      return
    }
    #expect(app == daemon.app)
    #expect(always == false)
    #expect(
      try peer.sync() == [
        .authorization(AuthorizationSnapshot(status: .notDetermined, requestInProgress: true))
      ], "held while the agent decides; the app only hears that a person is asked")
    agent.send(.authorizationDecision(id: id, status: .whenInUse, accuracy: .full))
    _ = try agent.sync()
    daemon.source.emit(fix(52, 5, time: 1_767_225_601))
    let messages = try peer.sync()
    #expect(messages.first == .authorization(AuthorizationSnapshot(status: .authorizedWhenInUse)))
    #expect(messages.compactMap(\.fixes).flatMap { $0 }.map(\.time) == [1_767_225_601])
    agent.send(.authorizationDecision(id: id, status: .always, accuracy: .full))
    #expect(try agent.next().errorCode == .notFound, "a request is answered once")
  }

  /// Issue 15: an app's `purpose` goes with the question the agent sees and into `apps`; a
  /// purpose that could rewrite the user's terminal (an escape sequence, a bidirectional
  /// override) or is too long is refused and changes nothing.
  @Test func thePurposeGoesToTheAgentAndIntoApps() throws {
    let daemon = try DaemonFixture(policy: .deny) { $0.strikes = 10 }
    defer { daemon.stop() }
    let (agent, _) = try daemon.peer(.agent)
    let peer = try daemon.connectApp()
    let reason = "Shows your boat on the chart"
    peer.send(.purpose(text: reason))
    for hostile in ["\u{1B}[2J deny me", "safe \u{202E}evil", String(repeating: "x", count: 1001)] {
      peer.send(.purpose(text: hostile))
    }
    let errors = try peer.sync().compactMap(\.errorCode)
    #expect(errors == [.malformed, .malformed, .tooLarge])
    peer.send(.requestAuthorization(always: true))
    guard case .authorizationRequest(_, let app, let always, let purpose) = try agent.next() else {
      Issue.record("the agent was not asked")
      return
    }
    #expect(app == daemon.app && always && purpose == reason)
    let apps = try daemon.waitForApps { $0.contains { $0.purpose != nil } }
    #expect(apps.first { $0.app == daemon.app }?.purpose == reason)
    peer.send(.purpose(text: ""))
    #expect(try daemon.waitForApps { $0.allSatisfy { $0.purpose == nil } }.count == 1)
  }

  @Test func withoutAnAgentThePolicyDecidesAndAnAgentLeavingHandsBackToIt() throws {
    let daemon = try DaemonFixture(policy: .grant)
    defer { daemon.stop() }
    let (agent, _) = try daemon.peer(.agent)
    let peer = try daemon.connectApp()
    peer.send(.requestAuthorization(always: false))
    guard case .authorizationRequest = try agent.next() else {
      Issue.record("the agent was not asked")
      return
    }
    agent.shutdownWrite()
    _ = try agent.readUntilClosed()
    #expect(
      try daemon.waitForApps { $0.first?.authorization.status == .authorizedWhenInUse }.count == 1)
    #expect(
      try peer.sync().contains(.authorization(AuthorizationSnapshot(status: .authorizedWhenInUse))))
  }

  /// A user daemon: root and the user's unconfined processes. A system daemon: root and the
  /// control group (primary or supplementary). Never a confined app (F1).
  @Test func whoMayUseTheControlAndAgentRoles() {
    func may(
      confined: Bool = false, uid: UInt32, gid: UInt32 = 100, groups: [UInt32] = [],
      system: Bool, daemonUID: UInt32, group: UInt32? = nil
    ) -> Bool {
      DaemonAccess.mayControl(
        confined: confined, uid: uid, gid: gid, groups: groups, system: system,
        daemonUID: daemonUID, controlGroup: group)
    }
    #expect(may(uid: 0, system: false, daemonUID: 1000))
    #expect(may(uid: 1000, system: false, daemonUID: 1000))
    #expect(!may(uid: 1001, system: false, daemonUID: 1000))
    #expect(!may(confined: true, uid: 1000, system: false, daemonUID: 1000))
    #expect(!may(confined: true, uid: 0, system: true, daemonUID: 0))
    #expect(may(uid: 0, system: true, daemonUID: 0))
    #expect(!may(uid: 1001, system: true, daemonUID: 0))
    #expect(!may(uid: 1001, system: true, daemonUID: 1001), "the system daemon's own uid: no")
    #expect(may(uid: 1001, gid: 990, system: true, daemonUID: 0, group: 990))
    #expect(may(uid: 1001, groups: [27, 990], system: true, daemonUID: 0, group: 990))
    #expect(!may(uid: 1001, groups: [27], system: true, daemonUID: 0, group: 990))
  }

  @Test func controlFromAnotherUIDIsForbidden() throws {
    // The daemon believes it runs as another user: this process is "someone else".
    let directory = NSTemporaryDirectory() + "ld-" + String(UUID().uuidString.prefix(8))
    let store = try LocationStore.inMemory()
    var configuration = DaemonConfiguration(
      socketPath: directory + "/run/locationd/socket", storePath: ":memory:")
    configuration.policy = .grant
    let server = DaemonServer(
      configuration: configuration, store: store, sources: [], clock: ManualClock(),
      daemonUID: geteuid() == 0 ? 4242 : geteuid() + 1, environment: [:])
    try server.start()
    defer {
      server.stop()
      try? FileManager.default.removeItem(atPath: directory)
    }
    guard geteuid() != 0 else { return }  // root may always control
    let peer = try TestPeer(path: configuration.socketPath)
    peer.send(.hello(version: 1, role: .control))
    #expect(try peer.readUntilClosed().map(\.errorCode) == [.forbidden])
  }

  // MARK: Regions while away

  /// Regions of an absent app produce pending events, delivered in order on reconnection with
  /// their sequence; an acknowledged event is not delivered again.
  @Test func pendingRegionEventsAreDeliveredInOrderUntilAcknowledged() throws {
    let daemon = try DaemonFixture()
    defer { daemon.stop() }
    do {
      let peer = try daemon.connectApp()
      peer.send(.addRegion(client: 1, group: "manager", region: Self.home, initialState: .unknown))
      let started = try peer.sync()
      #expect(started.contains(.regionStarted(client: 1, group: "manager", region: Self.home)))
      peer.shutdownWrite()
      _ = try peer.readUntilClosed()
    }
    _ = try daemon.waitForApps { $0.first?.connected == false }
    #expect(daemon.source.isRunning, "the region is watched while the app is away")

    daemon.source.emit(fix(52, 5, time: 1_767_225_601))  // inside: determined
    daemon.source.emit(fix(52.02, 5, time: 1_767_225_602))  // outside: exit + determined
    let apps = try daemon.waitForApps { $0.first?.pendingEvents == 2 }
    #expect(apps.first?.regions == 1)

    func reconnect() throws -> (TestPeer, [DaemonMessage]) {
      let (peer, welcome) = try daemon.peer(.app)
      #expect(welcome.regions.map(\.state) == [.outside])
      return (peer, try peer.sync())
    }

    let (first, delivered) = try reconnect()
    guard delivered.count == 2,
      case .regionEvents("manager", let inside, let firstSequence?) = delivered[0],
      case .regionEvents("manager", let outside, let secondSequence?) = delivered[1]
    else {
      Issue.record("expected two pending deliveries, got \(delivered)")
      return
    }
    #expect(firstSequence < secondSequence)
    #expect(inside.map(\.event.kind) == [.determined(.inside)])
    #expect(outside.map(\.event.kind) == [.exited, .determined(.outside)])
    #expect(inside.first?.date == daemon.clock.now.wall)
    first.send(.ack(sequence: firstSequence))
    _ = try first.sync()
    first.shutdownWrite()
    _ = try first.readUntilClosed()

    let (second, again) = try reconnect()
    #expect(again.count == 1)
    guard case .regionEvents(_, _, let sequence?) = again.first else {
      Issue.record("the unacknowledged event was not delivered again")
      return
    }
    #expect(sequence == secondSequence)
    second.send(.ack(sequence: sequence + 100))  // never beyond what was sent
    _ = try second.sync()
    second.shutdownWrite()
    _ = try second.readUntilClosed()

    let (_, none) = try reconnect()
    #expect(none.isEmpty)
  }

  @Test func anAppWithoutRegionsLeavesNoHubBehind() throws {
    let daemon = try DaemonFixture()
    defer { daemon.stop() }
    let (control, _) = try daemon.peer(.control)
    do {
      let peer = try daemon.connectApp()
      peer.send(.startUpdates(client: 1, request: UpdateRequest(pausesAutomatically: true)))
      _ = try peer.sync()
      #expect(daemon.source.isRunning)
      control.send(.status(id: 1))
      guard case .reply(1, .status(let status)) = try control.next() else {
        Issue.record("no status")
        return
      }
      #expect(status.apps == [daemon.app])
      peer.shutdownWrite()
      _ = try peer.readUntilClosed()
    }
    var id = 1
    while true {
      id += 1
      control.send(.status(id: id))
      guard case .reply(id, .status(let status)) = try control.next() else {
        Issue.record("no status")
        return
      }
      if status.apps.isEmpty { break }
    }
    #expect(!daemon.source.isRunning, "nothing left to run for")
  }

  /// Live region events go once per connection, with the sequence under which they stay kept
  /// until acknowledged (a connection that closes before reading them loses nothing).
  @Test func liveRegionEventsGoOncePerConnectionWithTheirSequence() throws {
    let daemon = try DaemonFixture()
    defer { daemon.stop() }
    let peer = try daemon.connectApp()
    peer.send(.register(client: 2))
    peer.send(.addRegion(client: 1, group: "manager", region: Self.home, initialState: .unknown))
    _ = try peer.sync()
    daemon.source.emit(fix(52, 5, time: 1_767_225_601))
    let messages = try peer.sync()
    let events = messages.filter {
      if case .regionEvents = $0 { return true }
      return false
    }
    #expect(events.count == 1)
    guard case .regionEvents("manager", let list, let sequence?) = events.first else {
      Issue.record("no live event with a sequence")
      return
    }
    #expect(list.map(\.event.kind) == [.determined(.inside)])
    // Kept until acknowledged: a new connection of the app receives it as pending.
    let again = try daemon.connectApp(register: nil)
    let pending = try again.sync().filter {
      if case .regionEvents(_, _, sequence) = $0 { return true }
      return false
    }
    #expect(pending.count == 1)
    peer.send(.ack(sequence: sequence))
    _ = try peer.sync()
    let third = try daemon.connectApp(register: nil)
    #expect(
      try third.sync().allSatisfy {
        if case .regionEvents = $0 { return false }
        return true
      })
  }

  /// Regions belong to the app: when one connection adds or removes regions, the app's other
  /// connections hear `regionsChanged` once, however many regions change, until they ask again
  /// (`refreshRegions`); the answer lists the app's regions as they are.
  @Test func regionChangesReachTheAppsOtherConnectionsOnceUntilTheyAsk() throws {
    let daemon = try DaemonFixture()
    defer { daemon.stop() }
    let first = try daemon.connectApp()
    let second = try daemon.connectApp()
    let changed = { (messages: [DaemonMessage]) in messages.filter { $0 == .regionsChanged } }
    first.send(.addRegion(client: 1, group: "manager", region: Self.home, initialState: .unknown))
    var work = Self.home
    work.identifier = "work"
    first.send(.addRegion(client: 1, group: "manager", region: work, initialState: .unknown))
    let toFirst = try first.sync()
    #expect(toFirst.contains(.regionStarted(client: 1, group: "manager", region: Self.home)))
    #expect(toFirst.contains(.regionStarted(client: 1, group: "manager", region: work)))
    #expect(changed(toFirst).isEmpty)
    #expect(changed(try second.sync()).count == 1)

    second.send(.refreshRegions)
    let listed = try second.sync().compactMap { message -> [String]? in
      guard case .regionList(let entries) = message else { return nil }
      return entries.map(\.region.identifier)
    }
    #expect(listed == [["home", "work"]])

    // Current again: the next change is told once more; the first connection hears nothing.
    first.send(.removeRegion(group: "manager", identifier: Self.home.identifier))
    first.send(.removeRegion(group: "manager", identifier: work.identifier))
    #expect(changed(try first.sync()).isEmpty)
    #expect(changed(try second.sync()).count == 1)
    second.send(.refreshRegions)
    #expect(try second.sync().contains(.regionList([])))
  }

  @Test func controlListsRegionsAndAppsOfOthers() throws {
    let daemon = try DaemonFixture()
    defer { daemon.stop() }
    let peer = try daemon.connectApp()
    peer.send(
      .addRegion(client: 1, group: "monitor:fences", region: Self.home, initialState: .inside))
    _ = try peer.sync()
    let (control, _) = try daemon.peer(.control)
    control.send(.regions(id: 3, app: daemon.app))
    #expect(
      try control.next()
        == .reply(
          id: 3,
          .regions([DaemonRegionEntry(group: "monitor:fences", region: Self.home, state: .inside)]))
    )
    control.send(.regions(id: 4, app: "org.example.Nobody"))
    #expect(try control.next().errorCode == .notFound)
    control.send(.sources(id: 5))
    guard case .reply(5, .sources(let sources)) = try control.next() else {
      Issue.record("no sources reply")
      return
    }
    #expect(sources.map(\.url) == ["scripted://test"])
    #expect(sources.first?.running == true)
    control.send(.status(id: 6))
    guard case .reply(6, .status(let status)) = try control.next() else {
      Issue.record("no status reply")
      return
    }
    #expect(status.apps == [daemon.app])
    #expect(status.clients.filter { $0.role == .app }.map(\.managers) == [1])
  }

  // MARK: Slow clients

  /// A client that does not read loses queued locations but the newest, and never holds up the
  /// others.
  @Test func aSlowClientIsThinnedToTheNewestFixAndOthersGetEverything() throws {
    let daemon = try DaemonFixture { $0.queueLimit = 4096 }
    defer { daemon.stop() }
    let slow = try daemon.connectApp()
    let fast = try daemon.connectApp()
    for peer in [slow, fast] {
      peer.send(.startUpdates(client: 1, request: UpdateRequest(pausesAutomatically: true)))
      _ = try peer.sync()
    }
    let count = 3000
    var fastReceived: [Fix] = []
    for index in 1...count {
      daemon.source.emit(
        fix(52 + Double(index) * 1e-5, 5, time: 1_767_225_600 + Double(index)))
      if index % 100 == 0 { fastReceived += try fast.sync().compactMap(\.fixes).flatMap { $0 } }
    }
    #expect(fastReceived.count == count)
    let slowReceived = try slow.sync().compactMap(\.fixes).flatMap { $0 }
    #expect(slowReceived.count < count)
    #expect(slowReceived.last?.time == 1_767_225_600 + Double(count))
    #expect(zip(slowReceived, slowReceived.dropFirst()).allSatisfy { $0.time < $1.time })
  }

  /// `max-regions-per-uid`: the regions of one uid's apps together are capped, whatever
  /// identities it makes (locbench hostile, F7: 256 identities of 50,000 regions each grew the
  /// daemon past 100 MB). Replacing a region is not a new one.
  @Test func regionsOfOneUIDAreCappedTogether() throws {
    let daemon = try DaemonFixture {
      $0.maximumRegions = 50
      $0.maximumRegionsPerUID = 30
    }
    defer { daemon.stop() }
    let peer = try daemon.connectApp()
    func region(_ index: Int) -> RegionSpec {
      var region = Self.home
      region.identifier = "r\(index)"
      return region
    }
    for index in 0..<31 {
      peer.send(
        .addRegion(client: 1, group: "manager", region: region(index), initialState: .unknown))
      _ = try peer.sync()
    }
    peer.send(.addRegion(client: 1, group: "manager", region: region(3), initialState: .unknown))
    var answers = try peer.sync()
    let failed = answers.compactMap { message -> String? in
      guard case .regionFailed(1, "manager", let identifier, .invalid(let reason)) = message else {
        return nil
      }
      return "\(identifier): \(reason)"
    }
    #expect(failed.isEmpty, "replacing r3 is allowed: \(failed)")
    peer.send(.addRegion(client: 1, group: "manager", region: region(40), initialState: .unknown))
    answers = try peer.sync()
    #expect(
      answers.contains {
        guard case .regionFailed(1, "manager", "r40", .invalid(let reason)) = $0 else {
          return false
        }
        return reason.contains("max-regions-per-uid")
      }, "\(answers)")
  }

  /// The lists of an app's regions (a welcome, a `regionList`) may exceed four times the queue
  /// limit, one at a time: an app with many regions is not disconnected for asking for them. The
  /// app's regions are capped (`max-regions`); replacing one is not a new one.
  @Test func regionListsMayExceedTheQueueLimitAndRegionsAreCapped() throws {
    let daemon = try DaemonFixture {
      $0.queueLimit = 1024
      $0.maximumRegions = 2000
    }
    defer { daemon.stop() }
    let first = try daemon.connectApp()
    func region(_ index: Int) -> RegionSpec {
      var region = Self.home
      region.identifier = "region \(index), named at length so that the list of them is long"
      return region
    }
    // In small batches, read as they go: the answers to a burst would overflow this small queue.
    var answers: [DaemonMessage] = []
    for batch in stride(from: 0, through: 2001, by: 10) {
      for index in batch..<min(batch + 10, 2002) {
        // 2001 is region 0 again: a replacement.
        let spec = region(index == 2001 ? 0 : index)
        first.send(.addRegion(client: 1, group: "manager", region: spec, initialState: .unknown))
      }
      answers += try first.sync()
    }
    let started = answers.filter {
      if case .regionStarted = $0 { return true }
      return false
    }
    #expect(started.count == 2001, "2000 new ones and one replacement")
    let failed = answers.compactMap { message -> String? in
      guard case .regionFailed(1, "manager", let identifier, .invalid(let reason)) = message else {
        return nil
      }
      return "\(identifier): \(reason)"
    }
    #expect(failed.count == 1)
    #expect(failed.first?.hasPrefix(region(2000).identifier) == true)
    #expect(failed.first?.contains("2000") == true, "\(failed)")

    // A new connection reads nothing until its welcome (about 300 KB, more than the socket
    // takes at once) and the answer to a ping are both queued.
    let second = try daemon.connect()
    second.send(.hello(version: DaemonProtocol.version, role: .app))
    second.send(.ping(id: 7))
    func nextMessage() throws -> DaemonMessage {
      guard let line = try second.readLine() else { throw TestFailure("closed") }
      return try DaemonProtocol.decode(line: line, limit: 16 << 20)
    }
    guard case .welcome(let welcome) = try nextMessage() else {
      Issue.record("no welcome")
      return
    }
    #expect(welcome.regions.count == 2000)
    #expect(try nextMessage() == .reply(id: 7, .done))
    // The same for a regionList.
    first.send(.removeRegion(group: "manager", identifier: region(1).identifier))
    _ = try first.sync()
    second.send(.refreshRegions)
    second.send(.ping(id: 8))
    #expect(try nextMessage() == .regionsChanged)
    guard case .regionList(let entries) = try nextMessage() else {
      Issue.record("no regionList")
      return
    }
    #expect(entries.count == 1999)
    #expect(try nextMessage() == .reply(id: 8, .done))
  }

  /// A client that falls more than four times the queue limit behind on deliveries that cannot be
  /// dropped is disconnected; the daemon and its other clients carry on.
  @Test func aClientFarBehindIsDisconnected() throws {
    let daemon = try DaemonFixture { $0.queueLimit = 1024 }
    defer { daemon.stop() }
    let slow = try daemon.connectApp()
    let (control, _) = try daemon.peer(.control)
    var id = 0
    for _ in 0..<40 {
      for _ in 0..<50 {
        id += 1
        control.send(.services(id: id, enabled: id % 2 == 0))
      }
      for _ in 0..<50 { _ = try control.next() }
    }
    let received = try slow.readUntilClosed()
    #expect(received.count < 2000)
    control.send(.status(id: 0))
    guard case .reply(0, .status(let status)) = try control.next() else {
      Issue.record("no status")
      return
    }
    #expect(status.clients.map(\.role) == [.control])
  }

  @Test func onceLastsWhileTheAppIsInUse() throws {
    let daemon = try DaemonFixture(policy: .deny)
    defer { daemon.stop() }
    let (agent, _) = try daemon.peer(.agent)
    do {
      let peer = try daemon.connectApp()
      let other = try daemon.connectApp()
      peer.send(.requestAuthorization(always: false))
      guard case .authorizationRequest(let id, _, _, _) = try agent.next() else {
        Issue.record("the agent was not asked")
        return
      }
      agent.send(.authorizationDecision(id: id, status: .once, accuracy: .full))
      _ = try agent.sync()
      #expect(
        try other.sync() == [
          .authorization(AuthorizationSnapshot(status: .notDetermined, requestInProgress: true)),
          .authorization(AuthorizationSnapshot(status: .authorizedWhenInUse)),
        ])
      peer.shutdownWrite()
      _ = try peer.readUntilClosed()
      #expect(
        try daemon.waitForApps { $0.first?.authorization.status == .authorizedWhenInUse }.count == 1
      )
      other.shutdownWrite()
      _ = try other.readUntilClosed()
    }
    _ = try daemon.waitForApps { $0.first?.authorization.status == .notDetermined }
  }

  /// An app with a launch command is started when a region event is kept for it.
  @Test func anAbsentAppWithALaunchCommandIsStartedForARegionEvent() throws {
    let directory = NSTemporaryDirectory() + "ld-" + String(UUID().uuidString.prefix(8))
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let fifo = directory + "/launched"
    #expect(mkfifo(fifo, 0o600) == 0)
    let executable = HubConfiguration.executablePath()
    let daemon = try DaemonFixture(directory: directory) {
      $0.apps = [
        DaemonConfiguration.App(
          id: "org.example.Tests", executables: [executable],
          launch: "echo \"$CORELOCATION_LAUNCH_REASON\" > '\(fifo)'")
      ]
    }
    defer { daemon.stop() }
    do {
      let (peer, welcome) = try daemon.peer(.app)
      #expect(welcome.app == "org.example.Tests")
      peer.send(.register(client: 1))
      peer.send(.addRegion(client: 1, group: "manager", region: Self.home, initialState: .unknown))
      _ = try peer.sync()
      peer.shutdownWrite()
      _ = try peer.readUntilClosed()
    }
    _ = try daemon.waitForApps { $0.first?.connected == false }
    let reader = open(fifo, O_RDONLY | O_NONBLOCK)
    #expect(reader >= 0)
    defer { close(reader) }
    daemon.source.emit(fix(52, 5, time: 1_767_225_601))
    var descriptor = pollfd(fd: reader, events: Int16(POLLIN), revents: 0)
    // Generous: the daemon starts a process (`/bin/sh`), which a loaded 2-core machine can hold
    // up for seconds.
    #expect(poll(&descriptor, 1, 60_000) == 1, "the launch command ran")
    var bytes = [UInt8](repeating: 0, count: 64)
    let count = read(reader, &bytes, bytes.count)
    #expect(String(decoding: bytes[0..<max(0, count)], as: UTF8.self) == "location\n")
  }
}
