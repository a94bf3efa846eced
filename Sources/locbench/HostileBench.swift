import Foundation

/// `locbench hostile`: the system daemon under a hostile uid (issue 14; `docs/security.md`,
/// "Figures"). Not a test: it measures and reports, and never fails.
///
/// Each row starts a fresh system daemon (the release `locationd`, `--system` with its socket,
/// store and configuration in a private directory of mode 0755, so that another uid can connect;
/// `policy = grant`, so every identity the hostile uid makes is authorized and can make the
/// daemon hold regions and events; the caps at their documented defaults, written out), an
/// honest app of root (this process: one connection receiving a 10 Hz NMEA feed, as
/// `locbench daemon` does, latency from the feed's write to the client's read) and, but for the
/// baseline, the attacker: `locbench hostile-attacker` (`HostileAttacker`) run as uid 65534 with
/// `setpriv` from that uid's own copy of locbench, making one attack at full speed for the row.
///
/// Measured per row: the honest fixes (delivered of sent; latency p50, p99, max and the p99
/// against the baseline row's, target at most 2x), the daemon's peak resident memory (`VmHWM`,
/// target at most 100 MB), its CPU seconds per wall second over the measured fixes, the growth
/// of its store (file and WAL) while the attacker ran, and what the hostile uid holds afterwards
/// (`apps` of the control role: identities, regions, kept events, each within its cap). A guard
/// ends the attacker (not the row) when the daemon's resident memory or the store's growth passes
/// `--guard-mb`, so that a cap that does not bound enough cannot take the machine down.
enum HostileBench {
  /// The run's parameters (`locbench hostile [--seconds N] [--attack NAME[,NAME...]]
  /// [--locationd PATH] [--guard-mb N] [--keep] [--no-groups]`).
  struct Options {
    var seconds = 60.0
    var attacks = HostileAttack.allCases
    var locationd: String?
    var guardMegabytes = 1000
    /// Whether the run's directory (each row's daemon log, store and attacker output) is kept.
    var keep = false
    /// Whether the daemon, the honest app and the attacker run in CPU groups of their own, as
    /// systemd's slices place them (`HostileCPUGroups`); `--no-groups` measures without.
    var groups = true
    var rate = 10.0
    /// Epochs before the measured ones, while the attacker starts.
    var warmup = 30

    /// Measured fixes per row.
    var fixes: Int { max(1, Int((seconds * rate).rounded())) }
    /// Seconds the attacker runs: the warm-up, the measured fixes and one more second.
    var attackSeconds: Double { Double(warmup + fixes) / rate + 1 }
  }

  /// The hostile uid (`nobody` on Debian).
  static let hostileUID: UInt32 = 65534
  static let setpriv = "/usr/bin/setpriv"

  /// The caps the daemon runs with: the documented defaults (`docs/security.md`, "Caps"),
  /// written into its configuration so that the census checks what the daemon enforces.
  static let caps = (
    connectionsPerUID: 256, apps: 256, regions: 50_000, regionsPerUID: 10_000,
    pendingEvents: 10_000
  )

  /// The daemon's configuration file.
  static var configuration: String {
    """
    # locbench hostile: every app is authorized when it first asks (no agent), so the hostile
    # uid's identities may hold regions and events; the caps are the documented defaults.
    policy = grant
    max-connections-per-uid = \(caps.connectionsPerUID)
    max-apps-per-uid = \(caps.apps)
    max-regions = \(caps.regions)
    max-regions-per-uid = \(caps.regionsPerUID)
    max-pending-events = \(caps.pendingEvents)
    max-held-requests = 256
    queue-limit = 1048576
    hello-timeout = 5
    strikes = 3

    """
  }

  /// Where a run keeps its files, and who is who.
  struct Workspace {
    /// The run's directory (mode 0755): one subdirectory per row.
    var directory: String
    /// The principals' CPU groups, if the run uses them.
    var groups: HostileCPUGroups? = nil
    /// The daemon.
    var locationd: String
    /// The hostile uid's directory, and its copy of locbench there.
    var attackerDirectory: String
    var attackerExecutable: String
    /// The hostile uid's own program as the system daemon names it.
    var attackerApp: String { attackerExecutable + "@\(hostileUID)" }
  }

  static func run() {
    signal(SIGPIPE, SIG_IGN)
    guard let options = parseOptions(Array(CommandLine.arguments.dropFirst(2))) else {
      print(
        "usage: locbench hostile [--seconds N] [--attack NAME[,NAME...]] [--locationd PATH] "
          + "[--guard-mb N] [--keep] [--no-groups]")
      for attack in HostileAttack.allCases {
        print("  \(attack.rawValue) (\(attack.label)): \(attack.summary)")
      }
      return
    }
    guard getuid() == 0 else {
      print(
        "locbench hostile: nothing measured: it needs root, to run the attacker as another uid "
          + "(\(hostileUID), with setpriv) against a system daemon")
      return
    }
    guard access(setpriv, X_OK) == 0 else {
      print("locbench hostile: nothing measured: \(setpriv) is missing (Debian's util-linux)")
      return
    }
    print(
      "locbench hostile: system daemon, honest app of uid 0 on a \(DaemonBenchReport.format(options.rate, 0)) Hz "
        + "NMEA feed, attacker uid \(hostileUID); \(DaemonBenchReport.format(options.seconds, 0)) s "
        + "per row (\(options.fixes) fixes, after \(options.warmup) warm-up), "
        + "\(ProcessInfo.processInfo.activeProcessorCount) cores, load average "
        + DaemonBench.loadAverage())
    var workspace: Workspace
    do {
      workspace = try prepare(options)
    } catch {
      print("locbench hostile: nothing measured: \(error)")
      return
    }
    if options.groups {
      workspace.groups = HostileCPUGroups.make()
      if let groups = workspace.groups {
        do {
          try groups.move(getpid(), to: .honest)
        } catch {
          print("locbench hostile: \(error); measuring without CPU groups")
          groups.remove()
          workspace.groups = nil
        }
      }
    }
    print(
      workspace.groups.map {
        "CPU groups: locationd, the honest app and the attacker each in a group of its own with "
          + "equal weight, as systemd's system.slice and user-UID.slice (\($0.root))"
      }
        ?? "CPU groups: none (\(options.groups ? "no writable cpu controller" : "--no-groups")): "
        + "every process competes with every other, the attacker's included")
    defer {
      workspace.groups?.remove()
      if options.keep {
        progress("kept \(workspace.directory)")
      } else {
        try? FileManager.default.removeItem(atPath: workspace.directory)
      }
    }
    var results: [HostileBenchResult] = []
    var skipped: [String] = []
    for attack in options.attacks {
      progress("\(attack.rawValue) (\(attack.label)): \(attack.summary)")
      do {
        results.append(try HostileBenchRow.measure(attack, in: workspace, options: options))
      } catch {
        skipped.append("\(attack.rawValue): not measured: \(error)")
      }
      progress("\(attack.rawValue): done; load average \(DaemonBench.loadAverage())")
    }
    HostileBenchReport.print(results, skipped: skipped, options: options)
  }

  static func parseOptions(_ arguments: [String]) -> Options? {
    var options = Options()
    var index = 0
    func value() -> String? {
      index += 1
      return index < arguments.count ? arguments[index] : nil
    }
    while index < arguments.count {
      switch arguments[index] {
      case "--seconds":
        guard let v = value().flatMap({ Double($0) }), v >= 1, v <= 3600 else { return nil }
        options.seconds = v
      case "--attack":
        guard let v = value() else { return nil }
        var chosen: [HostileAttack] = [.baseline]
        for name in v.split(separator: ",") {
          guard let attack = HostileAttack(rawValue: String(name)) else { return nil }
          if !chosen.contains(attack) { chosen.append(attack) }
        }
        options.attacks = chosen
      case "--locationd":
        guard let v = value() else { return nil }
        options.locationd = v
      case "--guard-mb":
        guard let v = value().flatMap({ Int($0) }), v >= 100 else { return nil }
        options.guardMegabytes = v
      case "--keep":
        options.keep = true
      case "--no-groups":
        options.groups = false
      default: return nil
      }
      index += 1
    }
    return options
  }

  /// Writes a progress line to standard error (results go to standard output).
  static func progress(_ text: String) {
    FileHandle.standardError.write(Data("locbench hostile: \(text)\n".utf8))
  }

  /// The run's directory on disk (the stores may grow by gigabytes under attack), the daemon,
  /// and the hostile uid's own copy of this program, which it may link under any name.
  private static func prepare(_ options: Options) throws -> Workspace {
    var daemonOptions = DaemonBench.Options()
    daemonOptions.locationd = options.locationd
    let locationd = try DaemonBenchLocationd.executable(daemonOptions)
    let made = try DaemonBenchLocationd.temporaryDirectory(
      prefix: "locbench-hostile", inMemory: false)
    // The path the kernel shows (no doubled slash), since identities are paths.
    let directory = URL(fileURLWithPath: made).resolvingSymlinksInPath().path
    do {
      try DaemonBenchSystem.check(chmod(directory, 0o755), "chmod \(directory)")
      let attackerDirectory = directory + "/hostile"
      let attackerExecutable = attackerDirectory + "/locbench"
      try DaemonBenchSystem.check(mkdir(attackerDirectory, 0o755), "mkdir \(attackerDirectory)")
      let own = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
      try FileManager.default.copyItem(atPath: own, toPath: attackerExecutable)
      for path in [attackerDirectory, attackerExecutable] {
        try DaemonBenchSystem.check(chown(path, hostileUID, hostileUID), "chown \(path)")
        try DaemonBenchSystem.check(chmod(path, 0o755), "chmod \(path)")
      }
      return Workspace(
        directory: directory, locationd: locationd, attackerDirectory: attackerDirectory,
        attackerExecutable: attackerExecutable)
    } catch {
      try? FileManager.default.removeItem(atPath: directory)
      throw error
    }
  }
}
