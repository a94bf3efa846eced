import Foundation

/// `locbench hostile-attacker ATTACK SOCKET SECONDS DIRECTORY`: the hostile uid's program for one
/// row of `locbench hostile`, started by the bench through `setpriv` from the uid's own copy of
/// locbench (`DIRECTORY/locbench`). For SECONDS it makes ATTACK (`HostileAttack`) at full speed:
/// its connections (`HostileAttack.connections`, all in one epoll loop, each reopened as soon as
/// the daemon closes it) and its processes (`HostileAttack.processes` at once, each run from a
/// link it makes in `DIRECTORY/ATTACK/`: `HostileIdentity`). Then it prints one JSON object
/// counting what happened (the daemon's answers by type and error code, the outcome of each kind
/// of process; a key starting with `BREACH` counts something the daemon must never allow) and
/// ends.
///
/// Bounded, so that it cannot take the machine down: at most 1,024 descriptors and 64 processes
/// of its uid (`setrlimit`), no core files, at most 64 KiB queued per connection, a fixed number
/// of connections and processes, and every process ends by itself shortly after SECONDS.
final class HostileAttacker {
  /// The mode name that selects this program in `main.swift`.
  static let mode = "hostile-attacker"

  let attack: HostileAttack
  let socket: String
  /// The attacker's copy of locbench, which its processes are links of.
  let executable: String
  /// Where it makes those links.
  let links: String
  let deadline: UInt64
  let clients = DaemonBenchClients()
  /// The open connection of each slot (nil: to be opened).
  var slots: [Int?] = []
  /// The slot and variant (what the connection does) of each open connection.
  var connectionSlots: [Int: (slot: Int, variant: Int)] = [:]
  /// What happened, for the summary.
  var counts: [String: Int] = [:]
  /// Live processes: their kind and the link they run from.
  var children: [pid_t: (kind: String, link: String?)] = [:]
  /// Connections to close once the pump's handler has returned.
  var closing: [Int] = []
  /// Connections it closed itself (not counted as closed by the daemon).
  var closedByUs: Set<Int> = []
  /// Connections and processes started so far.
  var serial = 0
  var mostOpen = 0

  init(attack: HostileAttack, socket: String, seconds: Double, directory: String) {
    self.attack = attack
    self.socket = socket
    executable = directory + "/locbench"
    links = directory + "/" + attack.rawValue
    deadline = DaemonBenchSystem.now() + UInt64(seconds * 1e9)
  }

  /// Runs the program with `arguments` (after `hostile-attacker`); never returns.
  static func main(_ arguments: [String]) -> Never {
    signal(SIGPIPE, SIG_IGN)
    guard arguments.count == 4, let attack = HostileAttack(rawValue: arguments[0]),
      let seconds = Double(arguments[2]), seconds > 0
    else {
      FileHandle.standardError.write(
        Data("usage: locbench \(mode) ATTACK SOCKET SECONDS DIRECTORY\n".utf8))
      exit(2)
    }
    bound(RLIMIT_NOFILE.rawValue, 1024)
    bound(__RLIMIT_NPROC.rawValue, 64)
    bound(RLIMIT_CORE.rawValue, 0)
    let attacker = HostileAttacker(
      attack: attack, socket: arguments[1], seconds: seconds, directory: arguments[3])
    mkdir(attacker.links, 0o755)
    attacker.run()
    attacker.counts["most connections open at once"] = attacker.mostOpen
    let summary =
      (try? JSONSerialization.data(withJSONObject: attacker.counts, options: [.sortedKeys]))
    print(summary.map { String(decoding: $0, as: UTF8.self) } ?? "{}")
    exit(0)
  }

  /// Lowers a resource limit of this process (and so of its children) to `value`.
  private static func bound(_ resource: UInt32, _ value: Int) {
    var limit = rlimit(rlim_cur: rlim_t(value), rlim_max: rlim_t(value))
    if setrlimit(Int32(resource), &limit) != 0 {
      FileHandle.standardError.write(Data("setrlimit \(resource): \(errno)\n".utf8))
    }
  }

  func count(_ key: String, _ amount: Int = 1) { counts[key, default: 0] += amount }

  /// The attack's loop, until the deadline; then its processes are ended.
  func run() {
    let plan = attack.connections
    slots = Array(repeating: nil, count: plan.count)
    while DaemonBenchSystem.now() < deadline {
      var openNow = 0
      for slot in slots.indices {
        if let index = slots[slot], clients.isOpen(index) {
          openNow += 1
          continue
        }
        if let index = slots[slot] {
          connectionSlots[index] = nil
          if closedByUs.remove(index) == nil { count("connections closed by the daemon") }
        }
        slots[slot] = openConnection(slot, reads: plan.reads)
        if slots[slot] != nil { openNow += 1 }
      }
      mostOpen = max(mostOpen, openNow)
      while children.count < attack.processes,
        DaemonBenchSystem.now() + 500_000_000 < deadline,
        startProcess()
      {}
      refill()
      clients.pump(timeoutMilliseconds: 2) { index, line, _ in self.received(index, line) }
      for index in closing {
        clients.close(index)
        closedByUs.insert(index)
      }
      closing.removeAll(keepingCapacity: true)
      reap(wait: false)
    }
    // Processes end by themselves at the deadline; those that have not within 3 s are killed.
    let grace = DaemonBenchSystem.now() + 3_000_000_000
    while !children.isEmpty && DaemonBenchSystem.now() < grace {
      reap(wait: false)
      usleep(10_000)
    }
    for pid in children.keys { kill(pid, SIGKILL) }
    reap(wait: true)
    clients.closeAll()
  }

  private func openConnection(_ slot: Int, reads: Bool) -> Int? {
    guard let fd = try? DaemonBenchSystem.connectUnix(path: socket) else {
      count("connect failed")
      return nil
    }
    count("connections opened")
    let index = clients.add(fd, reads: reads)
    serial += 1
    connectionSlots[index] = (slot, serial)
    opened(index, slot: slot, variant: serial)
    return clients.isOpen(index) ? index : nil
  }

  // MARK: Processes

  /// Starts one process of the attack's kind; false when none could be started.
  private func startProcess() -> Bool {
    serial += 1
    let remaining = Double(deadline - min(deadline, DaemonBenchSystem.now())) / 1e9
    let seconds = String(format: "%.1f", remaining)
    var link: String? = links + "/" + linkName(serial)
    var arguments = [HostileIdentity.mode, "hello", socket, seconds]
    var descriptor: Int32?
    let kind = processKind(serial)
    switch kind {
    case "deleted executable":
      arguments = [HostileIdentity.mode, "unlinked", socket, seconds, link ?? ""]
    case "socket handed to another process":
      link = nil
      descriptor = try? DaemonBenchSystem.connectUnix(path: socket)
      guard descriptor != nil else {
        count("connect failed")
        return false
      }
      arguments = [HostileIdentity.mode, "speak", socket, seconds]
    case "new identity holding requests":
      arguments = [HostileIdentity.mode, "held", socket, seconds, "255", "60000"]
    case "new identity adding regions":
      arguments = [
        HostileIdentity.mode, "regions", socket, seconds, "\(HostileBench.caps.regions + 10)",
        "1000",
      ]
    default:
      break
    }
    defer { if let descriptor { close(descriptor) } }
    if let link, Glibc.link(executable, link) != 0 {
      count("link failed (errno \(errno))")
      return false
    }
    do {
      let pid = try DaemonBenchSystem.spawn(
        link ?? executable, arguments, logPath: "/dev/null", descriptor3: descriptor)
      children[pid] = (kind, kind == "deleted executable" ? nil : link)
      count("processes started")
      return true
    } catch {
      count("process not started")
      if let link { unlink(link) }
      return false
    }
  }

  /// The kind of the attack's `serial`th process.
  private func processKind(_ serial: Int) -> String {
    switch attack {
    case .identity:
      return [
        "name ending in (deleted)", "deleted executable", "socket handed to another process",
      ][
        serial % 3]
    case .lines:
      return ["bidirectional override in the name", "control character in the name"][serial % 2]
    case .held: return "new identity holding requests"
    case .identities: return "new identity adding regions"
    case .baseline, .roles, .probe, .connections, .pings, .denied: return "none"
    }
  }

  private func linkName(_ serial: Int) -> String {
    switch processKind(serial) {
    case "name ending in (deleted)": return "victim-\(serial) (deleted)"
    case "deleted executable": return "doomed-\(serial)"
    case "bidirectional override in the name": return "maps-\(serial)\u{202E}gpj.exe"
    case "control character in the name": return "clear-\(serial)\u{1B}[2J"
    default: return "app-\(serial)"
    }
  }

  /// Whether the daemon must refuse a process of this kind.
  private static func mustBeRefused(_ kind: String) -> Bool {
    kind != "new identity holding requests" && kind != "new identity adding regions"
  }

  /// Collects processes that ended and counts their outcomes.
  private func reap(wait: Bool) {
    while !children.isEmpty {
      var status: Int32 = 0
      let pid = waitpid(-1, &status, wait ? 0 : WNOHANG)
      if pid < 0 && errno == EINTR { continue }
      guard pid > 0, let child = children.removeValue(forKey: pid) else { return }
      if let link = child.link { unlink(link) }
      let exited = status & 0x7F == 0
      let outcome = exited ? HostileIdentity.Outcome(rawValue: (status >> 8) & 0xFF) : nil
      let name: String
      switch outcome {
      case .welcomed: name = "welcomed"
      case .forbidden: name = "refused (forbidden)"
      case .tooMany: name = "refused (tooMany)"
      case .otherError: name = "another error"
      case .closed: name = "closed without an answer"
      case .timedOut: name = "no answer in time"
      case .capNotMet: name = "held requests beyond the cap not refused"
      case nil: name = exited ? "failed" : "killed"
      }
      count("\(child.kind): \(name)")
      if outcome == .welcomed && Self.mustBeRefused(child.kind) {
        count("BREACH: \(child.kind) welcomed")
      }
      if outcome == .capNotMet { count("BREACH: held requests beyond max-held-requests kept") }
    }
  }
}
