import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// The attacks of issue 14 against the real `locationd`, as a hostile local program would make
/// them (`docs/security.md`, "Attacks"). Each failed against the daemon before the fixes (run with
/// `CORELOCATION_TEST_LOCATIOND` naming that build).
@Suite(.serialized) struct DaemonTrustTests {
  static let python = RealComponents.python3
  static let client = Paths.fixture("security", "client.py")
  static let tools = [python, RealComponents.socat, "/usr/bin/sleep"]

  /// A user daemon in a fresh directory, with these configuration lines.
  static func daemon(_ directory: String, config: String = "") throws -> LocationdProcess {
    try config.write(toFile: directory + "/conf", atomically: true, encoding: .utf8)
    chmod(directory + "/conf", 0o600)
    return try LocationdProcess(
      LocationdProcess.arguments(directory, sources: ["static:///nonexistent"]))
  }

  /// Runs `client.py` (through `prefix`, such as `unshare` or `bwrap`) and returns what the daemon
  /// sent it, one JSON object per line.
  static func talk(
    _ arguments: [String], executable: String = python, prefix: [String] = []
  ) throws -> [[String: Any]] {
    let command = prefix.isEmpty ? executable : prefix[0]
    let rest = prefix.isEmpty ? arguments : Array(prefix.dropFirst()) + [executable] + arguments
    let result = try runProgram(command, rest, limit: 60)
    return result.lines.compactMap { line in
      guard let data = line.data(using: .utf8),
        let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
      else { return nil }
      return object
    }
  }

  /// The first answer to a hello: the welcome, or the error that refused it.
  static func answer(_ lines: [[String: Any]]) -> [String: Any]? {
    lines.first { ($0["type"] as? String) == "welcome" || ($0["type"] as? String) == "error" }
  }

  static func isRefusal(_ answer: [String: Any]?) -> Bool {
    (answer?["type"] as? String) == "error" && (answer?["code"] as? String) == "forbidden"
  }

  /// Decodes one line of JSON.
  static func object(_ line: [UInt8]) -> [String: Any]? {
    (try? JSONSerialization.jsonObject(with: Data(line))) as? [String: Any]
  }

  // MARK: F2: identities faked

  /// A child connects on a socket its parent shares and execs the victim; the parent speaks. The
  /// daemon accepts late (max-connections 1 and a filler connection), so that it looks at the
  /// process that connected only after it became the victim.
  @Test(.enabled(if: DaemonE2E.available(tools: tools), DaemonE2E.missing(tools: tools)))
  func execAfterConnectDoesNotBorrowTheVictimsIdentity() throws {
    try DaemonE2E.requireComponents(tools: Self.tools)
    let directory = try LocationdProcess.makeDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let daemon = try Self.daemon(directory, config: "max-connections = 1\n")
    defer { daemon.stop(SIGKILL) }
    let victim = directory + "/victim"
    try FileManager.default.copyItem(atPath: "/usr/bin/sleep", toPath: victim)
    var filler: SocketChannel? = try SocketChannel(path: LocationdProcess.socket(directory))
    _ = try filler?.hello("app")

    let attack = Process()
    attack.executableURL = URL(fileURLWithPath: Self.python)
    attack.arguments = [
      Self.client, "--exec-after-connect", LocationdProcess.socket(directory), victim,
    ]
    let output = Pipe()
    attack.standardOutput = output
    attack.standardInput = FileHandle.nullDevice
    try runWithEmptySignalMask(attack)
    // The victim (the child, running `sleep 60`) is killed with the attacker: Foundation's
    // `waitUntilExit()` waits for every process that holds the descriptor it watches.
    var victimPID: pid_t?
    defer {
      if let victimPID { kill(victimPID, SIGKILL) }
      if attack.isRunning { attack.terminate() }
      attack.waitUntilExit()
    }
    let lines = DeadlineLineReader(fd: output.fileHandleForReading.fileDescriptor)
    let ready = try #require(try lines.next(timeout: 60).flatMap(Self.object))
    #expect(ready["type"] as? String == "attack")
    victimPID = (ready["child"] as? Int).map { pid_t($0) }
    // The child is the victim now; the parent has said hello. Let the daemon accept it.
    filler?.shutdownWrite()
    _ = try filler?.readUntilClosed()
    filler = nil
    let answer = try #require(try lines.next(timeout: 60).flatMap(Self.object))
    #expect(Self.isRefusal(answer), "the parent spoke as the victim: \(answer)")
    #expect(answer["app"] as? String != victim)
  }

  /// In a mount namespace of its own, a program bind-mounts itself over the victim's path and
  /// runs from there: `/proc/PID/exe` shows the victim's path, which is not ours to trust.
  @Test(.enabled(if: DaemonE2E.available(tools: tools), DaemonE2E.missing(tools: tools)))
  func aBindMountOverTheVictimsPathIsRefused() throws {
    try DaemonE2E.requireComponents(tools: Self.tools + ["/usr/bin/unshare"])
    let directory = try LocationdProcess.makeDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let daemon = try Self.daemon(directory)
    defer { daemon.stop(SIGKILL) }
    let victim = directory + "/victim"
    try FileManager.default.copyItem(atPath: RealComponents.socat, toPath: victim)
    // Root needs no user namespace; anyone else maps themselves to root in one.
    let unshare = getuid() == 0 ? ["/usr/bin/unshare", "-m"] : ["/usr/bin/unshare", "-Urm"]
    let script =
      "mount --bind \(Self.python) \(victim) && exec \(victim) \(Self.client) "
      + "\(LocationdProcess.socket(directory)) app"
    let lines = try Self.talk(["-c", script], executable: "/bin/sh", prefix: unshare)
    let answer = Self.answer(lines)
    #expect(Self.isRefusal(answer), "\(lines)")
    #expect(answer?["app"] as? String != victim)
  }

  /// An executable named like a deleted one (`victim (deleted)`), whose path the kernel shows as
  /// the victim's with a suffix, and one deleted while it runs: neither is identified.
  @Test(.enabled(if: DaemonE2E.available(tools: tools), DaemonE2E.missing(tools: tools)))
  func deletedExecutablesAndTheirLookalikesAreRefused() throws {
    try DaemonE2E.requireComponents(tools: Self.tools)
    let directory = try LocationdProcess.makeDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let daemon = try Self.daemon(directory)
    defer { daemon.stop(SIGKILL) }
    let lookalike = directory + "/victim (deleted)"
    try FileManager.default.copyItem(atPath: RealComponents.socat, toPath: lookalike)
    let channel = try SocatChannel(
      executable: lookalike, socket: LocationdProcess.socket(directory))
    defer { channel.finish() }
    channel.send(#"{"type":"hello","version":1,"role":"app"}"#)
    let answer = try channel.next()
    #expect(answer.type == "error" && answer.string("code") == "forbidden", "\(answer)")
    #expect(answer.string("app") != directory + "/victim")

    let doomed = directory + "/doomed"
    try FileManager.default.copyItem(atPath: RealComponents.socat, toPath: doomed)
    let gone = try SocatChannel(executable: doomed, socket: LocationdProcess.socket(directory))
    defer { gone.finish() }
    try FileManager.default.removeItem(atPath: doomed)
    gone.send(#"{"type":"hello","version":1,"role":"app"}"#)
    let refused = try gone.next()
    #expect(refused.type == "error" && refused.string("code") == "forbidden", "\(refused)")
  }

  /// Two scripts of one interpreter are two apps; an interpreter with no script names none.
  @Test(.enabled(if: DaemonE2E.available(tools: tools), DaemonE2E.missing(tools: tools)))
  func theScriptsOfAnInterpreterAreNotOneApp() throws {
    try DaemonE2E.requireComponents(tools: Self.tools)
    let directory = try LocationdProcess.makeDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let daemon = try Self.daemon(directory)
    defer { daemon.stop(SIGKILL) }
    let socket = LocationdProcess.socket(directory)
    var apps: [String] = []
    for name in ["one.py", "two.py"] {
      try FileManager.default.copyItem(atPath: Self.client, toPath: directory + "/" + name)
      let answer = Self.answer(try Self.talk([directory + "/" + name, socket, "app"]))
      apps.append(answer?["app"] as? String ?? "")
    }
    #expect(apps == [directory + "/one.py", directory + "/two.py"])
    let inline = try String(contentsOfFile: Self.client, encoding: .utf8)
    let answer = Self.answer(try Self.talk(["-c", inline, socket, "app"]))
    #expect(Self.isRefusal(answer), "python3 -c is no app: \(answer ?? [:])")
  }

  // MARK: F10: names that are not what they show

  /// An executable whose path holds a right-to-left override would reach the agent's prompt and
  /// the log reading backwards.
  @Test(.enabled(if: DaemonE2E.available(tools: tools), DaemonE2E.missing(tools: tools)))
  func bidirectionalOverridesInAPathAreRefused() throws {
    try DaemonE2E.requireComponents(tools: Self.tools)
    let directory = try LocationdProcess.makeDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let daemon = try Self.daemon(directory)
    defer { daemon.stop(SIGKILL) }
    let disguised = directory + "/maps\u{202E}gpj.exe"
    try FileManager.default.copyItem(atPath: RealComponents.socat, toPath: disguised)
    let channel = try SocatChannel(
      executable: disguised, socket: LocationdProcess.socket(directory))
    defer { channel.finish() }
    channel.send(#"{"type":"hello","version":1,"role":"app"}"#)
    let answer = try channel.next()
    #expect(answer.type == "error" && answer.string("code") == "forbidden", "\(answer)")
  }

  // MARK: F1: the control and agent roles

  /// A Flatpak app (a bubblewrap sandbox with `/.flatpak-info` at its root, as Flatpak builds
  /// it) is identified by its application id and never gets the control or agent role, though
  /// it has the user's uid.
  @Test(
    .enabled(
      if: DaemonE2E.available(tools: tools + ["/usr/bin/bwrap"]),
      DaemonE2E.missing(tools: tools + ["/usr/bin/bwrap"])))
  func aFlatpakAppIsConfined() throws {
    try DaemonE2E.requireComponents(tools: Self.tools + ["/usr/bin/bwrap"])
    let directory = try LocationdProcess.makeDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let daemon = try Self.daemon(directory)
    defer { daemon.stop(SIGKILL) }
    let socketDirectory = directory + "/run/locationd"
    let fixtures = Paths.fixture("security", "")
    var sandbox = [
      "/usr/bin/bwrap", "--tmpfs", "/", "--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc",
      "--proc", "/proc", "--dev", "/dev", "--bind", socketDirectory, socketDirectory,
      "--ro-bind", fixtures, fixtures,
      "--ro-bind", Paths.fixture("security", "flatpak-info"), "/.flatpak-info",
    ]
    for link in ["bin", "lib", "lib64", "sbin"]
    where FileManager.default.fileExists(atPath: "/usr/" + link) {
      sandbox += ["--symlink", "usr/" + link, "/" + link]
    }
    sandbox.append("--")
    let socket = LocationdProcess.socket(directory)
    let app = Self.answer(try Self.talk([Self.client, socket, "app"], prefix: sandbox))
    #expect(app?["type"] as? String == "welcome", "\(app ?? [:])")
    #expect(app?["app"] as? String == "org.example.Confined")
    for role in ["control", "agent"] {
      let answer = Self.answer(try Self.talk([Self.client, socket, role], prefix: sandbox))
      #expect(Self.isRefusal(answer), "a confined app as \(role): \(answer ?? [:])")
    }
  }

  /// The system daemon grants the control role to root and to the members of its control group
  /// (a supplementary group counts), and to nobody else.
  @Test(
    .enabled(
      if: (RealComponents.isCI || getuid() == 0)
        && DaemonE2E.available(tools: tools + [RealComponents.setpriv]),
      "needs root (to run a client as another user) and setpriv"))
  func theSystemDaemonsControlRoleNeedsRootOrTheControlGroup() throws {
    try DaemonE2E.requireComponents(tools: Self.tools + [RealComponents.setpriv])
    let directory = try LocationdProcess.makeDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    try "control-group = 4242\n".write(
      toFile: directory + "/conf", atomically: true, encoding: .utf8)
    chmod(directory + "/conf", 0o644)
    let daemon = try LocationdProcess(
      LocationdProcess.arguments(directory, sources: ["static:///nonexistent"], system: true))
    defer { daemon.stop(SIGKILL) }
    // Everyone may reach a system daemon's socket and directory.
    chmod(directory, 0o755)
    chmod(directory + "/run", 0o755)
    let script = directory + "/client.py"
    try FileManager.default.copyItem(atPath: Self.client, toPath: script)
    chmod(script, 0o755)
    let socket = LocationdProcess.socket(directory)
    func control(groups: String) throws -> [String: Any]? {
      let prefix = [
        RealComponents.setpriv, "--reuid", "65534", "--regid", "65534", "--groups", groups,
      ]
      return Self.answer(try Self.talk([script, socket, "control"], prefix: prefix))
    }
    #expect((try control(groups: "4242"))?["type"] as? String == "welcome")
    #expect((try control(groups: "100,4242"))?["type"] as? String == "welcome")
    #expect(Self.isRefusal(try control(groups: "100")))
  }
}
