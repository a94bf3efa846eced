import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// `locationd` as a real process under faults: abusive clients beside a well-behaved one,
/// `kill -9` during region evaluation and during an authorization change, and a source that dies
/// and returns under many clients.
@Suite(.serialized) struct DaemonFaultTests {
  /// The fix times of the `locations` deliveries of manager `client`.
  static func fixTimes(_ messages: [[String: Any]], client: Int = 1) -> [Double] {
    messages.filter { $0.type == "locations" && $0.int("client") == client }
      .flatMap { $0.objects("locations") }
      .compactMap { ($0["time"] as? NSNumber)?.doubleValue }
  }

  /// An app connection from this test process with manager 1 registered.
  static func app(_ directory: String) throws -> (SocketChannel, [String: Any]) {
    let peer = try SocketChannel(path: LocationdProcess.socket(directory))
    let welcome = try peer.hello("app")
    peer.send(#"{"type":"register","client":1}"#)
    return (peer, welcome)
  }

  // MARK: 3. Malformed, oversized, truncated and out-of-order messages

  /// An observer streams a replay (one fix per track second); meanwhile other connections send
  /// out-of-order, malformed, oversized, truncated, wrong-version and random messages, and a
  /// streaming client turns abusive. Each gets its errors and is closed by the strikes rule (at
  /// once for an oversized line); the observer's fixes have no gap and no error.
  @Test(.enabled(if: DaemonE2E.available(), DaemonE2E.missing()))
  func abusiveClientsGetErrorsWhileAnotherKeepsItsFixes() throws {
    try DaemonE2E.requireComponents()
    let directory = try LocationdProcess.makeDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    try DaemonE2E.writeTrack(directory + "/track.gpx", count: 3000, step: 5)
    let daemon = try LocationdProcess(
      LocationdProcess.arguments(
        directory, sources: ["replay://" + directory + "/track.gpx?speed=50"]))
    defer { daemon.stop(SIGKILL) }
    let socket = LocationdProcess.socket(directory)

    let (observer, _) = try Self.app(directory)
    observer.send(#"{"type":"startUpdates","client":1,"request":{}}"#)
    try observer.waitFor("the observer's first fix") { $0.type == "locations" }

    func expectCodes(_ peer: SocketChannel, _ codes: [String], closed: Bool, _ what: String) throws
    {
      var got: [String] = []
      let deadline = monotonicSeconds() + 15
      while got.count < codes.count,
        let message = try peer.nextOrEnd(timeout: deadline - monotonicSeconds())
      {
        if let code = message.errorCode { got.append(code) }
      }
      #expect(got == codes, "\(what)")
      if closed {
        let rest = try peer.readUntilClosed()
        #expect(rest.allSatisfy { $0.type != "locations" }, "\(what): \(rest)")
      }
    }

    // Out of order before hello, malformed JSON, an unknown type: three strikes, closed.
    let first = try SocketChannel(path: socket)
    first.send(#"{"type":"register","client":1}"#)
    first.send(#"{"type":"register","client":"#)
    first.send(#"{"type":"frobnicate","client":1}"#)
    try expectCodes(first, ["protocol", "malformed", "unknownType"], closed: true, "strikes")

    // A missing field, a manager never registered, a second hello: closed at the third.
    let second = try SocketChannel(path: socket)
    _ = try second.hello("app")
    second.send(#"{"type":"startUpdates","request":{}}"#)
    second.send(#"{"type":"stopUpdates","client":9}"#)
    second.send(#"{"type":"hello","version":1,"role":"app"}"#)
    try expectCodes(
      second, ["missingField", "notRegistered", "protocol"], closed: true, "out of order")

    // A message only the daemon sends, a bad group, invalid UTF-8 with a NUL byte.
    let third = try SocketChannel(path: socket)
    _ = try third.hello("app")
    third.send(#"{"type":"welcome","version":1,"authorization":{"status":4}}"#)
    third.send(
      #"{"type":"addRegion","client":1,"group":"other","region":{"identifier":"x","#
        + #""latitude":52,"longitude":5,"radius":10}}"#)
    third.sendRaw([0x7B, 0xFF, 0xFE, 0x00, 0x22, 0x7D, 0x0A])
    try expectCodes(third, ["protocol", "malformed", "malformed"], closed: true, "bad contents")

    // A line over 64 KiB: tooLarge and closed at once.
    let large = try SocketChannel(path: socket)
    _ = try large.hello("app")
    large.send(
      #"{"type":"register","client":1,"pad":""# + String(repeating: "x", count: 70_000) + "\"}")
    try expectCodes(large, ["tooLarge"], closed: true, "oversized")

    // A connection that ends in the middle of a line: malformed.
    let truncated = try SocketChannel(path: socket)
    _ = try truncated.hello("app")
    truncated.sendRaw(Array(#"{"type":"register","cli"#.utf8))
    truncated.shutdownWrite()
    try expectCodes(truncated, ["malformed"], closed: true, "truncated")

    // An unknown version: refused and closed.
    let version = try SocketChannel(path: socket)
    version.send(#"{"type":"hello","version":2,"role":"app"}"#)
    try expectCodes(version, ["unsupportedVersion"], closed: true, "version")

    // A streaming client of the same app that turns abusive: disconnected, its manager gone.
    let turncoat = try SocketChannel(path: socket)
    _ = try turncoat.hello("app")
    turncoat.send(#"{"type":"register","client":1}"#)
    turncoat.send(#"{"type":"startUpdates","client":1,"request":{}}"#)
    try turncoat.waitFor("the turncoat's first fix") { $0.type == "locations" }
    for _ in 0..<3 { turncoat.send("[]") }
    try expectCodes(turncoat, ["malformed", "malformed", "malformed"], closed: true, "turncoat")

    // Sixteen connections send 128 KiB of seeded random bytes each (half after a hello): each
    // is closed, with errors, and the daemon lives.
    var generator = SplitMix64(seed: 0x5EC0_12E5)
    for index in 0..<16 {
      let noise = try SocketChannel(path: socket)
      if index % 2 == 1 { _ = try noise.hello("app") }
      var bytes = [UInt8]()
      while bytes.count < 131_072 {
        let word = generator.next()
        for shift in stride(from: 0, to: 64, by: 8) {
          bytes.append(UInt8(truncatingIfNeeded: word >> shift))
        }
        if word % 7 == 0 { bytes.append(0x0A) }
      }
      noise.sendRaw(bytes)
      let answers = try noise.readUntilClosed()
      #expect(answers.contains { $0.type == "error" }, "noise \(index)")
      #expect(!answers.contains { $0.type == "locations" }, "noise \(index)")
    }
    #expect(daemon.isRunning)

    // The observer: every fix of the replay, one second apart in the track, none missing.
    var times = Self.fixTimes(observer.received)
    let deadline = monotonicSeconds() + 30
    let target = times.count + 50
    while times.count < target, monotonicSeconds() < deadline {
      _ = try observer.next()
      times = Self.fixTimes(observer.received)
    }
    #expect(times.count >= target)
    let gaps = zip(times, times.dropFirst()).filter { abs($1 - $0 - 1) > 1e-6 }
    #expect(gaps.isEmpty, "gaps in the observer's fixes: \(gaps.prefix(5))")
    #expect(!observer.received.contains { $0.type == "error" }, "\(observer.received.prefix(3))")
    #expect(daemon.isRunning)
  }

  // MARK: 4. kill -9 during region evaluation

  /// What the app was told about one region, replayed to find what no correct daemon would
  /// send: an entry while inside, an exit while not inside, a determination that contradicts
  /// the crossing just before it.
  struct RegionHistory {
    var state = "unknown"
    var lastKind: String?
    var violations: [String] = []

    mutating func apply(_ event: [String: Any], at place: String) {
      let kind = event.string("kind") ?? ""
      let next = event.string("state") ?? ""
      switch kind {
      case "enter":
        if state == "inside" { violations.append("\(place): enter while inside") }
      case "exit":
        if state != "inside" { violations.append("\(place): exit while \(state)") }
      case "determined":
        if lastKind == "enter", next != "inside" {
          violations.append("\(place): enter then determined \(next)")
        }
        if lastKind == "exit", next != "outside" {
          violations.append("\(place): exit then determined \(next)")
        }
        if lastKind != "enter", lastKind != "exit", state != "unknown", next != state {
          violations.append("\(place): \(state) became \(next) without a crossing")
        }
        state = next
      default:
        violations.append("\(place): unknown kind \(kind)")
      }
      lastKind = kind
    }
  }

  /// Right after a kill, before a restart: the store's region states against the last
  /// determination the app was told (live) or will be told (every stored pending event).
  static func storeDisagreements(
    store: String, live: [[String: Any]], label: String
  ) throws -> [String] {
    var told = live
    for row in try DaemonE2E.rows(store, "SELECT sequence, payload FROM events ORDER BY sequence") {
      guard let payload = row.string("payload"),
        let message = try JSONSerialization.jsonObject(with: Data(payload.utf8)) as? [String: Any]
      else { continue }
      told.append(message)
    }
    var last: [String: String] = [:]
    for message in told {
      for event in message.objects("events") where event.string("kind") == "determined" {
        last[event.string("identifier") ?? "?"] = event.string("state")
      }
    }
    let names = ["unknown", "inside", "outside"]
    var result: [String] = []
    for row in try DaemonE2E.rows(store, "SELECT identifier, state FROM regions") {
      let identifier = row.string("identifier") ?? "?"
      let number = row.int("state") ?? -1
      let stored = names.indices.contains(number) ? names[number] : "state \(number)"
      let lastTold = last[identifier] ?? "unknown"
      if stored != lastTold {
        result.append("\(label): \(identifier) stored \(stored), last event \(lastTold)")
      }
    }
    return result
  }

  /// Connects as this test process's app, has the user authorize it `always` (control role),
  /// and adds `count` circles of radius 30 m centred on the track every 200 m.
  static func appWithRegions(_ directory: String, count: Int, step: Double) throws
    -> SocketChannel
  {
    let (app, welcome) = try Self.app(directory)
    let appID = try #require(welcome.string("app"))
    let control = try SocketChannel(path: LocationdProcess.socket(directory))
    _ = try control.hello("control")
    control.send(
      #"{"type":"authorize","id":1,"app":\#(DaemonE2E.quoted(appID)),"status":"always"}"#)
    try control.waitFor("the authorize reply") { $0.type == "reply" }
    try app.waitFor("the app's authorization") { $0.type == "authorization" }
    for index in 0..<count {
      let longitude = 5.0 + Double(20 * index + 10) * step * DaemonE2E.degreesPerMetreEast
      app.send(
        #"{"type":"addRegion","client":1,"group":"manager","region":{"identifier":"r\#(index)","#
          + #""latitude":52.0,"longitude":\#(longitude),"radius":30},"initialState":"unknown"}"#)
    }
    var started = 0
    while started < count {
      let message = try app.next()
      if message.type == "regionStarted" { started += 1 }
      #expect(message.type != "regionFailed", "\(message)")
    }
    return app
  }

  /// Replays what the app was told, region by region (each history lists its impossible steps).
  static func histories(_ told: [[String: Any]]) -> [String: RegionHistory] {
    var histories: [String: RegionHistory] = [:]
    for (position, message) in told.enumerated() {
      for event in message.objects("events") {
        let identifier = event.string("identifier") ?? "?"
        let origin = message.int("sequence").map { "pending \($0)" } ?? "live"
        let place = "message \(position) (\(origin)) \(identifier)"
        histories[identifier, default: RegionHistory()].apply(event, at: place)
      }
    }
    return histories
  }

  /// The app comes and goes while its regions are evaluated (no kill): 200 times it connects,
  /// takes its pending events (and acknowledges them), hears a live one, and leaves. Every
  /// crossing must reach it once, live or pending. (Found a loss once: an event racing the
  /// disconnection was queued on the closing connection and never kept; region events now stay
  /// pending until acknowledged.)
  @Test(
    .enabled(if: DaemonE2E.available(), DaemonE2E.missing()))
  func regionEventsRacingDisconnectionsAreNotLost() throws {
    try DaemonE2E.requireComponents()
    let directory = try LocationdProcess.makeDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let step = 10.0
    try DaemonE2E.writeTrack(directory + "/track.gpx", count: 4000, step: step)
    let daemon = try LocationdProcess(
      LocationdProcess.arguments(
        directory, sources: ["replay://" + directory + "/track.gpx?speed=1000&loop=1"]))
    defer { daemon.stop(SIGKILL) }
    let first = try Self.appWithRegions(directory, count: 200, step: step)
    first.shutdownWrite()
    _ = try first.readUntilClosed()
    var told = first.received.filter { $0.type == "regionEvents" }
    for _ in 0..<200 {
      let peer = try SocketChannel(path: LocationdProcess.socket(directory))
      _ = try peer.hello("app")
      let pending = try peer.sync().compactMap { $0.int("sequence") }
      if let highest = pending.max() { peer.send(#"{"type":"ack","sequence":\#(highest)}"#) }
      // One live batch (after the sync): it carries a sequence too, and stays pending until
      // acknowledged, so leaving without an ack hands it to the next connection again.
      var live = 0
      while live < 1 {
        let message = try peer.next()
        if message.type == "regionEvents" { live += 1 }
      }
      peer.shutdownWrite()
      _ = try peer.readUntilClosed()
      told += peer.received.filter { $0.type == "regionEvents" }
    }
    // A client drops a sequence it has seen (as `DaemonClient` does).
    var seen: Set<Int> = []
    told = told.filter { message in
      guard let sequence = message.int("sequence") else { return true }
      return seen.insert(sequence).inserted
    }
    let violations = Self.histories(told).values.flatMap(\.violations)
    #expect(told.count >= 200)
    #expect(violations.isEmpty, "\(violations.count) impossible: \(violations.prefix(5))")
  }

  /// 200 circles of radius 30 m, 200 m apart, centred on a track played at 200 times real time;
  /// the app leaves, and the daemon is killed with SIGKILL whenever the store holds N pending
  /// events (N growing), then restarted. At the end (with a source that yields nothing) the app
  /// reconnects: every region is there, each region's state agrees with the last event the app
  /// was told for it, every event sequence the app hears is a possible one (no lost or doubled
  /// crossing), pending sequences come in order and once; after an ack, none come again.
  ///
  /// Records an issue for everything but the agreement of states and events, which it returns
  /// (empty when every state change came with its event and none came twice).
  static func killNineDuringRegionEvaluation(killPoints: [Int]) throws -> [String] {
    let directory = try LocationdProcess.makeDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let step = 10.0
    try DaemonE2E.writeTrack(directory + "/track.gpx", count: 4000, step: step)
    let replay = ["replay://" + directory + "/track.gpx?speed=200"]
    let store = directory + "/store.sqlite"
    let regionCount = 200
    var daemon = try LocationdProcess(LocationdProcess.arguments(directory, sources: replay))

    // The app: authorized always by the user, 200 regions, then it leaves.
    let app = try Self.appWithRegions(directory, count: regionCount, step: step)
    app.shutdownWrite()
    _ = try app.readUntilClosed()
    // Everything the app was told, in order: live events, then pending ones.
    var told: [[String: Any]] = app.received.filter { $0.type == "regionEvents" }
    let live = told
    var afterKills: [String] = []

    for point in killPoints {
      let deadline = monotonicSeconds() + 60
      var pending = 0
      while pending < point {
        guard monotonicSeconds() < deadline else {
          Issue.record("the store never held \(point) pending events (it holds \(pending))")
          return []
        }
        pending = Int(try DaemonE2E.query(store, "SELECT count(*) FROM events")) ?? 0
      }
      #expect(daemon.stop(SIGKILL) == SIGKILL)
      afterKills += try Self.storeDisagreements(
        store: store, live: live, label: "kill at \(pending) pending")
      daemon = try LocationdProcess(LocationdProcess.arguments(directory, sources: replay))
    }
    #expect(daemon.stop(SIGKILL) == SIGKILL)
    afterKills += try Self.storeDisagreements(store: store, live: live, label: "last kill")
    // A source that never yields a fix: nothing changes while the app looks.
    daemon = try LocationdProcess(
      LocationdProcess.arguments(directory, sources: ["nmea+tcp://127.0.0.1:1"]))
    defer { daemon.stop(SIGKILL) }

    let storedRegions = try DaemonE2E.query(store, "SELECT count(*) FROM regions")
    #expect(storedRegions == String(regionCount))
    let again = try SocketChannel(path: LocationdProcess.socket(directory))
    let welcomeAgain = try again.hello("app")
    let pending = try again.sync().filter { $0.type == "regionEvents" }
    let sequences = pending.compactMap { $0.int("sequence") }
    #expect(sequences.count == pending.count, "every pending event has a sequence")
    #expect(sequences == sequences.sorted() && Set(sequences).count == sequences.count)
    let storedSequences = try DaemonE2E.query(
      store, "SELECT sequence FROM events ORDER BY sequence"
    )
    .split(separator: "\n").compactMap { Int($0) }
    #expect(storedSequences == sequences, "the pending events are the stored ones, in order")
    // Live events carry sequences too and stay pending until acknowledged: a client drops the
    // ones it has seen (as `DaemonClient` does).
    let seenLive = Set(told.compactMap { $0.int("sequence") })
    told += pending.filter { message in
      message.int("sequence").map { !seenLive.contains($0) } ?? true
    }

    let histories = Self.histories(told)
    let regions = welcomeAgain.objects("regions")
    #expect(regions.count == regionCount, "every region is still there")
    var disagreements: [String] = []
    for entry in regions {
      let identifier = entry.object("region")?.string("identifier") ?? "?"
      let state = entry.string("state") ?? "?"
      let last = histories[identifier]?.state ?? "unknown"
      if state != last { disagreements.append("\(identifier): stored \(state), last told \(last)") }
    }
    let violations = histories.values.flatMap(\.violations)
    #expect(told.count > killPoints.count, "the regions were evaluated")

    // Acknowledged, they never come again.
    if let highest = sequences.last {
      again.send(#"{"type":"ack","sequence":\#(highest)}"#)
    }
    _ = try again.sync()
    again.shutdownWrite()
    _ = try again.readUntilClosed()
    let last = try SocketChannel(path: LocationdProcess.socket(directory))
    _ = try last.hello("app")
    #expect(try last.sync().filter { $0.type == "regionEvents" }.isEmpty)
    #expect(try DaemonE2E.query(store, "SELECT count(*) FROM events") == "0")
    return afterKills.map { "right after kill -9: \($0)" }
      + disagreements.map { "after the restart: \($0)" }
      + violations.map { "impossible sequence: \($0)" }
  }

  /// Every region, its pending events in order and exactly once, nothing after the ack: these
  /// hold today, whatever the kill points.
  @Test(
    .enabled(
      if: DaemonE2E.available(tools: [RealComponents.sqlite3]),
      DaemonE2E.missing(tools: [RealComponents.sqlite3])),
    arguments: [[4, 12, 24, 40, 60, 80]])
  func killNineDuringRegionEvaluationKeepsRegionsAndPendingEvents(killPoints: [Int]) throws {
    try DaemonE2E.requireComponents(tools: [RealComponents.sqlite3])
    _ = try Self.killNineDuringRegionEvaluation(killPoints: killPoints)
  }

  @Test(
    .enabled(
      if: DaemonE2E.available(tools: [RealComponents.sqlite3]),
      DaemonE2E.missing(tools: [RealComponents.sqlite3])),
    arguments: [[4, 10, 18, 28, 40, 52, 64, 76, 88, 100]])
  func killNineDuringRegionEvaluationLosesAndDoublesNothing(killPoints: [Int]) throws {
    try DaemonE2E.requireComponents(tools: [RealComponents.sqlite3])
    let problems = try Self.killNineDuringRegionEvaluation(killPoints: killPoints)
    #expect(problems.isEmpty, "\(problems.count) problems: \(problems.prefix(8))")
  }

  // MARK: 4b. kill -9 during an authorization change

  /// The user changes a connected app's authorization through the control role and the daemon
  /// is killed at once, then restarted, ten times. Returns what went wrong: a stored status that
  /// is neither the old nor the new one, an app told of a change that the store then lacks, a
  /// welcome that disagrees with the store, and (with `waitForReply`) a change the daemon
  /// acknowledged (`reply`) but lost.
  static func authorizationRounds(waitForReply: Bool) throws -> [String] {
    let directory = try LocationdProcess.makeDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    try "52.0\n5.0\n10\n".write(
      toFile: directory + "/geolocation", atomically: true, encoding: .utf8)
    let arguments = LocationdProcess.arguments(
      directory, sources: ["static://" + directory + "/geolocation"], policy: "deny")
    let settings: [(wire: String, status: Int)] = [
      ("always", 3), ("denied", 2), ("whenInUse", 4), ("always", 3), ("denied", 2),
      ("whenInUse", 4), ("always", 3), ("denied", 2), ("whenInUse", 4), ("always", 3),
    ]
    var known = 0
    var problems: [String] = []
    for (round, setting) in settings.enumerated() {
      let daemon = try LocationdProcess(arguments)
      let (app, welcome) = try Self.app(directory)
      let appID = welcome.string("app") ?? ""
      let before = welcome.object("authorization")?.int("status") ?? -1
      if before != known { problems.append("round \(round): welcome \(before), stored \(known)") }
      _ = try app.sync()
      let control = try SocketChannel(path: LocationdProcess.socket(directory))
      _ = try control.hello("control")
      control.send(
        #"{"type":"authorize","id":1,"app":\#(DaemonE2E.quoted(appID)),"#
          + #""status":"\#(setting.wire)"}"#)
      if waitForReply { try control.waitFor("the authorize reply") { $0.type == "reply" } }
      daemon.stop(SIGKILL)
      let toldApp = try app.readUntilClosed().filter { $0.type == "authorization" }
        .compactMap { $0.object("authorization")?.int("status") }
      let rows = try DaemonE2E.rows(
        directory + "/store.sqlite", "SELECT app, status FROM authorization")
      let stored = rows.first { $0.string("app") == appID }?.int("status") ?? 0
      if stored != before && stored != setting.status {
        problems.append("round \(round): stored \(stored), neither \(before) nor \(setting.status)")
      }
      if toldApp.contains(setting.status), stored != setting.status {
        problems.append("round \(round): the app was told \(setting.status), the store lost it")
      }
      if waitForReply, stored != setting.status {
        problems.append(
          "round \(round): the reply said done, but after kill -9 the store holds \(stored), "
            + "not \(setting.status)")
      }
      known = stored
    }
    let daemon = try LocationdProcess(arguments)
    defer { daemon.stop(SIGKILL) }
    let (_, welcome) = try Self.app(directory)
    let last = welcome.object("authorization")?.int("status") ?? -1
    if last != known { problems.append("after the rounds: welcome \(last), stored \(known)") }
    return problems
  }

  /// Killed before the reply is read: the change is applied fully or not at all, and the app is
  /// told only what the store keeps.
  @Test(
    .enabled(
      if: DaemonE2E.available(tools: [RealComponents.sqlite3]),
      DaemonE2E.missing(tools: [RealComponents.sqlite3])))
  func killNineDuringAnAuthorizationChangeAppliesAllOrNothing() throws {
    try DaemonE2E.requireComponents(tools: [RealComponents.sqlite3])
    let problems = try Self.authorizationRounds(waitForReply: false)
    #expect(problems.isEmpty, "\(problems)")
  }

  /// Killed right after the reply: the change the daemon acknowledged survives.
  @Test(
    .enabled(
      if: DaemonE2E.available(tools: [RealComponents.sqlite3]),
      DaemonE2E.missing(tools: [RealComponents.sqlite3])))
  func killNineRightAfterAnAcknowledgedAuthorizationKeepsIt() throws {
    try DaemonE2E.requireComponents(tools: [RealComponents.sqlite3])
    let problems = try Self.authorizationRounds(waitForReply: true)
    #expect(problems.isEmpty, "\(problems)")
  }

  // MARK: 5. A source dying and returning under many clients

  /// 48 connections of this test process and two more apps (copies of socat) stream from one
  /// `nmea+tcp://` source served by the test. The server hangs up: every client hears
  /// `locationUnknown`, none is disconnected, the daemon keeps running. With `flapping`, the
  /// server then accepts three reconnections and hangs up on each at once (one outage: no
  /// client hears a second error). The server serves again and every client receives fixes.
  @Test(.enabled(if: DaemonE2E.available(), DaemonE2E.missing()), arguments: [false, true])
  func aSourceDyingAndReturningUnderFiftyClients(flapping: Bool) throws {
    try DaemonE2E.requireComponents()
    let directory = try LocationdProcess.makeDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let feed = try NMEAFeed()
    let daemon = try LocationdProcess(
      LocationdProcess.arguments(directory, sources: ["nmea+tcp://127.0.0.1:\(feed.port)"]))
    defer { daemon.stop(SIGKILL) }

    var clients: [LineChannel] = []
    for _ in 0..<48 {
      let (peer, _) = try Self.app(directory)
      peer.send(#"{"type":"startUpdates","client":1,"request":{}}"#)
      clients.append(peer)
    }
    // Two more apps, when socat is there: the pool's fan-out reaches every app's hub.
    if FileManager.default.isExecutableFile(atPath: RealComponents.socat) {
      for name in ["appA", "appB"] {
        try FileManager.default.createDirectory(
          atPath: directory + "/" + name, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
          atPath: RealComponents.socat, toPath: directory + "/" + name + "/socat")
        let peer = try SocatChannel(
          executable: directory + "/" + name + "/socat", socket: LocationdProcess.socket(directory))
        _ = try peer.hello("app")
        peer.send(#"{"type":"register","client":1}"#)
        peer.send(#"{"type":"startUpdates","client":1,"request":{}}"#)
        clients.append(peer)
      }
    }
    for client in clients { _ = try client.sync() }
    defer {
      for case let client as SocatChannel in clients { client.finish() }
    }

    try feed.accept()
    feed.sendEpoch()
    feed.sendEpoch()
    for (index, client) in clients.enumerated() {
      try client.waitFor("client \(index)'s first fix") { $0.type == "locations" }
    }

    // The feed dies: every client hears locationUnknown; nobody is disconnected.
    feed.hangUp()
    for (index, client) in clients.enumerated() {
      let (match, _) = try client.waitFor("client \(index)'s locationUnknown") {
        $0.type == "error"
      }
      #expect(match.errorCode == "locationUnknown", "client \(index): \(match)")
    }
    #expect(daemon.isRunning)

    // It returns: the source reconnects by itself, and every client gets fixes again.
    if flapping {
      for _ in 0..<3 {
        try feed.accept(timeout: 60)
        feed.hangUp()
      }
    }
    try feed.accept(timeout: 60)
    feed.sendEpoch()
    feed.sendEpoch()
    for (index, client) in clients.enumerated() {
      let (_, before) = try client.waitFor("client \(index)'s fix after the outage") {
        $0.type == "locations"
      }
      #expect(before.allSatisfy { $0.type != "error" }, "client \(index): \(before)")
    }
    let control = try SocketChannel(path: LocationdProcess.socket(directory))
    _ = try control.hello("control")
    control.send(#"{"type":"status","id":1}"#)
    let status = try control.waitFor("status") { $0.type == "reply" }.match
    let connected = status.object("status")?.objects("clients").filter {
      $0.string("role") == "app"
    }
    #expect(connected?.count == clients.count, "every client is still connected")
    #expect(daemon.isRunning)
  }

  // MARK: A launched app inherits nothing

  /// An app with a launch command leaves with a region; the device crosses it, and the daemon
  /// starts the command, which lists its own descriptors: only standard input, output and error
  /// (and the one `ls` opens to read the list). The daemon's socket, its clients' connections, its
  /// store and its sources are all close-on-exec.
  @Test(.enabled(if: DaemonE2E.available(), DaemonE2E.missing()))
  func aLaunchedAppInheritsNoDescriptorOfTheDaemon() throws {
    try DaemonE2E.requireComponents()
    let directory = try LocationdProcess.makeDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let step = 10.0
    try DaemonE2E.writeTrack(directory + "/track.gpx", count: 4000, step: step)
    let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
    let listing = directory + "/descriptors"
    try """
    [app org.example.Launched]
    executable = \(executable)
    launch = ls -l /proc/self/fd > \(listing).part && mv \(listing).part \(listing)
    """.write(toFile: directory + "/conf", atomically: true, encoding: .utf8)
    let daemon = try LocationdProcess(
      LocationdProcess.arguments(
        directory, sources: ["replay://" + directory + "/track.gpx?speed=1000&loop=1"]))
    defer { daemon.stop(SIGKILL) }
    let app = try Self.appWithRegions(directory, count: 20, step: step)
    // Other connections stay open while the command runs: none of them may leak into it.
    let observer = try SocketChannel(path: LocationdProcess.socket(directory))
    _ = try observer.hello("control")
    app.shutdownWrite()
    _ = try app.readUntilClosed()

    let exit = try daemon.waitForLog("launch command (pid")
    #expect(exit.hasSuffix("exited with status 0"), "\(exit)")
    let text = try String(contentsOfFile: listing, encoding: .utf8)
    // `ls -l` lines end "NUMBER -> TARGET".
    let descriptors = text.split(separator: "\n").compactMap { line -> (Int, String)? in
      let words = line.split(separator: " ")
      guard let arrow = words.firstIndex(of: "->"), arrow > 0, let number = Int(words[arrow - 1])
      else { return nil }
      return (number, words[(arrow + 1)...].joined(separator: " "))
    }
    #expect(descriptors.contains { $0.0 == 1 })
    let inherited = descriptors.filter { $0.0 > 3 }.map { "\($0.0) -> \($0.1)" }
    #expect(inherited.isEmpty, "inherited: \(inherited)")
  }
}
