import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// `locationd` as a real process against real peers: two apps as two real executables (copies of
/// socat, told apart by `SO_PEERCRED` and `/proc/PID/exe`) speaking protocol v1 by hand, a denied
/// app, and the socket's permissions against another user.
@Suite(.serialized) struct DaemonSecurityTests {
  static let tools = [RealComponents.socat]

  /// Copies socat to `DIR/NAME/socat`: a distinct executable, so a distinct app identity.
  static func app(_ directory: String, _ name: String) throws -> String {
    try FileManager.default.createDirectory(
      atPath: directory + "/" + name, withIntermediateDirectories: true)
    let path = directory + "/" + name + "/socat"
    try FileManager.default.copyItem(atPath: RealComponents.socat, toPath: path)
    return path
  }

  /// A control connection from this test process (it has the daemon's uid).
  static func control(_ directory: String) throws -> SocketChannel {
    let control = try SocketChannel(path: LocationdProcess.socket(directory))
    _ = try control.hello("control")
    return control
  }

  /// Sends a control request and returns its reply (or error) by id.
  static func request(_ control: LineChannel, _ body: String, id: Int) throws -> [String: Any] {
    control.send("{" + body + ",\"id\":\(id)}")
    return try control.waitFor("the answer to control request \(id)") {
      ($0.type == "reply" || $0.type == "error") && $0.int("id") == id
    }.match
  }

  /// The regions the daemon holds for an app, by identifier, through the control role.
  static func regions(_ control: LineChannel, app: String, id: Int) throws -> [String] {
    let reply = try request(
      control, #""type":"regions","app":\#(DaemonE2E.quoted(app))"#, id: id)
    if reply.errorCode == "notFound" { return [] }
    return reply.objects("regions").compactMap { $0.object("region")?.string("identifier") }
  }

  /// Apps A, B, C, D are four copies of socat speaking protocol v1 by hand. B sees none of A's
  /// regions, cannot remove them, stop A's manager, hear its events or use control requests; C,
  /// denied by the user, gets `denied` and no location whatever it asks; D, reduced, never gets a
  /// precise coordinate; a hello's claimed app id is ignored.
  @Test(.enabled(if: DaemonE2E.available(tools: tools), DaemonE2E.missing(tools: tools)))
  func appsAreIsolatedAndADeniedAppReceivesNothing() throws {
    try DaemonE2E.requireComponents(tools: Self.tools)
    let directory = try LocationdProcess.makeDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    try DaemonE2E.writeTrack(directory + "/track.gpx", count: 400, step: 5)
    let daemon = try LocationdProcess(
      LocationdProcess.arguments(
        directory, sources: ["replay://" + directory + "/track.gpx?speed=20&loop=1"]))
    defer { daemon.stop(SIGKILL) }
    let socket = LocationdProcess.socket(directory)
    let pathA = try Self.app(directory, "appA")
    let pathB = try Self.app(directory, "appB")
    let pathC = try Self.app(directory, "appC")
    let control = try Self.control(directory)

    // C is denied by the user before it ever connects.
    let denied = try Self.request(
      control, #""type":"authorize","app":\#(DaemonE2E.quoted(pathC)),"status":"denied""#, id: 1)
    #expect(denied.type == "reply")

    // A: manager 7, a region, updates.
    let appA = try SocatChannel(executable: pathA, socket: socket)
    defer { appA.finish() }
    let welcomeA = try appA.hello("app")
    #expect(welcomeA.string("app") == pathA, "identity from /proc/PID/exe, not a claim")
    appA.send(#"{"type":"register","client":7}"#)
    appA.send(
      #"{"type":"addRegion","client":7,"group":"manager","region":{"identifier":"a-secret","#
        + #""latitude":52.0,"longitude":5.0,"radius":200,"notifyOnEntry":true,"#
        + #""notifyOnExit":true},"initialState":"unknown"}"#)
    appA.send(#"{"type":"startUpdates","client":7,"request":{}}"#)
    try appA.waitFor("A's regionStarted") { $0.type == "regionStarted" && $0.int("client") == 7 }
    try appA.waitFor("A's first location") { $0.type == "locations" && $0.int("client") == 7 }

    // B: its welcome shows none of A's regions; it cannot remove A's region, ask its state, stop
    // A's manager or acknowledge A's events.
    let appB = try SocatChannel(executable: pathB, socket: socket)
    defer { appB.finish() }
    let welcomeB = try appB.hello("app")
    #expect(welcomeB.string("app") == pathB)
    #expect(welcomeB.objects("regions").isEmpty, "B's welcome lists none of A's regions")
    appB.send(#"{"type":"removeRegion","group":"manager","identifier":"a-secret"}"#)
    appB.send(#"{"type":"stopUpdates","client":7}"#)
    let notRegistered = try appB.waitFor("B's notRegistered") { $0.type == "error" }.match
    #expect(notRegistered.errorCode == "notRegistered", "A's manager 7 is not B's")
    appB.send(#"{"type":"ack","sequence":1000000}"#)
    appB.send(#"{"type":"register","client":1}"#)
    appB.send(
      #"{"type":"requestRegionState","client":1,"group":"manager","identifier":"a-secret"}"#)
    // Control requests on an app connection are refused whatever the peer's uid.
    appB.send(
      #"{"type":"authorize","id":5,"app":\#(DaemonE2E.quoted(pathA)),"status":"denied"}"#)
    let forbidden = try appB.waitFor("B's forbidden") { $0.type == "error" && $0.int("id") == 5 }
      .match
    #expect(forbidden.errorCode == "forbidden")
    #expect(forbidden.int("id") == 5)
    appB.send(#"{"type":"startUpdates","client":1,"request":{}}"#)
    try appB.waitFor("B's first location") { $0.type == "locations" && $0.int("client") == 1 }

    // A's region is still there, through the control role and through A itself.
    #expect(try Self.regions(control, app: pathA, id: 2) == ["a-secret"])
    #expect(try Self.regions(control, app: pathB, id: 3).isEmpty)
    appA.send(
      #"{"type":"requestRegionState","client":7,"group":"manager","identifier":"a-secret"}"#)
    let stateA = try appA.waitFor("A's regionState") { $0.type == "regionState" }.match
    #expect(stateA.object("event")?.string("identifier") == "a-secret")
    // A still receives locations after B's attempts (its authorization is unchanged).
    try appA.waitFor("A's location after B's attempts") {
      $0.type == "locations" && $0.int("client") == 7
    }
    let apps = try Self.request(control, #""type":"apps""#, id: 4).objects("apps")
    let statusA = apps.first { $0.string("app") == pathA }?.object("authorization")?.int("status")
    #expect(statusA == 3 || statusA == 4, "A is still authorized")

    // C, denied, speaks the protocol by hand and asks for everything.
    let appC = try SocatChannel(executable: pathC, socket: socket)
    defer { appC.finish() }
    let welcomeC = try appC.hello("app")
    #expect(welcomeC.object("authorization")?.int("status") == 2)
    appC.send(#"{"type":"register","client":1}"#)
    appC.send(#"{"type":"requestAuthorization","always":true}"#)
    appC.send(#"{"type":"startUpdates","client":1,"request":{"desiredAccuracy":-1}}"#)
    appC.send(#"{"type":"requestLocation","client":1,"request":{}}"#)
    appC.send(#"{"type":"startSignificantChanges","client":1}"#)
    appC.send(
      #"{"type":"addRegion","client":1,"group":"manager","region":{"identifier":"c","#
        + #""latitude":52.0,"longitude":5.0,"radius":200},"initialState":"unknown"}"#)
    try appC.waitFor("C's regionFailed") { $0.type == "regionFailed" }
    // While C waits, B keeps receiving fixes: 20 more deliveries bound the time the daemon had.
    var more = 0
    while more < 20 {
      if try appB.next().type == "locations" { more += 1 }
    }
    let toC = appC.received + (try appC.sync())
    #expect(!toC.contains { $0.type == "locations" }, "a denied app receives no location")
    #expect(toC.contains { $0.errorCode == "denied" && $0.int("client") == 1 })
    #expect(!toC.contains { $0.type == "authorization" }, "requestAuthorization does not undo")

    // Nothing A owns ever reached B or C: no manager 7, no region event, no A region.
    for message in appB.received + appC.received {
      #expect(message.int("client") != 7, "\(message)")
      #expect(message.type != "regionEvents", "\(message)")
      let text = String(describing: message)
      if message.type == "regionState" {
        #expect(message.object("event")?.string("state") == "unknown", "\(text)")
      }
      #expect(message.type != "regionStarted" || message.int("client") != 7)
    }
    #expect(
      appA.received.contains { $0.type == "regionEvents" }, "A itself hears its region's events")

    // D, authorized with reduced accuracy, never receives a precise coordinate (nor altitude,
    // speed or course), even for the fixes B receives precisely.
    let pathD = try Self.app(directory, "appD")
    let reduced = try Self.request(
      control,
      #""type":"authorize","app":\#(DaemonE2E.quoted(pathD)),"status":"whenInUse","#
        + #""accuracy":"reduced""#, id: 6)
    #expect(reduced.type == "reply")
    let appD = try SocatChannel(executable: pathD, socket: socket)
    defer { appD.finish() }
    #expect(try appD.hello("app").object("authorization")?.int("accuracy") == 1)
    appD.send(#"{"type":"register","client":1}"#)
    appD.send(#"{"type":"startUpdates","client":1,"request":{"desiredAccuracy":-1}}"#)
    var reducedFixes: [[String: Any]] = []
    while reducedFixes.count < 10 {
      let message = try appD.next()
      if message.type == "locations" { reducedFixes += message.objects("locations") }
    }
    // B's precise fixes of the same instants.
    let lastReduced = reducedFixes.compactMap { $0["time"] as? Double }.max() ?? 0
    try appB.waitFor("B's fixes up to D's last") { message in
      message.type == "locations"
        && message.objects("locations").contains { ($0["time"] as? Double ?? 0) >= lastReduced }
    }
    let precise = Dictionary(
      appB.received.filter { $0.type == "locations" }.flatMap { $0.objects("locations") }
        .compactMap { fix -> (Double, Double)? in
          guard let time = fix["time"] as? Double, let longitude = fix["longitude"] as? Double
          else { return nil }
          return (time, longitude)
        }, uniquingKeysWith: { first, _ in first })
    let compared = reducedFixes.filter { precise[$0["time"] as? Double ?? 0] != nil }.count
    #expect(compared >= 5, "D's fixes compared with B's precise ones: \(compared)")
    for fix in reducedFixes {
      let accuracy = fix["horizontalAccuracy"] as? Double ?? 0
      #expect(accuracy >= 3000, "\(fix)")
      #expect(fix["altitude"] is NSNull, "\(fix)")
      #expect(fix["speed"] as? Double == -1 && fix["course"] as? Double == -1, "\(fix)")
      let latitude = fix["latitude"] as? Double ?? 52
      #expect(abs(latitude - 52) > 1e-9, "a reduced latitude is not the precise one")
      if let time = fix["time"] as? Double, let exact = precise[time] {
        #expect(abs((fix["longitude"] as? Double ?? exact) - exact) > 1e-9)
      }
    }

    // A claim in hello is no identity: C claiming to be A is still C, denied, with no regions.
    let claim = try SocatChannel(executable: pathC, socket: socket)
    defer { claim.finish() }
    claim.send(
      #"{"type":"hello","version":1,"role":"app","app":\#(DaemonE2E.quoted(pathA))}"#)
    let claimed = try claim.next()
    #expect(claimed.type == "welcome")
    #expect(claimed.string("app") == pathC)
    #expect(claimed.objects("regions").isEmpty)
    #expect(claimed.object("authorization")?.int("status") == 2)

    // The same check has teeth: a second connection of A itself is welcomed with A's region.
    let againA = try SocatChannel(executable: pathA, socket: socket)
    defer { againA.finish() }
    let welcomeAgainA = try againA.hello("app")
    #expect(
      welcomeAgainA.objects("regions").compactMap { $0.object("region")?.string("identifier") }
        == ["a-secret"])

    // The control role's rule as implemented: uid 0 or the daemon's uid. A same-user app may open
    // a control connection (a user daemon trusts its user); the checks above hold per connection.
    let sameUser = try SocatChannel(executable: pathB, socket: socket)
    defer { sameUser.finish() }
    let controlWelcome = try sameUser.hello("control")
    #expect(controlWelcome.type == "welcome")
  }

  /// A user daemon's socket directory is 0700 and its socket 0600, both owned by the daemon's
  /// uid; as root, uid 65534 is also refused by the kernel (connect fails with EACCES).
  @Test(.enabled(if: DaemonE2E.available(tools: tools), DaemonE2E.missing(tools: tools)))
  func anotherUserCannotConnectToAUserDaemon() throws {
    try DaemonE2E.requireComponents(tools: Self.tools)
    let directory = try LocationdProcess.makeDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    try "52.0\n5.0\n10\n".write(
      toFile: directory + "/geolocation", atomically: true, encoding: .utf8)
    let daemon = try LocationdProcess(
      LocationdProcess.arguments(directory, sources: ["static://" + directory + "/geolocation"]))
    defer { daemon.stop(SIGKILL) }
    let socket = LocationdProcess.socket(directory)

    var info = stat()
    #expect(stat(directory + "/run/locationd", &info) == 0)
    #expect(
      info.st_mode & 0o777 == 0o700, "socket directory mode \(String(info.st_mode, radix: 8))")
    #expect(info.st_uid == geteuid())
    #expect(stat(socket, &info) == 0)
    #expect(info.st_mode & 0o777 == 0o600, "socket mode \(String(info.st_mode, radix: 8))")
    #expect(info.st_mode & S_IFMT == S_IFSOCK)
    #expect(info.st_uid == geteuid())

    guard geteuid() == 0, FileManager.default.isExecutableFile(atPath: RealComponents.setpriv)
    else {
      // Not root: another uid cannot be taken; the modes above are what the kernel enforces.
      print("DaemonSecurityTests: not root; another user's connection checked by modes only")
      return
    }
    let nobody = [RealComponents.setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]
    // The directory opened up so that only the socket's own modes stand in the way.
    let other = try runProgram(
      RealComponents.setpriv,
      Array(nobody.dropFirst()) + [RealComponents.socat, "-", "UNIX-CONNECT:" + socket],
      input: #"{"type":"hello","version":1,"role":"app"}"# + "\n")
    #expect(other.status != 0, "uid 65534 was served: \(other.stdout)")
    #expect(other.stderr.contains("Permission denied"), "\(other.stderr)")
    #expect(!other.stdout.contains("welcome"))

    chmod(directory + "/run", 0o755)
    chmod(directory + "/run/locationd", 0o755)
    defer { chmod(directory + "/run/locationd", 0o700) }
    let socketOnly = try runProgram(
      RealComponents.setpriv,
      Array(nobody.dropFirst()) + [RealComponents.socat, "-", "UNIX-CONNECT:" + socket],
      input: #"{"type":"hello","version":1,"role":"app"}"# + "\n")
    #expect(socketOnly.status != 0, "uid 65534 was served through a 0600 socket")
    #expect(socketOnly.stderr.contains("Permission denied"), "\(socketOnly.stderr)")
    #expect(!socketOnly.stdout.contains("welcome"))
  }

  /// A system daemon (socket 0666) serves every user as an app, identified by its own uid, and
  /// refuses the control and agent roles to a uid that is neither 0 nor the daemon's (root only).
  @Test(.enabled(if: DaemonE2E.available(tools: tools) && geteuid() == 0))
  func systemDaemonKeepsOtherUsersToTheAppRole() throws {
    try DaemonE2E.requireComponents(tools: Self.tools + [RealComponents.setpriv])
    let directory = try LocationdProcess.makeDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    try "52.0\n5.0\n10\n".write(
      toFile: directory + "/geolocation", atomically: true, encoding: .utf8)
    let daemon = try LocationdProcess(
      LocationdProcess.arguments(
        directory, sources: ["static://" + directory + "/geolocation"], system: true))
    defer { daemon.stop(SIGKILL) }
    let socket = LocationdProcess.socket(directory)
    var info = stat()
    #expect(stat(directory + "/run/locationd", &info) == 0 && info.st_mode & 0o777 == 0o755)
    #expect(stat(socket, &info) == 0 && info.st_mode & 0o777 == 0o666)

    let nobody = ["--reuid=65534", "--regid=65534", "--clear-groups", RealComponents.socat, "-"]
    for role in ["control", "agent"] {
      let refused = try runProgram(
        RealComponents.setpriv, nobody + ["UNIX-CONNECT:" + socket],
        input: #"{"type":"hello","version":1,"role":"\#(role)"}"# + "\n"
          + #"{"type":"authorize","id":1,"app":"x","status":"always"}"# + "\n")
      #expect(refused.stdout.contains(#""code":"forbidden""#), "\(role): \(refused.stdout)")
      #expect(!refused.stdout.contains("welcome"), "\(role): \(refused.stdout)")
    }
    let app = try runProgram(
      RealComponents.setpriv, nobody + ["UNIX-CONNECT:" + socket],
      input: #"{"type":"hello","version":1,"role":"app"}"# + "\n"
        + #"{"type":"apps","id":9}"# + "\n")
    #expect(app.stdout.contains(#""uid":65534"#), "\(app.stdout)")
    #expect(app.stdout.contains(#""code":"forbidden""#), "\(app.stdout)")
    let control = try Self.control(directory)
    let reply = try Self.request(
      control, #""type":"regions","app":\#(DaemonE2E.quoted("x"))"#, id: 1)
    #expect(reply.errorCode == "notFound", "nobody's authorize did not create app x")
  }
}
