import Foundation
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// The built `locationctl` against the built `locationd`, both real processes: the daemon on a
/// private socket and store in a temporary directory, stopped by pid. Skipped (with the reason)
/// when the programs are not built, a failure under `CI=true`.
@Suite(
  .enabled(
    if: RealComponents.isCI
      || (BuiltPrograms.locationd != nil && BuiltPrograms.locationctl != nil),
    "needs the built locationd and locationctl (swift build)"),
  .serialized)
struct LocationctlEndToEndTests {
  /// locationd as these tests run it (a static position, the daemon's default policy, an
  /// environment of its own), and locationctl pointed at its socket.
  struct Locationd {
    let process: LocationdProcess
    let socket: String

    init() throws {
      let directory = try LocationdProcess.makeDirectory()
      socket = LocationdProcess.socket(directory)
      // GeoClue's four-line format: latitude, longitude, altitude, accuracy.
      let source = try LocationdProcess.staticSource(in: directory, "52.3702\n4.8952\n2\n50\n")
      process = try LocationdProcess(
        LocationdProcess.arguments(directory, sources: [source], policy: nil),
        environment: [
          "HOME": directory, "XDG_CONFIG_HOME": directory + "/config",
          "XDG_STATE_HOME": directory + "/state", "XDG_RUNTIME_DIR": directory,
          "PATH": "/usr/bin:/bin",
        ], directory: directory)
    }

    /// Everything locationd wrote to standard error so far.
    var log: [String] { process.log }

    /// Stops locationd by pid (SIGTERM) and removes its directory; returns its exit status. Safe
    /// to call more than once.
    @discardableResult
    func stop() -> Int32 { process.stop() }

    /// Runs the built `locationctl` with `arguments` against this daemon's socket.
    func locationctl(_ arguments: [String], input: String = "") throws -> ProgramResult {
      try LocationctlEndToEndTests.locationctl(arguments + ["--socket", socket], input: input)
    }
  }

  /// Runs the built `locationctl`; `input` is written to its standard input, which is then closed.
  static func locationctl(_ arguments: [String], input: String = "") throws -> ProgramResult {
    guard let binary = BuiltPrograms.locationctl else {
      throw TestFailure(BuiltPrograms.missingMessage("locationctl"))
    }
    return try runProgram(binary, arguments, environment: ["PATH": "/usr/bin:/bin"], input: input)
  }

  /// Parses one line of JSON output.
  func json(_ run: ProgramResult) throws -> Any {
    try JSONSerialization.jsonObject(with: Data(run.stdout.utf8), options: [.fragmentsAllowed])
  }

  /// Issue 15: a denied whereami under locationd said only "location access denied". It names
  /// the command that grants access, and that command, run as printed, lets the next run through.
  @Test func deniedWhereamiNamesTheCommandThatGrantsAccess() throws {
    guard let whereami = BuiltPrograms.whereami else {
      throw TestFailure(BuiltPrograms.missingMessage("whereami"))
    }
    let daemon = try Locationd()
    defer { daemon.stop() }
    let app = URL(fileURLWithPath: whereami).resolvingSymlinksInPath().path
    let deny = try daemon.locationctl(["authorize", app, "denied"])
    #expect(deny.status == 0, "\(deny.stderr)")
    let environment = [
      "PATH": "/usr/bin:/bin", "CORELOCATION_DAEMON": "required",
      "CORELOCATION_DAEMON_SOCKET": daemon.socket, "CORELOCATION_STORE": ":memory:",
    ]
    let denied = try runProgram(whereami, ["--timeout", "30"], environment: environment)
    #expect(denied.status == 3, "\(denied.stderr)")
    #expect(denied.stderr.contains("location access denied: locationd has not authorized \(app)"))
    #expect(denied.stderr.contains("`locationctl agent`"), "\(denied.stderr)")
    // The command between the first pair of backquotes, run as printed (the app's path needs no
    // quoting here).
    let parts = denied.stderr.split(separator: "`", omittingEmptySubsequences: false)
    try #require(parts.count > 2, "\(denied.stderr)")
    let command = parts[1].split(separator: " ").map(String.init)
    #expect(command.first == "locationctl" && command.dropFirst().first == "authorize")
    let grant = try daemon.locationctl(Array(command.dropFirst()))
    #expect(grant.status == 0, "\(grant.stderr)")
    let allowed = try runProgram(whereami, ["--timeout", "30"], environment: environment)
    #expect(allowed.status == 0, "\(allowed.stderr)")
    #expect(allowed.lines == ["52.370200 4.895200"])
  }

  @Test func statusAuthorizeServicesAndApps() throws {
    let daemon = try Locationd()
    defer { daemon.stop() }

    let status = try daemon.locationctl(["status", "--json"])
    #expect(status.status == 0, "\(status.stderr)")
    let object = try #require(try json(status) as? [String: Any])
    #expect(object["servicesEnabled"] as? Bool == true)
    let sources = try #require(object["sources"] as? [[String: Any]])
    #expect(sources.count == 1)
    #expect((sources.first?["url"] as? String)?.hasPrefix("static://") == true)
    let clients = try #require(object["clients"] as? [[String: Any]])
    // locationctl itself is connected (role control) while it asks.
    #expect(clients.contains { $0["role"] as? String == "control" })

    let table = try daemon.locationctl(["status"])
    #expect(table.status == 0)
    #expect(table.stdout.hasPrefix("Location services: on\n"))
    #expect(table.stdout.contains("static://"))

    let authorize = try daemon.locationctl(
      ["authorize", "org.example.E2E", "always", "--approximate"])
    #expect(authorize.status == 0, "\(authorize.stderr)")
    #expect(authorize.stdout == "org.example.E2E: always, approximate location.\n")

    let apps = try #require(
      try json(try daemon.locationctl(["apps", "--json"])) as? [[String: Any]])
    let app = try #require(apps.first { $0["app"] as? String == "org.example.E2E" })
    let authorization = try #require(app["authorization"] as? [String: Any])
    #expect(authorization["status"] as? Int == 3)
    #expect(authorization["accuracy"] as? Int == 1)
    #expect(app["connected"] as? Bool == false)

    let appsTable = try daemon.locationctl(["apps"])
    #expect(appsTable.stdout.contains("org.example.E2E"))
    #expect(appsTable.stdout.contains("always"))
    #expect(appsTable.stdout.contains("approximate"))

    let regions = try daemon.locationctl(["regions", "org.example.E2E", "--json"])
    #expect(regions.status == 0, "\(regions.stderr)")
    #expect(regions.stdout == "[]\n")
    let unknown = try daemon.locationctl(["regions", "org.example.Nobody"])
    #expect(unknown.status == 1)
    #expect(unknown.stderr.contains("org.example.Nobody"))

    let off = try daemon.locationctl(["services", "off"])
    #expect(off.status == 0, "\(off.stderr)")
    #expect(off.stdout == "Location services off.\n")
    let statusOff = try #require(
      try json(try daemon.locationctl(["status", "--json"])) as? [String: Any])
    #expect(statusOff["servicesEnabled"] as? Bool == false)
    #expect(try daemon.locationctl(["services", "on"]).status == 0)
    let statusOn = try #require(
      try json(try daemon.locationctl(["status", "--json"])) as? [String: Any])
    #expect(statusOn["servicesEnabled"] as? Bool == true)

    let reset = try daemon.locationctl(["authorize", "org.example.E2E", "reset"])
    #expect(reset.status == 0, "\(reset.stderr)")
    let after = try #require(
      try json(try daemon.locationctl(["apps", "--json"])) as? [[String: Any]])
    let status0 =
      after.first { $0["app"] as? String == "org.example.E2E" }
      .flatMap { $0["authorization"] as? [String: Any] }?["status"] as? Int
    #expect(status0 == nil || status0 == 0)

    let sourcesTable = try daemon.locationctl(["sources"])
    #expect(sourcesTable.status == 0)
    #expect(sourcesTable.stdout.hasPrefix("SOURCE"))

    #expect(daemon.stop() == 0, "locationd log:\n\(daemon.log)")
  }

  @Test func binaryHelpAndUsageExitCodes() throws {
    let help = try Self.locationctl(["--help"])
    #expect(help.status == 0)
    #expect(help.stdout.hasPrefix("USAGE: locationctl"))
    let usage = try Self.locationctl(["teleport"])
    #expect(usage.status == 2)
    #expect(usage.stderr == "locationctl: unknown command 'teleport' (see locationctl --help)\n")
  }

  @Test func cannotConnectOnceTheDaemonHasStopped() throws {
    let daemon = try Locationd()
    let socket = daemon.socket
    // One round trip first: locationd installs its SIGTERM handler just after it starts
    // listening, and a SIGTERM in between would be lost (reported to the daemon's owner).
    #expect(try daemon.locationctl(["status"]).status == 0)
    #expect(daemon.stop() == 0)
    let run = try Self.locationctl(["status", "--socket", socket])
    #expect(run.status == 3)
    #expect(run.stderr.contains("locationd --foreground"))
  }

  /// An app (this test process, speaking the protocol by hand) asks for authorization; the daemon
  /// asks `locationctl agent`, which asks "the user" (this test, through its standard input).
  @Test func agentAnswersAnAppsRequest() throws {
    let daemon = try Locationd()
    defer { daemon.stop() }
    guard let binary = BuiltPrograms.locationctl else {
      throw TestFailure(BuiltPrograms.missingMessage("locationctl"))
    }

    let agent = Process()
    agent.executableURL = URL(fileURLWithPath: binary)
    agent.arguments = ["agent", "--socket", daemon.socket]
    agent.environment = ["PATH": "/usr/bin:/bin"]
    let input = Pipe()
    let output = Pipe()
    let errors = Pipe()
    agent.standardInput = input
    agent.standardOutput = output
    agent.standardError = errors
    try runWithEmptySignalMask(agent)
    let pid = agent.processIdentifier
    let guardTimer = DispatchWorkItem { kill(pid, SIGKILL) }
    DispatchQueue.global().asyncAfter(deadline: .now() + 60, execute: guardTimer)
    defer {
      guardTimer.cancel()
      if agent.isRunning { kill(pid, SIGKILL) }
      agent.waitUntilExit()
    }

    // The agent says so on standard error once it is registered.
    var agentLog = ""
    while !agentLog.contains("answering location requests") {
      let data = errors.fileHandleForReading.availableData
      if data.isEmpty { break }
      agentLog += String(decoding: data, as: UTF8.self)
    }
    try #require(agentLog.contains("answering location requests"), "\(agentLog)")

    // The app: this process, identified by its executable.
    let app = try Self.connect(daemon.socket)
    defer { close(app.fd) }
    app.send(#"{"type":"hello","version":1,"role":"app"}"#)
    let welcome = try #require(app.readLine())
    #expect(welcome.contains(#""type":"welcome""#), "\(welcome)")
    #expect(welcome.contains(#""status":0"#))
    app.send(#"{"type":"register","client":1}"#)
    app.send(#"{"type":"requestAuthorization","always":false}"#)

    // The user answers "while in use, approximate" once each question shows.
    var shown = ""
    func waitFor(_ text: String) -> Bool {
      while !shown.contains(text) {
        let data = output.fileHandleForReading.availableData
        if data.isEmpty { return false }
        shown += String(decoding: data, as: UTF8.self)
      }
      return true
    }
    try #require(waitFor("[d]eny? "), "\(shown)")
    #expect(shown.contains("wants your location (when in use)"))
    input.fileHandleForWriting.write(Data("w\n".utf8))
    try #require(waitFor("[a]pproximate? "), "\(shown)")
    input.fileHandleForWriting.write(Data("a\n".utf8))
    try #require(waitFor("Allowed"), "\(shown)")
    try input.fileHandleForWriting.close()
    agent.waitUntilExit()
    #expect(agent.terminationStatus == 0)

    // The app is told at once: when in use (4), reduced accuracy (1). (It heard, first, that the
    // agent was being asked: requestInProgress.)
    var told: String?
    while let line = app.readLine() {
      if line.contains(#""type":"authorization""#), !line.contains("requestInProgress") {
        told = line
        break
      }
    }
    let authorization = try #require(told)
    #expect(authorization.contains(#""status":4"#), "\(authorization)")
    #expect(authorization.contains(#""accuracy":1"#), "\(authorization)")

    // locationctl lists the app under its executable's path, connected, with the decision.
    let apps = try #require(
      try JSONSerialization.jsonObject(
        with: Data(try daemon.locationctl(["apps", "--json"]).stdout.utf8)) as? [[String: Any]])
    let me = try #require(apps.first { $0["connected"] as? Bool == true }, "\(apps)")
    #expect((me["app"] as? String)?.hasPrefix("/") == true)
    #expect((me["authorization"] as? [String: Any])?["status"] as? Int == 4)
  }

  /// A connected client socket with a 30 s receive timeout (a guard, never a wait).
  static func connect(_ path: String) throws -> FakeDaemon.Peer {
    let fd = try UnixSocket.connected(path: path)
    UnixSocket.setReceiveTimeout(fd, seconds: 30)
    return FakeDaemon.Peer(fd: fd)
  }
}
