import Foundation
import LocationModel
import LocationProtocol
import LocationServices
import LocationStore
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Issue 14's holes in authorization, caps and kept events, against the real `locationd` (F3 to
/// F10; the identity attacks are `DaemonTrustTests`). Each failed against the daemon before the
/// fixes (`CORELOCATION_TEST_LOCATIOND` names another build; the caps' tests fail there at once,
/// on their configuration keys).
@Suite(.serialized) struct DaemonAttackTests {
  /// This test process's app identifier, as the daemon sees it.
  static let app = HubConfiguration.executablePath()

  static func start(
    _ directory: String, config: String = "", policy: String? = "deny",
    program: String? = nil, programArguments: [String] = []
  ) throws -> LocationdProcess {
    try config.write(toFile: directory + "/conf", atomically: true, encoding: .utf8)
    chmod(directory + "/conf", 0o600)
    let arguments = LocationdProcess.arguments(
      directory, sources: ["static:///nonexistent"], policy: policy)
    return try LocationdProcess(programArguments + arguments, program: program)
  }

  static func connect(_ directory: String) throws -> SocketChannel {
    try SocketChannel(path: LocationdProcess.socket(directory))
  }

  static func region(_ identifier: String) -> String {
    #"{"type":"addRegion","client":1,"group":"manager","region":{"identifier":"\#(identifier)","#
      + #""latitude":52,"longitude":5,"radius":200}}"#
  }

  /// The peak resident memory of a process, kB (`VmHWM`).
  static func peakMemory(_ pid: Int32) -> Int? {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
    else { return nil }
    let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }
    return line.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") }
  }

  /// Keeps a batch of region events for this test process's app, as the daemon keeps them.
  static func keep(
    _ directory: String, events: Int, status: AuthorizationStatus,
    regionState: RegionState = .inside
  ) throws {
    let store = try LocationStore(path: LocationdProcess.store(directory))
    let time = Date().timeIntervalSince1970
    try store.setAuthorization(
      StoredAuthorization(status: status, accuracy: .fullAccuracy, updated: time), app: app)
    try store.upsertRegion(
      StoredRegion(
        app: app, group: "manager", identifier: "home", latitude: 52, longitude: 5, radius: 200,
        hysteresis: 5, notifyOnEntry: true, notifyOnExit: true, state: regionState.rawValue))
    let batch = (0..<events).map { index in
      DaemonRegionEvent(
        RegionEvent(
          identifier: "region number \(index) of a long batch", kind: .entered,
          notifyOnEntry: true, notifyOnExit: true), date: time)
    }
    let line = DaemonProtocol.encode(.regionEvents(group: "manager", events: batch, sequence: nil))
    _ = try store.appendEvent(
      PendingEvent(
        app: app, kind: "regionEvents", payload: String(decoding: line.dropLast(), as: UTF8.self),
        time: time))
  }

  // MARK: F3: approximate answers

  /// The app asks while the agent decides, then adds regions; the agent answers "approximate":
  /// the held requests run against that answer, so no region is monitored.
  @Test(.enabled(if: DaemonE2E.available(), DaemonE2E.missing()))
  func heldRequestsFollowTheAgentsApproximateAnswer() throws {
    try DaemonE2E.requireComponents()
    let directory = try LocationdProcess.makeDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let daemon = try Self.start(directory)
    defer { daemon.stop(SIGKILL) }
    let agent = try Self.connect(directory)
    _ = try agent.hello("agent")
    let app = try Self.connect(directory)
    _ = try app.hello("app")
    app.send(#"{"type":"register","client":1}"#)
    for name in ["a", "b", "c"] { app.send(Self.region(name)) }
    let request = try agent.waitFor("the question") { $0.type == "authorizationRequest" }.match
    let id = try #require(request.int("id"))
    agent.send(
      #"{"type":"authorizationDecision","id":\#(id),"status":"whenInUse","accuracy":"reduced"}"#)
    // The three held requests run once the answer is in (a ping is never held, so wait for
    // their answers rather than for a ping's).
    var answers: [[String: Any]] = []
    while answers.count < 3 {
      let message = try app.next()
      if message.type == "regionFailed" || message.type == "regionStarted" {
        answers.append(message)
      }
    }
    #expect(answers.allSatisfy { $0.type == "regionFailed" }, "\(answers)")
  }

  // MARK: F4: allow once

  @Test(.enabled(if: DaemonE2E.available(), DaemonE2E.missing()))
  func allowOnceEndsWhenTheDaemonStarts() throws {
    try DaemonE2E.requireComponents()
    let directory = try LocationdProcess.makeDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    var daemon = try Self.start(directory)
    let agent = try Self.connect(directory)
    _ = try agent.hello("agent")
    let app = try Self.connect(directory)
    _ = try app.hello("app")
    app.send(#"{"type":"requestAuthorization","always":false}"#)
    let request = try agent.waitFor("the question") { $0.type == "authorizationRequest" }.match
    let id = try #require(request.int("id"))
    agent.send(
      #"{"type":"authorizationDecision","id":\#(id),"status":"once","accuracy":"full"}"#)
    // (An authorization with requestInProgress came first, while the agent was asked.)
    let told = try app.waitFor("the decision") {
      $0.type == "authorization" && $0.object("authorization")?.int("status") != 0
    }.match
    #expect(told.object("authorization")?.int("status") == 4)
    #expect(daemon.kill(SIGKILL) == SIGKILL)
    daemon = try Self.start(directory)
    defer { daemon.stop(SIGKILL) }
    let again = try Self.connect(directory)
    let welcome = try again.hello("app")
    #expect(welcome.object("authorization")?.int("status") == 0, "\(welcome)")
  }

  // MARK: F5: descriptors

  /// Idle connections: a uid's beyond `max-connections-per-uid` get `tooMany`, and those that say
  /// no `hello` are closed after `hello-timeout`.
  @Test(.enabled(if: DaemonE2E.available(), DaemonE2E.missing()))
  func idleConnectionsAreCappedAndClosed() throws {
    try DaemonE2E.requireComponents()
    let directory = try LocationdProcess.makeDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let daemon = try Self.start(
      directory, config: "max-connections-per-uid = 20\nhello-timeout = 1\n")
    defer { daemon.stop(SIGKILL) }
    let idle = try (0..<20).map { _ in try Self.connect(directory) }
    let extra = try Self.connect(directory)
    #expect(try extra.next().errorCode == "tooMany")
    for connection in idle {
      let closing = try connection.readUntilClosed()
      #expect(closing.first?.errorCode == "protocol", "\(closing)")
    }
    // The uid may connect again once its idle connections are gone.
    #expect(try Self.connect(directory).hello("app").type == "welcome")
  }

  /// With few descriptors (`prlimit`), a flood of idle connections makes `accept` fail with
  /// `EMFILE`: the daemon pauses accepting instead of spinning and logging each failure, and
  /// serves again once the idle connections are closed.
  @Test(
    .enabled(
      if: DaemonE2E.available(tools: ["/usr/bin/prlimit"]),
      DaemonE2E.missing(tools: ["/usr/bin/prlimit"])))
  func runningOutOfDescriptorsDoesNotSpin() throws {
    try DaemonE2E.requireComponents(tools: ["/usr/bin/prlimit"])
    let locationd = try #require(BuiltPrograms.locationd)
    let directory = try LocationdProcess.makeDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let daemon = try Self.start(
      directory, config: "max-connections-per-uid = 1000\nhello-timeout = 2\n",
      program: "/usr/bin/prlimit", programArguments: ["--nofile=48:48", locationd])
    defer { daemon.stop(SIGKILL) }
    let idle = try (0..<150).map { _ in try Self.connect(directory) }
    _ = try daemon.waitForLog("not accepting for a moment", timeout: 60)
    for connection in idle { connection.shutdownWrite() }
    // Once the idle connections are closed (by their hello timeout), an app is served.
    var served = false
    let deadline = monotonicSeconds() + 60
    while !served, monotonicSeconds() < deadline {
      guard let channel = try? Self.connect(directory) else { continue }
      served = (try? channel.hello("app"))?.type == "welcome"
    }
    #expect(served)
    let failures = daemon.log.filter { $0.contains("accept") }
    #expect(failures.count < 20, "\(failures.count) accept failures logged")
  }

  // MARK: F6: memory

  /// A peer that sends 200,000 pings and never reads: its queue is counted as allocated and
  /// closed at four times the limit, and the daemon's memory stays bounded.
  @Test(.enabled(if: DaemonE2E.available(), DaemonE2E.missing()))
  func aPeerThatNeverReadsIsClosedWithBoundedMemory() throws {
    try DaemonE2E.requireComponents()
    let directory = try LocationdProcess.makeDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let daemon = try Self.start(directory, config: "queue-limit = 1048576\n")
    defer { daemon.stop(SIGKILL) }
    let before = try #require(Self.peakMemory(daemon.pid))
    let flood = try Self.connect(directory)
    _ = try flood.hello("app")
    var lines = ""
    for id in 0..<200_000 { lines += #"{"type":"ping","id":\#(id)}"# + "\n" }
    flood.send(String(lines.dropLast()))
    _ = try daemon.waitForLog("too slow; disconnected", timeout: 60)
    let after = try #require(Self.peakMemory(daemon.pid))
    #expect(after - before < 24_000, "peak grew by \(after - before) kB")
    let honest = try Self.connect(directory)
    #expect(try honest.hello("app").type == "welcome")
  }

  /// While the agent decides, at most `max-held-requests` requests of the app wait; more get
  /// `tooMany`, and the strikes close the connection.
  @Test(.enabled(if: DaemonE2E.available(), DaemonE2E.missing()))
  func heldRequestsAreCapped() throws {
    try DaemonE2E.requireComponents()
    let directory = try LocationdProcess.makeDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let daemon = try Self.start(directory, config: "max-held-requests = 10\n")
    defer { daemon.stop(SIGKILL) }
    let agent = try Self.connect(directory)
    _ = try agent.hello("agent")
    let app = try Self.connect(directory)
    _ = try app.hello("app")
    app.send(#"{"type":"register","client":1}"#)
    for index in 0..<40 { app.send(Self.region("r\(index)")) }
    _ = try agent.waitFor("the question") { $0.type == "authorizationRequest" }
    let told = try app.readUntilClosed()
    #expect(told.contains { $0.errorCode == "tooMany" }, "\(told)")
  }

  // MARK: F7: identities

  @Test(
    .enabled(
      if: DaemonE2E.available(tools: [RealComponents.socat]),
      DaemonE2E.missing(tools: [RealComponents.socat])))
  func newIdentitiesAreCappedPerUID() throws {
    try DaemonE2E.requireComponents(tools: [RealComponents.socat])
    let directory = try LocationdProcess.makeDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let daemon = try Self.start(directory, config: "max-apps-per-uid = 3\n")
    defer { daemon.stop(SIGKILL) }
    var answers: [String] = []
    for index in 0..<5 {
      let copy = directory + "/renamed-\(index)"
      try FileManager.default.copyItem(atPath: RealComponents.socat, toPath: copy)
      let channel = try SocatChannel(executable: copy, socket: LocationdProcess.socket(directory))
      defer { channel.finish() }
      channel.send(#"{"type":"hello","version":1,"role":"app"}"#)
      let answer = try channel.next()
      answers.append(answer.errorCode ?? answer.type)
    }
    #expect(answers == ["welcome", "welcome", "welcome", "tooMany", "tooMany"])
  }

  // MARK: F8: kept events

  /// A kept batch longer than a peer's line limit is still the daemon's own record: delivered,
  /// not logged unreadable and acknowledged unseen.
  @Test(.enabled(if: DaemonE2E.available(), DaemonE2E.missing()))
  func aKeptBatchOverSixtyFourKiBIsDelivered() throws {
    try DaemonE2E.requireComponents()
    let directory = try LocationdProcess.makeDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    try Self.keep(directory, events: 1_000, status: .authorizedAlways)
    let daemon = try Self.start(directory)
    defer { daemon.stop(SIGKILL) }
    let app = try Self.connect(directory)
    _ = try app.hello("app")
    let told = try app.sync()
    let batch = try #require(told.first { $0.type == "regionEvents" })
    #expect(batch.objects("events").count == 1_000)
    #expect(batch.int("sequence") != nil)
  }

  // MARK: F9: headings

  /// A denied app asks for headings while a compass reports: it receives none, and the compass
  /// (an NMEA source whose HDG sentences the feed sends) is not started for it.
  @Test(.enabled(if: DaemonE2E.available(), DaemonE2E.missing()))
  func aDeniedAppGetsNoHeadingAndStartsNoCompass() throws {
    try DaemonE2E.requireComponents()
    let feed = try NMEAFeed()
    defer { feed.stop() }
    let directory = try LocationdProcess.makeDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    try "".write(toFile: directory + "/conf", atomically: true, encoding: .utf8)
    chmod(directory + "/conf", 0o600)
    let daemon = try LocationdProcess(
      LocationdProcess.arguments(
        directory, sources: ["nmea+tcp://127.0.0.1:\(feed.port)"], policy: "deny"))
    defer { daemon.stop(SIGKILL) }
    let control = try Self.connect(directory)
    _ = try control.hello("control")
    control.send(
      #"{"type":"authorize","id":1,"app":\#(DaemonE2E.quoted(Self.app)),"status":"denied"}"#)
    _ = try control.waitFor("the authorize reply") { $0.type == "reply" }
    let app = try Self.connect(directory)
    _ = try app.hello("app")
    app.send(#"{"type":"register","client":1}"#)
    app.send(#"{"type":"startHeading","client":1,"filter":-1,"orientation":1}"#)
    _ = try app.sync()
    // The source would connect to the feed if the compass were wanted; feed what would come.
    if (try? feed.accept(timeout: 2)) != nil {
      for _ in 0..<20 {
        feed.sendEpoch()
        feed.sendSentence("HCHDG,101.5,,,1.3,E")
      }
    }
    let told = try app.sync()
    #expect(!told.contains { $0.type == "heading" }, "\(told)")
    control.send(#"{"type":"sources","id":2}"#)
    let sources = try control.waitFor("the sources") { $0.type == "reply" }.match
    #expect(sources.objects("sources").allSatisfy { $0["running"] as? Bool != true }, "\(sources)")
  }

  // MARK: F10: a denied app's welcome

  @Test(.enabled(if: DaemonE2E.available(), DaemonE2E.missing()))
  func aDeniedAppIsWelcomedWithoutStatesOrKeptEvents() throws {
    try DaemonE2E.requireComponents()
    let directory = try LocationdProcess.makeDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    try Self.keep(directory, events: 1, status: .denied, regionState: .inside)
    let daemon = try Self.start(directory)
    defer { daemon.stop(SIGKILL) }
    let app = try Self.connect(directory)
    let welcome = try app.hello("app")
    let regions = welcome.objects("regions")
    #expect(regions.map { $0.object("region")?.string("identifier") } == ["home"])
    #expect(regions.map { $0.string("state") } == ["unknown"], "\(regions)")
    #expect(!(try app.sync()).contains { $0.type == "regionEvents" })
  }
}
