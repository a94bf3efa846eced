import Foundation
import LocationControl
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// `locationctl` run in-process against a fake daemon speaking raw protocol lines.
@Suite struct LocationControlCommandTests {
  /// Runs `arguments` against a fake daemon that welcomes, reads one request and sends `reply`.
  func run(_ arguments: [String], reply: String) throws -> (
    status: Int32, output: String, error: String, sent: [String]
  ) {
    let daemon = try FakeDaemon { peer in
      guard peer.readLine() != nil else { return }
      peer.send(FakeDaemon.controlWelcome)
      guard peer.readLine() != nil else { return }
      peer.send(reply)
    }
    let captured = Captured()
    let status = LocationControlCommand.run(
      arguments: arguments + ["--socket", daemon.path], environment: [:], io: captured.io())
    let sent = daemon.finish()
    return (status, captured.output, captured.error, sent)
  }

  static let statusReply =
    #"{"type":"reply","id":1,"status":{"sources":[{"url":"gpsd://127.0.0.1:2947","running":true,"#
    + #""power":"high","onSeconds":12.5,"users":2,"failure":null},{"url":"static:///etc/geolocation","#
    + #""running":false,"power":"low","onSeconds":0,"users":0,"failure":"no such file"}],"#
    + #""clients":[{"app":"org.example.Maps","pid":4242,"uid":1000,"managers":2,"role":"app"},"#
    + #"{"app":"","pid":99,"uid":1000,"managers":0,"role":"control"}],"#
    + #""apps":["org.example.Maps","/usr/bin/tracker"],"servicesEnabled":true}}"#

  static let appsReply =
    #"{"type":"reply","id":1,"apps":[{"app":"org.example.Maps","authorization":{"status":4,"#
    + #""accuracy":0,"servicesEnabled":true},"regions":3,"pendingEvents":0,"connected":true},"#
    + #"{"app":"/usr/bin/tracker","authorization":{"status":3,"accuracy":1,"servicesEnabled":true},"#
    + #""regions":0,"pendingEvents":12,"connected":false},{"app":"/opt/new","authorization":"#
    + #"{"status":0,"accuracy":0,"servicesEnabled":true},"regions":0,"pendingEvents":0,"#
    + #""connected":false}]}"#

  static let regionsReply =
    #"{"type":"reply","id":1,"regions":[{"group":"manager","region":{"identifier":"home","#
    + #""latitude":52.1,"longitude":5.1,"radius":100,"hysteresis":5,"notifyOnEntry":true,"#
    + #""notifyOnExit":false},"state":"inside"},{"group":"monitor:work","region":{"identifier":"#
    + #""office","latitude":-33.865,"longitude":151.2094,"radius":250.5,"hysteresis":5,"#
    + #""notifyOnEntry":true,"notifyOnExit":true},"state":"unknown"}]}"#

  @Test func statusTable() throws {
    let result = try run(["status"], reply: Self.statusReply)
    #expect(result.status == 0)
    #expect(result.sent.first == #"{"type":"hello","version":1,"role":"control"}"#)
    #expect(result.sent.last == #"{"type":"status","id":1}"#)
    #expect(
      result.output == """
        Location services: on

        Sources:
        SOURCE                     RUNNING  POWER  ON (S)  USERS  FAILURE
        gpsd://127.0.0.1:2947      yes      high     12.5      2
        static:///etc/geolocation  no       low       0.0      0  no such file

        Clients:
        APP               ROLE      PID   UID  MANAGERS
        org.example.Maps  app      4242  1000         2
        -                 control    99  1000         0

        Active apps:
        APP
        org.example.Maps
        /usr/bin/tracker

        """)
  }

  @Test func appsTable() throws {
    let result = try run(["apps"], reply: Self.appsReply)
    #expect(result.status == 0)
    #expect(
      result.output == """
        APP               AUTHORIZATION   ACCURACY     REGIONS  PENDING  CONNECTED
        org.example.Maps  when in use     precise            3        0  yes
        /usr/bin/tracker  always          approximate        0       12  no
        /opt/new          not determined  precise            0        0  no

        Apps named by a path are the user's unconfined programs: the name keeps their settings \
        apart, but any program of the same user can run as any of them (docs/security.md).

        """)
  }

  @Test func regionsTable() throws {
    let result = try run(["regions", "org.example.Maps"], reply: Self.regionsReply)
    #expect(result.status == 0)
    #expect(result.sent.last == #"{"type":"regions","id":1,"app":"org.example.Maps"}"#)
    #expect(
      result.output == """
        GROUP         IDENTIFIER    LATITUDE   LONGITUDE  RADIUS (M)  STATE    NOTIFY
        manager       home         52.100000    5.100000       100.0  inside   entry
        monitor:work  office      -33.865000  151.209400       250.5  unknown  entry,exit

        """)
  }

  @Test func beaconRegionsShowTheirConstraint() throws {
    let reply =
      #"{"type":"reply","id":1,"regions":[{"group":"manager","region":{"identifier":"desk","#
      + #""latitude":0,"longitude":0,"radius":0,"hysteresis":0,"notifyOnEntry":true,"#
      + #""notifyOnExit":false,"beacon":{"uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0","#
      + #""major":1}},"state":"inside"}]}"#
    let result = try run(["regions", "org.example.Maps"], reply: reply)
    #expect(result.status == 0)
    #expect(
      result.output == """
        GROUP    IDENTIFIER  LATITUDE                               LONGITUDE  RADIUS (M)  STATE   NOTIFY
        manager  desk          beacon  E2C56DB5-DFFB-48D2-B060-D0F5A71096E0 1           -  inside  entry

        """)
  }

  @Test func wifiShowsWhatWasLearnedAndForgets() throws {
    let reply =
      #"{"type":"reply","id":1,"wifi":{"learning":true,"known":1200,"mobile":3,"#
      + #""lastLearned":1767225600}}"#
    let shown = try run(["wifi"], reply: reply)
    #expect(shown.status == 0)
    #expect(shown.sent.last == #"{"type":"wifi","id":1,"forget":false}"#)
    #expect(
      shown.output == """
        Wi-Fi learning: on
        Access points known: 1200 (3 mobile, not used)
        Last learned: 2026-01-01 00:00:00Z

        """)
    let forgot = try run(
      ["wifi", "forget"],
      reply:
        #"{"type":"reply","id":1,"wifi":{"learning":false,"known":0,"mobile":0,"forgotten":1200}}"#
    )
    #expect(forgot.sent.last == #"{"type":"wifi","id":1,"forget":true}"#)
    #expect(forgot.output.hasPrefix("Forgot 1200 access points.\nWi-Fi learning: off\n"))
    #expect(forgot.output.hasSuffix("Last learned: never\n"))
  }

  @Test func wifiImportSendsTheFileAndSaysWhatWasSkipped() throws {
    let file = NSTemporaryDirectory() + "import-\(UUID().uuidString).csv"
    try
      "mac,lat,lon,radius,samples\n0123456789ab,52.1,5.1,80,12\nzz,1,2,3,4\n01:23:45:67:89:ac,52.2,5.2,,\n"
      .write(toFile: file, atomically: true, encoding: .utf8)
    defer { try? FileManager.default.removeItem(atPath: file) }
    let reply =
      #"{"type":"reply","id":1,"wifi":{"learning":true,"known":2,"mobile":0,"imported":2}}"#
    let result = try run(["wifi", "import", file], reply: reply)
    #expect(result.status == 0, "\(result.error)")
    #expect(result.sent.last?.contains(#""type":"wifiImport""#) == true)
    #expect(result.sent.last?.contains(#""bssid":"01:23:45:67:89:AB""#) == true)
    #expect(result.output.contains("Read 2 access points from \(file); 1 row skipped"))
    #expect(result.output.contains("Imported 2 new; 2 known in all"))
    let missing = try run(["wifi", "import", "/nonexistent/x.csv"], reply: reply)
    #expect(missing.status != 0)
    #expect(missing.error.contains("/nonexistent/x.csv: cannot be read"))
  }

  @Test func emptyListsSaySo() throws {
    #expect(
      try run(["apps"], reply: #"{"type":"reply","id":1,"apps":[]}"#).output
        == "No app has asked for location yet.\n")
    #expect(
      try run(["regions", "org.x"], reply: #"{"type":"reply","id":1,"regions":[]}"#).output
        == "org.x monitors no region.\n")
    #expect(
      try run(["sources"], reply: #"{"type":"reply","id":1,"sources":[]}"#).output
        == "  (no source configured or discovered)\n")
  }

  @Test(arguments: [
    (["status", "--json"], statusReply, "status"),
    (["apps", "--json"], appsReply, "apps"),
    (["regions", "org.example.Maps", "--json"], regionsReply, "regions"),
  ])
  func jsonPrintsThePayload(arguments: [String], reply: String, member: String) throws {
    let result = try run(arguments, reply: reply)
    #expect(result.status == 0)
    #expect(result.output.hasSuffix("\n"))
    #expect(result.output.filter { $0 == "\n" }.count == 1)
    // The same JSON value as the reply's member (compared through Foundation).
    let printed = try JSONSerialization.jsonObject(with: Data(result.output.utf8))
    let whole = try #require(
      try JSONSerialization.jsonObject(with: Data(reply.utf8)) as? [String: Any])
    let expected = try #require(whole[member])
    #expect(
      try JSONSerialization.data(withJSONObject: printed, options: .sortedKeys)
        == JSONSerialization.data(withJSONObject: expected, options: .sortedKeys))
  }

  @Test func jsonKeepsMembersThisVersionDoesNotKnow() throws {
    let result = try run(
      ["sources", "--json"],
      reply: #"{"type":"reply","id":1,"sources":[{"url":"geoclue","running":false,"power":"low","#
        + #""onSeconds":0,"users":null,"failure":null,"newField":[1,2.5,"x"]}]}"#)
    #expect(
      result.output
        == #"[{"failure":null,"newField":[1,2.5,"x"],"onSeconds":0,"power":"low","running":false,"#
        + #""url":"geoclue","users":null}]"# + "\n")
  }

  @Test func authorizeSendsTheGrant() throws {
    let result = try run(
      ["authorize", "org.example.Maps", "when-in-use", "--approximate"],
      reply: #"{"type":"reply","id":1}"#)
    #expect(result.status == 0)
    #expect(
      result.sent.last
        == #"{"type":"authorize","id":1,"app":"org.example.Maps","status":"whenInUse","#
        + #""accuracy":"reduced"}"#)
    #expect(result.output == "org.example.Maps: when in use, approximate location.\n")
  }

  @Test func authorizeResetAndServices() throws {
    let reset = try run(["authorize", "org.x", "reset"], reply: #"{"type":"reply","id":1}"#)
    #expect(reset.sent.last?.contains(#""status":"reset""#) == true)
    #expect(reset.output == "org.x: decision forgotten; the app will be asked again.\n")
    let off = try run(["services", "off"], reply: #"{"type":"reply","id":1}"#)
    #expect(off.sent.last == #"{"type":"services","id":1,"enabled":false}"#)
    #expect(off.output == "Location services off.\n")
    let json = try run(["services", "on", "--json"], reply: #"{"type":"reply","id":1}"#)
    #expect(json.output == "{}\n")
  }

  @Test func daemonErrorExitsOne() throws {
    let result = try run(
      ["regions", "org.nobody"],
      reply: #"{"type":"error","id":1,"code":"notFound","message":"no app org.nobody"}"#)
    #expect(result.status == 1)
    #expect(result.output.isEmpty)
    #expect(result.error == "locationctl: locationd: no app org.nobody\n")
  }

  @Test func forbiddenSaysWhoMay() throws {
    let daemon = try FakeDaemon { peer in
      _ = peer.readLine()
      peer.send(#"{"type":"error","code":"forbidden","message":"control needs uid 0 or 1000"}"#)
    }
    let captured = Captured()
    let status = LocationControlCommand.run(
      arguments: ["apps", "--socket", daemon.path], environment: [:], io: captured.io())
    _ = daemon.finish()
    #expect(status == 1)
    #expect(captured.error.contains("control needs uid 0 or 1000"))
    #expect(captured.error.contains("root or the daemon's own user"))
  }

  @Test func refusedVersionIsReported() throws {
    let daemon = try FakeDaemon { peer in
      _ = peer.readLine()
      peer.send(
        #"{"type":"error","code":"unsupportedVersion","message":"this daemon speaks version 2"}"#)
    }
    let captured = Captured()
    let status = LocationControlCommand.run(
      arguments: ["status", "--socket", daemon.path], environment: [:], io: captured.io())
    _ = daemon.finish()
    #expect(status == 1)
    #expect(captured.error.contains("this locationctl speaks protocol version 1"))
  }

  @Test func unknownMessagesBeforeTheReplyAreSkipped() throws {
    let daemon = try FakeDaemon { peer in
      _ = peer.readLine()
      peer.send(#"{"type":"somethingNew","x":1}"#)
      peer.send(FakeDaemon.controlWelcome)
      _ = peer.readLine()
      peer.send(#"{"type":"futureNotice"}"#)
      peer.send(#"{"type":"reply","id":1,"apps":[]}"#)
    }
    let captured = Captured()
    let status = LocationControlCommand.run(
      arguments: ["apps", "--socket", daemon.path], environment: [:], io: captured.io())
    _ = daemon.finish()
    #expect(status == 0)
  }

  @Test(arguments: [
    "not json at all", #"{"type":"reply","id":1,"apps":"nope"}"#, #"["array"]"#,
  ])
  func brokenRepliesExitOne(reply: String) throws {
    let result = try run(["apps"], reply: reply)
    #expect(result.status == 1)
    #expect(result.error.contains("cannot read"))
  }

  @Test func daemonClosingBeforeReplyingExitsOne() throws {
    let daemon = try FakeDaemon { peer in
      _ = peer.readLine()
      peer.send(FakeDaemon.controlWelcome)
      _ = peer.readLine()
    }
    let captured = Captured()
    let status = LocationControlCommand.run(
      arguments: ["apps", "--socket", daemon.path], environment: [:], io: captured.io())
    _ = daemon.finish()
    #expect(status == 1)
    #expect(captured.error.contains("closed the connection before replying"))
  }

  @Test func cannotConnectSaysHowToStartLocationd() {
    let captured = Captured()
    let path = "/tmp/no-such-locationd-\(getpid())/socket"
    let status = LocationControlCommand.run(
      arguments: ["status", "--socket", path], environment: [:], io: captured.io())
    #expect(status == 3)
    #expect(captured.error.contains("cannot connect to locationd at \(path)"))
    #expect(captured.error.contains("locationd --foreground"))
    #expect(captured.error.contains("systemctl --user start locationd"))
  }

  @Test func cannotConnectToTheSystemDaemonSuggestsSystemctl() {
    let captured = Captured()
    let status = LocationControlCommand.run(
      arguments: ["apps"], environment: ["CORELOCATION_DAEMON_SOCKET": "/run/locationd/socket"],
      io: captured.io())
    // Unless a system daemon runs on this machine, the connection fails with advice.
    if status == 3 {
      #expect(captured.error.contains("sudo systemctl start locationd"))
    }
  }

  @Test func staleSocketFileIsAConnectError() throws {
    // A socket file nobody listens on (a daemon that died without removing it): ECONNREFUSED.
    let directory = "/tmp/lctl-stale-" + UUID().uuidString.prefix(8)
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let fd = try UnixSocket.bound(path: directory + "/socket")
    close(fd)
    let captured = Captured()
    let status = LocationControlCommand.run(
      arguments: ["apps", "--socket", directory + "/socket"], environment: [:], io: captured.io())
    #expect(status == 3)
    #expect(captured.error.contains("Connection refused"))
    #expect(captured.error.contains("is locationd running?"))
  }

  @Test func tooLongSocketPathIsAConnectError() {
    let captured = Captured()
    let status = LocationControlCommand.run(
      arguments: ["status", "--socket", "/tmp/" + String(repeating: "x", count: 200)],
      environment: [:], io: captured.io())
    #expect(status == 3)
    #expect(captured.error.contains("the path must be 1 to 107 bytes"))
  }

  @Test(arguments: [["no-such-command"], [], ["authorize"], ["status", "--bogus"]])
  func usageErrorsExitTwo(arguments: [String]) {
    let captured = Captured()
    let status = LocationControlCommand.run(
      arguments: arguments, environment: [:], io: captured.io())
    #expect(status == 2)
    #expect(captured.error.hasPrefix("locationctl: "))
    #expect(captured.output.isEmpty)
  }

  @Test func helpExitsZero() {
    let captured = Captured()
    #expect(
      LocationControlCommand.run(arguments: ["--help"], environment: [:], io: captured.io()) == 0)
    #expect(captured.output.hasPrefix("USAGE: locationctl"))
  }
}
