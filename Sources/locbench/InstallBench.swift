import Foundation

/// `locbench install`: the figures of an installation (README, "Installing").
///
/// - **Size**: the installed programs under `PREFIX/bin` (their apparent sizes, and the disk they
///   take with each file counted once: whereami, locationd and locationctl are hard links of one
///   file), the gazetteer, and, with `--separate DIR`, the baseline of three separately linked,
///   stripped static programs in DIR.
/// - **Cold start to first line**: a new process each run, from `posix_spawn` to the first newline
///   on its standard output, the first run reported apart (the closest to cold: the file systems'
///   caches are left alone on a shared machine, so later runs start warm). Measured for
///   `whereami --source static://FILE` (embedded mode, a store in a scratch directory, as a user
///   runs it), `whereami --version` (the process and runtime alone), and the baseline in the
///   same run: `gpspipe -w -n 1` against a gpsd that has a fix (its first line is gpsd's VERSION
///   banner, sent on connection) and `gpspipe -w` to its first TPV report (the first location), a
///   gpsd fed a 10 Hz NMEA stream over TCP. The harness's floor is `/bin/echo`.
///
/// `locbench install --prefix DIR [--separate DIR] [--runs N] [--gpsd PATH] [--gpspipe PATH]`
enum InstallBench {
  struct Options {
    var prefix = "/usr/local"
    var separate: String?
    var runs = 30
    var gpsd = "/usr/sbin/gpsd"
    var gpspipe = "/usr/bin/gpspipe"
  }

  static let usage =
    "usage: locbench install [--prefix DIR] [--separate DIR] [--runs N] [--gpsd PATH]"
    + " [--gpspipe PATH]"

  static func run() {
    signal(SIGPIPE, SIG_IGN)
    guard let options = parse(Array(CommandLine.arguments.dropFirst(2))) else {
      print(usage)
      return
    }
    let scratch = NSTemporaryDirectory() + "locbench-install-" + UUID().uuidString
    try? FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: scratch) }
    print("locbench install: \(options.prefix); load average \(DaemonBench.loadAverage())")
    sizes(options)
    do {
      try startup(options, scratch: scratch)
    } catch {
      print("cold start: not measured: \(error)")
    }
  }

  static func parse(_ arguments: [String]) -> Options? {
    var options = Options()
    var index = 0
    func value() -> String? {
      index += 1
      return index < arguments.count ? arguments[index] : nil
    }
    while index < arguments.count {
      switch arguments[index] {
      case "--prefix":
        guard let v = value() else { return nil }
        options.prefix = v
      case "--separate":
        guard let v = value() else { return nil }
        options.separate = v
      case "--runs":
        guard let v = value().flatMap({ Int($0) }), v > 0 else { return nil }
        options.runs = v
      case "--gpsd":
        guard let v = value() else { return nil }
        options.gpsd = v
      case "--gpspipe":
        guard let v = value() else { return nil }
        options.gpspipe = v
      default:
        return nil
      }
      index += 1
    }
    return options
  }

  // MARK: Size

  static let programs = ["whereami", "locationd", "locationctl"]

  static func megabytes(_ bytes: Int) -> String {
    String(format: "%.1f MB", Double(bytes) / 1_000_000)
  }

  /// Apparent size, disk usage (512-byte blocks) and inode of a file.
  static func fileInfo(_ path: String) -> (size: Int, disk: Int, inode: UInt64)? {
    var info = stat()
    guard stat(path, &info) == 0 else { return nil }
    return (Int(info.st_size), Int(info.st_blocks) * 512, UInt64(info.st_ino))
  }

  static func sizes(_ options: Options) {
    var inodes = Set<UInt64>()
    var disk = 0
    var line: [String] = []
    for program in programs {
      guard let file = fileInfo(options.prefix + "/bin/" + program) else {
        print("size: \(options.prefix)/bin/\(program) is missing")
        return
      }
      line.append("\(program) \(megabytes(file.size))")
      if inodes.insert(file.inode).inserted { disk += file.disk }
    }
    print(
      "installed programs: \(line.joined(separator: ", ")); "
        + "\(inodes.count) file\(inodes.count == 1 ? "" : "s") on disk, \(megabytes(disk))")
    if let gazetteer = fileInfo(options.prefix + "/share/corelocation/gazetteer.clgz") {
      print("gazetteer: \(megabytes(gazetteer.size))")
    }
    guard let separate = options.separate else { return }
    var total = 0
    var each: [String] = []
    for program in programs {
      guard let file = fileInfo(separate + "/" + program) else {
        print("baseline: \(separate)/\(program) is missing")
        return
      }
      total += file.disk
      each.append("\(program) \(megabytes(file.size))")
    }
    print(
      "baseline, three separately linked static programs (stripped): \(each.joined(separator: ", "))"
        + "; \(megabytes(total)) on disk: the one file is "
        + String(format: "%.2f", Double(disk) / Double(total)) + "x of it")
  }

  // MARK: Cold start

  /// Times of `runs` runs of one command, nanoseconds to the first line.
  struct Timing {
    var name: String
    var times: [UInt64]

    var summary: String {
      let sorted = times.dropFirst().sorted()
      func ms(_ value: UInt64) -> String { String(format: "%.1f ms", Double(value) / 1e6) }
      guard let first = times.first, !sorted.isEmpty else { return "\(name): no runs" }
      let median = sorted[sorted.count / 2]
      let p90 = sorted[min(sorted.count - 1, sorted.count * 9 / 10)]
      return "\(name): first run \(ms(first)); then median \(ms(median)), p90 \(ms(p90)), "
        + "min \(ms(sorted[0])) (\(sorted.count) runs)"
    }

    var median: Double {
      let sorted = times.dropFirst().sorted()
      return sorted.isEmpty ? .nan : Double(sorted[sorted.count / 2])
    }
  }

  /// Starts a program with stdout on a pipe and returns the nanoseconds from spawning to the
  /// first line containing `until` (any line when empty); then stops it (SIGTERM) unless it
  /// exits by itself, and reaps it.
  static func timeToLine(
    _ path: String, _ arguments: [String], environment: [String: String], until: String = "",
    limitSeconds: Double = 30
  ) throws -> UInt64 {
    var pipeFDs: [Int32] = [0, 0]
    try DaemonBenchSystem.check(pipe(&pipeFDs), "pipe")
    for fd in pipeFDs { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_adddup2(&actions, pipeFDs[1], 1)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var mask = sigset_t()
    sigemptyset(&mask)
    posix_spawnattr_setsigmask(&attributes, &mask)
    var defaults = sigset_t()
    sigemptyset(&defaults)
    for signal in [SIGPIPE, SIGTERM] { sigaddset(&defaults, signal) }
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    let argv = ([path] + arguments).map { strdup($0) } + [nil]
    let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer {
      for pointer in argv { free(pointer) }
      for pointer in envp { free(pointer) }
    }
    var pid: pid_t = 0
    let start = DaemonBenchSystem.now()
    let result = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
    close(pipeFDs[1])
    defer { close(pipeFDs[0]) }
    guard result == 0 else {
      throw DaemonBenchSystem.Failure(
        description: "cannot start \(path): \(String(cString: strerror(result)))")
    }
    var pending: [UInt8] = []
    var found: UInt64?
    var buffer = [UInt8](repeating: 0, count: 65_536)
    let deadline = start + UInt64(limitSeconds * 1e9)
    let wanted = Array(until.utf8)
    reading: while found == nil, DaemonBenchSystem.now() < deadline {
      var poller = pollfd(fd: pipeFDs[0], events: Int16(POLLIN), revents: 0)
      guard poll(&poller, 1, 100) >= 0 || errno == EINTR else { break }
      guard poller.revents != 0 else { continue }
      let count = read(pipeFDs[0], &buffer, buffer.count)
      if count < 0, errno == EINTR { continue }
      guard count > 0 else { break }
      pending.append(contentsOf: buffer[0..<count])
      while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
        let line = pending[..<newline]
        let matches =
          wanted.isEmpty || line.withUnsafeBytes { DaemonBenchLine.contains(wanted, in: $0) }
        if matches {
          found = DaemonBenchSystem.now() - start
          break reading
        }
        pending.removeSubrange(...newline)
      }
    }
    if !DaemonBenchSystem.hasExited(pid) { DaemonBenchSystem.stop(pid) }
    guard let found else {
      throw DaemonBenchSystem.Failure(description: "\(path) printed no line in \(limitSeconds) s")
    }
    return found
  }

  static func measure(
    _ name: String, runs: Int, _ path: String, _ arguments: [String],
    environment: [String: String], until: String = ""
  ) throws -> Timing {
    var timing = Timing(name: name, times: [])
    for _ in 0...runs {
      timing.times.append(
        try timeToLine(path, arguments, environment: environment, until: until))
    }
    return timing
  }

  static func startup(_ options: Options, scratch: String) throws {
    let whereami = options.prefix + "/bin/whereami"
    guard access(whereami, X_OK) == 0 else {
      throw DaemonBenchSystem.Failure(description: "\(whereami) is not installed")
    }
    let position = scratch + "/geolocation"
    try "52.3702\n4.8952\n2\n50\n".write(toFile: position, atomically: true, encoding: .utf8)
    let environment = [
      "PATH": "/usr/bin:/bin", "HOME": scratch, "XDG_STATE_HOME": scratch + "/state",
      "XDG_CONFIG_HOME": scratch + "/config", "XDG_RUNTIME_DIR": scratch,
      "CORELOCATION_DAEMON": "off", "LANG": "C.UTF-8",
    ]
    print("cold start to the first line of output, \(options.runs) runs after a first:")
    let location = try measure(
      "whereami --source static://FILE", runs: options.runs, whereami,
      ["--source", "static://" + position], environment: environment)
    let version = try measure(
      "whereami --version", runs: options.runs, whereami, ["--version"], environment: environment)
    let floor = try measure(
      "/bin/echo (the harness's floor)", runs: options.runs, "/bin/echo", ["x"],
      environment: environment)
    for timing in [location, version, floor] { print("  " + timing.summary) }

    guard access(options.gpsd, X_OK) == 0, access(options.gpspipe, X_OK) == 0 else {
      print("  gpspipe: baseline skipped: \(options.gpsd) or \(options.gpspipe) is not installed")
      return
    }
    let gpsd = try GPSDWithFix(gpsd: options.gpsd, directory: scratch)
    defer { gpsd.stop() }
    let banner = try measure(
      "gpspipe -w -n 1 (gpsd's VERSION banner)", runs: options.runs, options.gpspipe,
      ["-w", "-n", "1", "127.0.0.1:\(gpsd.port)"], environment: environment)
    let fix = try measure(
      "gpspipe -w, to the first TPV (a fix; gpsd fed at 10 Hz)", runs: options.runs,
      options.gpspipe, ["-w", "127.0.0.1:\(gpsd.port)"], environment: environment,
      until: #""class":"TPV""#)
    for timing in [banner, fix] { print("  " + timing.summary) }
    print(
      "  ratio, medians: whereami's first location / gpspipe -w -n 1: "
        + String(format: "%.2f", location.median / banner.median)
        + "; / gpspipe's first TPV: " + String(format: "%.2f", location.median / fix.median))
  }

  /// gpsd reading a 10 Hz NMEA feed over TCP on loopback, with a fix by the time it is returned.
  final class GPSDWithFix: @unchecked Sendable {
    // @unchecked Sendable: `feeding` is an atomic flag in all but name (a Bool read by the feed
    // thread and written once by `stop()`; a late read only writes one more epoch); the rest is
    // set in `init` and only read afterwards.
    let port: Int
    private let pid: pid_t
    private let feed: Int32
    private let feeding = NSLock()
    private var running = true

    init(gpsd: String, directory: String) throws {
      let (listener, feedPort) = try DaemonBenchSystem.listenLoopback()
      defer { close(listener) }
      port = try DaemonBenchSystem.freeLoopbackPort()
      pid = try DaemonBenchSystem.spawn(
        gpsd, ["-N", "-n", "-S", String(port), "tcp://127.0.0.1:\(feedPort)"],
        logPath: directory + "/gpsd.log")
      feed = try DaemonBenchSystem.accept(
        listener, deadline: DaemonBenchSystem.now() + 10_000_000_000, what: "gpsd reading the feed")
      Thread { [self] in
        let stream = DaemonBenchFeed(rate: 10)
        var index = 0
        while feeding.withLock({ running }) {
          try? DaemonBenchSystem.writeAll(feed, stream.epoch(index))
          index += 1
          usleep(100_000)
        }
      }.start()
      // Ready when a client sees a TPV with a fix.
      _ = try InstallBench.timeToLine(
        "/usr/bin/gpspipe", ["-w", "127.0.0.1:\(port)"], environment: ["PATH": "/usr/bin:/bin"],
        until: #""mode":3"#, limitSeconds: 20)
    }

    func stop() {
      feeding.withLock { running = false }
      close(feed)
      DaemonBenchSystem.stop(pid)
    }
  }
}
