import Foundation

/// The floor of `locbench daemon` in a process of its own (`--process-floor`): the same stand-in
/// as `DaemonBenchFloor` (on each epoch's RMC it writes that epoch's `locations` line, encoded
/// before the run, to every client in a loop of blocking writes), but a child process that
/// accepts its feed and its clients on a Unix socket, as `locationd` does, instead of a thread of
/// the harness on socket pairs.
///
/// Why: the harness's clients are read by one thread. A sender in the harness's own process
/// switches to that reader within one address space; `locationd`, another process, cannot. This
/// floor pays what any daemon process pays there, so `locationd`'s ratio to it is the cost of our
/// own work. It is printed beside the target, which stays against the harness's floor. (On the
/// machines measured it did about as well as the harness's floor: `docs/performance.md`, "The
/// daemon's fan-out to 500 clients".)
final class DaemonBenchProcessFloor: DaemonBenchPhase {
  /// The hidden `locbench` mode the child runs: `daemon-floor-process START PERIOD EPOCHS CLIENTS`
  /// with the listening socket as its descriptor 3.
  static let mode = "daemon-floor-process"

  let target: DaemonBenchTarget
  private let fixes: Int
  private var pid: pid_t = 0
  private var feedConnection: Int32 = -1
  private let directory: String

  init(
    options: DaemonBench.Options, feed: DaemonBenchFeed, clients: DaemonBenchClients,
    router: DaemonBenchRouter
  ) throws {
    fixes = options.fixes
    target = DaemonBenchFloor.target(options: options, feed: feed, clients: clients, router: router)
    directory = try DaemonBenchLocationd.temporaryDirectory(prefix: "locbench-floor")
    let path = "\(directory)/socket"
    let listener = try Self.listenUnix(path: path, backlog: options.clients + 1)
    defer { close(listener) }
    pid = try DaemonBenchSystem.spawn(
      CommandLine.arguments[0],
      [
        Self.mode, String(feed.startMilliseconds), String(feed.periodMilliseconds),
        String(options.epochs), String(options.clients),
      ], logPath: "\(directory)/floor.log", descriptor3: listener)
    let child = pid
    target.usage = { DaemonBenchSystem.usage(of: child) ?? DaemonBenchSystem.Usage() }
    // The feed first, then the clients: the child accepts them in that order.
    feedConnection = try DaemonBenchSystem.connectUnix(path: path)
    // Blocking, as the floor's feed end is: the feed's writes do not retry.
    _ = fcntl(feedConnection, F_SETFL, fcntl(feedConnection, F_GETFL) & ~O_NONBLOCK)
    target.connections = [feedConnection]
    for _ in 0..<options.clients {
      _ = clients.add(try DaemonBenchSystem.connectUnix(path: path))
    }
  }

  deinit {
    if feedConnection >= 0 {
      shutdown(feedConnection, Int32(SHUT_RDWR))
      close(feedConnection)
    }
    if pid > 0 { DaemonBenchSystem.stop(pid) }
    try? FileManager.default.removeItem(atPath: directory)
  }

  func result(seconds: Double, clientCPU: Double?) -> DaemonBenchResult {
    let latency = target.latency
    return DaemonBenchResult(
      name: "floor-process", fromEpoch: latency.summary(offset: 0),
      fromClose: latency.summary(offset: 1), headlineFromClose: false,
      cpuSeconds: target.after.cpuSeconds - target.before.cpuSeconds, fixes: fixes,
      seconds: seconds, residentBytes: target.after.residentBytes,
      peakResidentBytes: target.after.peakResidentBytes, processes: 1, closedClients: 0,
      notes: [
        "floor-process: the floor's stand-in in a child process, its feed and clients on a Unix "
          + "socket as locationd's are (--process-floor)"
      ], epochRows: latency.epochRows(offset: 0))
  }

  /// A Unix socket listening at `path`.
  static func listenUnix(path: String, backlog: Int) throws -> Int32 {
    var address = try DaemonBenchSystem.unixAddress(path)
    // Close-on-exec: only the floor's child gets it, as its descriptor 3 (`spawn`'s `dup2`).
    let fd = try DaemonBenchSystem.check(
      socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0), "socket")
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
      }
    }
    do {
      _ = try DaemonBenchSystem.check(bound, "bind \(path)")
      _ = try DaemonBenchSystem.check(listen(fd, Int32(backlog)), "listen")
    } catch {
      close(fd)
      throw error
    }
    return fd
  }

  /// The child: accepts the feed and `CLIENTS` clients on descriptor 3, then fans out until the
  /// feed ends (`DaemonBenchFloor.fanOut`).
  static func main(_ arguments: [String]) {
    guard arguments.count == 4, let start = Int64(arguments[0]),
      let period = Int64(arguments[1]), let epochs = Int(arguments[2]),
      let count = Int(arguments[3])
    else {
      print("usage: locbench \(mode) START PERIOD EPOCHS CLIENTS (descriptor 3: the listener)")
      exit(2)
    }
    let feed = DaemonBenchFeed(startMilliseconds: start, periodMilliseconds: period)
    let lines = (0..<epochs).map { DaemonBenchFloor.line(feed, epoch: $0) }
    var accepted: [Int32] = []
    for _ in 0..<(count + 1) {
      let fd = accept(3, nil, nil)
      guard fd >= 0 else {
        print("accept failed: \(String(cString: strerror(errno)))")
        exit(1)
      }
      accepted.append(fd)
    }
    close(3)
    DaemonBenchFloor.fanOut(source: accepted[0], to: Array(accepted.dropFirst()), lines: lines)
    exit(0)
  }
}
