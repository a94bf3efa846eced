import Foundation

/// What one row of `locbench hostile` measured.
struct HostileBenchResult {
  var attack: HostileAttack
  /// The honest client's latency from the feed's write of each measured fix to its read.
  var latency: DaemonBenchLatency.Summary
  /// Daemon CPU seconds per wall-clock second over the measured fixes.
  var cpuPerSecond: Double
  /// The daemon's peak resident memory (`VmHWM`), bytes.
  var peakResidentBytes: Int
  /// Growth of the store and its WAL while the attacker ran, bytes.
  var storeGrowth: Int
  /// Growth of the daemon's log while the attacker ran, bytes.
  var logGrowth: Int
  /// What the hostile uid holds at the end; nil when the daemon did not answer.
  var census: HostileBenchControl.Census?
  /// The attacker's summary (`HostileAttacker`); nil when it printed none.
  var attackerCounts: [String: Int]?
  /// CPU seconds of the attacker and the processes it collected, per second of the row.
  var attackerCPUPerSecond: Double
  /// Why the guard ended the attacker, if it did.
  var guardTripped: String?
  /// Notes for the report.
  var notes: [String] = []

  /// Counts of things the daemon must never allow.
  var breaches: [(String, Int)] {
    (attackerCounts ?? [:]).filter { $0.key.hasPrefix("BREACH") }.sorted { $0.key < $1.key }
  }
}

/// One row of `locbench hostile`: a fresh system daemon, the honest app, the attacker, the feed.
enum HostileBenchRow {
  static func measure(
    _ attack: HostileAttack, in workspace: HostileBench.Workspace, options: HostileBench.Options
  ) throws -> HostileBenchResult {
    let directory = workspace.directory + "/" + attack.rawValue
    try DaemonBenchSystem.check(mkdir(directory, 0o755), "mkdir \(directory)")
    let socket = directory + "/socket"
    let store = directory + "/store.sqlite"
    let logPath = directory + "/locationd.log"
    let configuration = directory + "/locationd.conf"
    try HostileBench.configuration.write(toFile: configuration, atomically: false, encoding: .utf8)
    try DaemonBenchSystem.check(chmod(configuration, 0o644), "chmod \(configuration)")
    let (listener, feedPort) = try DaemonBenchSystem.listenLoopback()
    var feedConnection: Int32 = -1
    var pid: pid_t = 0
    var attacker: pid_t = 0
    let clients = DaemonBenchClients()
    defer {
      clients.closeAll()
      if attacker > 0 {
        kill(-attacker, SIGKILL)
        _ = DaemonBenchSystem.waitForExit(attacker)
      }
      if pid > 0 { DaemonBenchSystem.stop(pid) }
      close(listener)
      if feedConnection >= 0 { close(feedConnection) }
      if !options.keep { try? FileManager.default.removeItem(atPath: directory) }
    }
    pid = try DaemonBenchSystem.spawn(
      workspace.locationd,
      [
        "--system", "--foreground", "--socket", socket, "--store", store, "--config",
        configuration, "--source", "nmea+tcp://127.0.0.1:\(feedPort)",
      ], logPath: logPath)
    try workspace.groups?.move(pid, to: .daemon)

    // The honest app: hello, one manager, updates at the best accuracy.
    let feed = DaemonBenchFeed(rate: options.rate)
    var benchOptions = DaemonBench.Options()
    benchOptions.clients = 1
    benchOptions.fixes = options.fixes
    benchOptions.warmup = options.warmup
    benchOptions.rate = options.rate
    let latency = DaemonBenchLatency(
      epochs: benchOptions.epochs, measured: benchOptions.measured, clients: 1, feeds: 1)
    var welcomed = 0
    var errors: [String] = []
    let handler: (Int, UnsafeRawBufferPointer, UInt64) -> Void = { client, line, time in
      if client == 0,
        DaemonBenchLocationd.recordLocations(
          line, client: 0, at: time, feed: feed, latency: latency)
      {
        return
      }
      switch HostileLine.field("type", in: line) {
      case "welcome": welcomed += 1
      case "error": errors.append("\(client): " + String(decoding: line, as: UTF8.self))
      default: break
      }
    }
    let setupDeadline = DaemonBenchSystem.now() + 20_000_000_000
    let honest = clients.add(
      try DaemonBenchLocationd.connect(
        socket, daemon: &pid, logPath: logPath, deadline: setupDeadline))
    clients.send(
      honest,
      line: [
        #"{"type":"hello","version":1,"role":"app"}"#, #"{"type":"register","client":1}"#,
        #"{"type":"startUpdates","client":1,"request":{"desiredAccuracy":-1,"distanceFilter":-1,"pausesAutomatically":false,"activity":"other"}}"#,
      ].joined(separator: "\n"))
    try DaemonBench.wait(clients, seconds: 20, what: "the honest app's welcome", handler: handler) {
      welcomed > 0 || !errors.isEmpty
    }
    if !errors.isEmpty {
      throw DaemonBenchLocationd.failure("error from locationd: \(errors[0])", logPath: logPath)
    }
    // The source starts with the first startUpdates: locationd connects to the feed.
    while feedConnection < 0 {
      clients.pump(timeoutMilliseconds: 0, handler: handler)
      do {
        feedConnection = try DaemonBenchSystem.accept(
          listener, deadline: min(setupDeadline, DaemonBenchSystem.now() + 50_000_000),
          what: "locationd reading the feed")
      } catch {
        if DaemonBenchSystem.now() > setupDeadline {
          throw DaemonBenchLocationd.failure("\(error)", logPath: logPath)
        }
      }
    }

    // What the attack needs from root: a decision, or an agent that never answers.
    if attack.needsReducedAccuracy {
      try HostileBenchControl.authorize(
        workspace.attackerApp, status: "whenInUse", accuracy: "reduced", socket: socket)
    }
    if attack.needsDenial {
      try HostileBenchControl.authorize(
        workspace.attackerApp, status: "denied", accuracy: "full", socket: socket)
    }
    var agentQuestions = 0
    if attack.needsAgent {
      let agent = clients.add(
        try DaemonBenchLocationd.connect(
          socket, daemon: &pid, logPath: logPath, deadline: setupDeadline))
      clients.send(agent, line: #"{"type":"hello","version":1,"role":"agent"}"#)
      try DaemonBench.wait(clients, seconds: 20, what: "the agent's welcome", handler: handler) {
        welcomed > 1 || !errors.isEmpty
      }
    }

    // The attack, while the feed runs.
    let storeBefore = HostileBenchWatchdog.storeBytes(store)
    let logBefore = fileSize(logPath)
    let childrenBefore = childrenCPUSeconds()
    let started = DaemonBenchSystem.now()
    if attack != .baseline {
      let command = [
        HostileBench.setpriv, "--reuid", "\(HostileBench.hostileUID)", "--regid",
        "\(HostileBench.hostileUID)", "--clear-groups", "--", workspace.attackerExecutable,
        HostileAttacker.mode, attack.rawValue, socket,
        DaemonBenchReport.format(options.attackSeconds, 1), workspace.attackerDirectory,
      ]
      // In the attacker's CPU group from its first instruction, when the run has groups.
      let (path, arguments) =
        workspace.groups?.wrapped(.attacker, command) ?? (command[0], Array(command.dropFirst()))
      attacker = try DaemonBenchSystem.spawn(
        path, arguments, logPath: directory + "/attacker.log", newProcessGroup: true)
    }
    let watchdog = HostileBenchWatchdog(
      daemon: pid, attacker: attacker, store: store, storeBefore: storeBefore,
      limit: options.guardMegabytes * 1_000_000)
    watchdog.start()
    let empty = DaemonBenchSystem.Usage(cpuSeconds: 0, residentBytes: 0, peakResidentBytes: 0)
    let (before, after, seconds) = DaemonBench.feed(
      feed, to: [feedConnection], options: benchOptions, clients: clients, latency: latency,
      usage: { DaemonBenchSystem.usage(of: pid) ?? empty },
      handler: { client, line, time in
        if client == 1 && HostileLine.field("type", in: line) == "authorizationRequest" {
          agentQuestions += 1
        }
        handler(client, line, time)
      })
    let storeAfter = HostileBenchWatchdog.storeBytes(store)
    let logAfter = fileSize(logPath)
    let tripped = watchdog.stop()
    if DaemonBenchSystem.hasExited(pid) {
      pid = 0
      throw DaemonBenchLocationd.failure("locationd exited under attack", logPath: logPath)
    }

    // The attacker ends by itself a second after the feed; collect it and its summary.
    var counts: [String: Int]?
    if attacker > 0 {
      let deadline = DaemonBenchSystem.now() + 10_000_000_000
      while !DaemonBenchSystem.hasExited(attacker) {
        if DaemonBenchSystem.now() > deadline {
          kill(-attacker, SIGKILL)
          _ = DaemonBenchSystem.waitForExit(attacker)
          break
        }
        usleep(20_000)
      }
      attacker = 0
      let output = (try? String(contentsOfFile: directory + "/attacker.log", encoding: .utf8)) ?? ""
      if let last = output.split(separator: "\n").last(where: { $0.hasPrefix("{") }) {
        counts = (try? JSONSerialization.jsonObject(with: Data(last.utf8))) as? [String: Int]
      }
    }
    let attackerSeconds = Double(DaemonBenchSystem.now() - started) / 1e9
    let attackerCPU = childrenCPUSeconds() - childrenBefore
    let peak = DaemonBenchSystem.usage(of: pid)?.peakResidentBytes ?? after.peakResidentBytes
    var notes: [String] = []
    var census: HostileBenchControl.Census?
    do {
      census = try HostileBenchControl.census(uid: HostileBench.hostileUID, socket: socket)
    } catch {
      notes.append("the census failed: \(error)")
    }

    if agentQuestions > 0 {
      notes.append("root's agent was asked \(agentQuestions) times and never answered")
    }
    if let first = errors.first { notes.append("errors to root's connections: \(first)") }
    if !clients.isOpen(honest) { notes.append("the honest app's connection was closed") }
    return HostileBenchResult(
      attack: attack, latency: latency.summary(offset: 0),
      cpuPerSecond: (after.cpuSeconds - before.cpuSeconds) / max(seconds, 1e-9),
      peakResidentBytes: max(peak, after.peakResidentBytes), storeGrowth: storeAfter - storeBefore,
      logGrowth: logAfter - logBefore, census: census, attackerCounts: counts,
      attackerCPUPerSecond: attack == .baseline ? 0 : attackerCPU / max(attackerSeconds, 1e-9),
      guardTripped: tripped, notes: notes)
  }

  private static func fileSize(_ path: String) -> Int {
    var info = stat()
    return stat(path, &info) == 0 ? Int(info.st_size) : 0
  }

  /// CPU seconds of this process's children that have been waited for (`RUSAGE_CHILDREN`).
  private static func childrenCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_CHILDREN.rawValue, &usage)
    func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
    return seconds(usage.ru_utime) + seconds(usage.ru_stime)
  }
}
