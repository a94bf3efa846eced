import Foundation

/// `locbench daemon`: fan-out of one NMEA feed to many clients, `locationd` against gpsd.
///
/// Both daemons read the same generated NMEA 0183 feed (RMC + GGA per epoch, 10 Hz by default)
/// from a TCP server in this process, and serve the same number of clients, all connections of
/// this process served by one `poll()` loop (non-blocking sockets, no thread per client):
/// - gpsd (the Debian package, `/usr/sbin/gpsd -N -n -S PORT tcp://127.0.0.1:FEED`): clients send
///   `?WATCH={"enable":true,"json":true}` and read TPV reports. Debian's gpsd serves at most 64
///   subscribers per process, so the clients are spread round-robin over as many gpsd processes
///   as needed (63 clients each), each reading its own connection to the feed; CPU and memory are
///   summed over them.
/// - locationd (the release product, built first if out of date, started as a child with
///   `--source nmea+tcp://127.0.0.1:FEED`, a private socket and store, and `--policy grant`):
///   clients speak protocol v1 as role `app`: hello, register client 1, N addRegion (unique
///   identifiers, circles 5 to 30 km north of the track, `initialState` outside, so no region
///   event fires), startUpdates with best accuracy, no distance filter and no automatic pause.
///   All connections come from this process, so they are one app to the daemon.
///
/// Latency: `CLOCK_MONOTONIC` at the write of an epoch to the daemon's feed connection, to
/// `CLOCK_MONOTONIC` when a client's `read` returned the line carrying that fix (matched by the
/// fix's time; the first delivery per client and fix counts). Both figures are printed: from the
/// write of the fix's own epoch (the headline for both: gpsd and our `NMEAStreamSource` learn
/// which sentence ends a cycle and report on it), and from the write of the next epoch (for a
/// decoder that would wait for the next epoch to close one). Warm-up epochs are not counted. Daemon CPU is utime + stime from `/proc/PID/stat` over
/// the measured epochs; memory is `VmRSS` and `VmHWM` from `/proc/PID/status` at the end.
///
/// By default the daemons run one after the other (the floor first, with at most 100 fixes), so
/// each meets other minutes of a shared machine's noise. With `--interleave` all are set up
/// first, their clients on one loop, and fed the same epochs in the same minutes, daemon `i` of
/// `n` at `i / n` of each period: the ratios to the floor and to gpsd then compare like with like.
enum DaemonBench {
  /// The run's parameters (`locbench daemon [--clients N] [--regions N] [--fixes N] [--rate HZ]
  /// [--warmup N] [--gpsd PATH] [--locationd PATH] [--skip-gpsd] [--skip-daemon] [--skip-floor]
  /// [--interleave] [--samples DIR] [--process-floor]`).
  struct Options {
    var clients = 500
    var regions = 100
    var fixes = 300
    var rate = 10.0
    var warmup = 20
    var gpsd = "/usr/sbin/gpsd"
    var locationd: String?
    var skipGPSD = false
    var skipDaemon = false
    var skipFloor = false
    var clientsPerGPSD = 63
    var interleave = false
    /// A directory for each daemon's latencies epoch by epoch, to see the tail in time order
    /// (`--samples DIR`; `DaemonBenchLatency.epochRows`).
    var samples: String?
    /// The floor in a child process too (`--process-floor`, `DaemonBenchProcessFloor`).
    var processFloor = false

    /// The epochs written: warm-up, measured, and one that closes the last measured epoch.
    var epochs: Int { warmup + fixes + 1 }
    /// The measured epochs.
    var measured: Range<Int> { warmup..<(warmup + fixes) }
  }

  static func run() {
    signal(SIGPIPE, SIG_IGN)
    guard let options = parseOptions(Array(CommandLine.arguments.dropFirst(2))) else {
      print(
        "usage: locbench daemon [--clients N] [--regions N] [--fixes N] [--rate HZ] [--warmup N]"
          + " [--gpsd PATH] [--locationd PATH] [--skip-gpsd] [--skip-daemon] [--skip-floor]"
          + " [--interleave] [--samples DIR] [--process-floor]")
      return
    }
    print(
      "locbench daemon: \(options.clients) clients, \(options.fixes) fixes at "
        + "\(DaemonBenchReport.format(options.rate, 1)) Hz (plus \(options.warmup) warm-up), "
        + "fed in real time from one NMEA TCP feed"
        + (options.interleave ? ", the daemons interleaved" : ", one daemon after the other")
        + "; load average \(loadAverage())")
    var skipped: [String] = []
    var kinds: [Kind] = []
    if !options.skipFloor { kinds.append(.floor) }
    if options.processFloor { kinds.append(.processFloor) }
    if options.skipDaemon {
      skipped.append("locationd: skipped (--skip-daemon)")
    } else {
      kinds.append(.locationd)
    }
    if options.skipGPSD {
      skipped.append("gpsd: skipped (--skip-gpsd)")
    } else if access(options.gpsd, X_OK) != 0 {
      skipped.append(
        "gpsd: baseline skipped: \(options.gpsd) is not installed (Debian package gpsd)")
    } else {
      kinds.append(.gpsd)
    }
    var results: [DaemonBenchResult] = []
    if options.interleave {
      results = runInterleaved(kinds, options: options, skipped: &skipped)
    } else {
      for kind in kinds {
        do {
          results.append(try runAlone(kind, options: options))
        } catch {
          skipped.append("\(kind.rawValue): not measured: \(error)")
        }
      }
    }
    DaemonBenchReport.print(results, skipped: skipped, options: options)
    if let directory = options.samples { writeSamples(results, to: directory) }
  }

  /// Writes each daemon's `epochRows` to `DIR/NAME.txt`.
  static func writeSamples(_ results: [DaemonBenchResult], to directory: String) {
    try? FileManager.default.createDirectory(
      atPath: directory, withIntermediateDirectories: true)
    for result in results {
      let path = directory + "/" + result.name + ".txt"
      if !FileManager.default.createFile(atPath: path, contents: Data(result.epochRows.utf8)) {
        print("locbench daemon: could not write \(path)")
      }
    }
    print("locbench daemon: each epoch's latencies are in \(directory)/NAME.txt")
  }

  /// The daemons the bench can run.
  enum Kind: String {
    case floor, locationd, gpsd
    case processFloor = "floor-process"
  }

  /// Sets up `kind` on `clients` (its lines routed by `router`).
  static func makePhase(
    _ kind: Kind, options: Options, feed: DaemonBenchFeed, clients: DaemonBenchClients,
    router: DaemonBenchRouter
  ) throws -> DaemonBenchPhase {
    switch kind {
    case .floor:
      return try DaemonBenchFloor(options: options, feed: feed, clients: clients, router: router)
    case .locationd:
      return try DaemonBenchLocationd(
        options: options, feed: feed, clients: clients, router: router)
    case .gpsd:
      return try DaemonBenchGPSD(options: options, feed: feed, clients: clients, router: router)
    case .processFloor:
      return try DaemonBenchProcessFloor(
        options: options, feed: feed, clients: clients, router: router)
    }
  }

  /// Sets up, feeds and measures one daemon alone (the floor with at most 100 measured fixes).
  static func runAlone(_ kind: Kind, options: Options) throws -> DaemonBenchResult {
    var phaseOptions = options
    if kind == .floor {
      phaseOptions.fixes = min(options.fixes, 100)
      phaseOptions.warmup = min(options.warmup, 10)
    }
    let clients = DaemonBenchClients()
    defer { clients.closeAll() }
    let router = DaemonBenchRouter()
    let feed = DaemonBenchFeed(rate: options.rate)
    let phase = try makePhase(
      kind, options: phaseOptions, feed: feed, clients: clients, router: router)
    progress("\(kind.rawValue): feeding \(phaseOptions.epochs) epochs")
    let ownBefore = DaemonBenchSystem.ownCPUSeconds()
    let seconds = DaemonBench.feed(
      feed, targets: [phase.target], options: phaseOptions, clients: clients,
      handler: router.route)
    return try phase.result(
      seconds: seconds, clientCPU: DaemonBenchSystem.ownCPUSeconds() - ownBefore)
  }

  /// Sets up every daemon of `kinds` on one client loop, then feeds them the same epochs in the
  /// same minutes (`kinds[i]` of `n` at `i / n` of each period), so the machine's noise of those
  /// minutes falls on all of them, the floor included.
  static func runInterleaved(
    _ kinds: [Kind], options: Options, skipped: inout [String]
  ) -> [DaemonBenchResult] {
    let clients = DaemonBenchClients()
    defer { clients.closeAll() }
    let router = DaemonBenchRouter()
    let feed = DaemonBenchFeed(rate: options.rate)
    var phases: [(kind: Kind, phase: DaemonBenchPhase)] = []
    for kind in kinds {
      do {
        phases.append(
          (
            kind,
            try makePhase(kind, options: options, feed: feed, clients: clients, router: router)
          ))
      } catch {
        skipped.append("\(kind.rawValue): not measured: \(error)")
      }
    }
    guard !phases.isEmpty else { return [] }
    progress(
      "feeding \(options.epochs) epochs to "
        + phases.map(\.kind.rawValue).joined(separator: ", ") + ", interleaved")
    let ownBefore = DaemonBenchSystem.ownCPUSeconds()
    let seconds = DaemonBench.feed(
      feed, targets: phases.map(\.phase.target), options: options, clients: clients,
      handler: router.route)
    let ownCPU = DaemonBenchSystem.ownCPUSeconds() - ownBefore
    var results: [DaemonBenchResult] = []
    for (kind, phase) in phases {
      do {
        results.append(try phase.result(seconds: seconds, clientCPU: nil))
      } catch {
        skipped.append("\(kind.rawValue): not measured: \(error)")
      }
    }
    if var last = results.popLast() {
      last.notes.append(
        "interleaved: \(phases.count) daemons fed the same epochs, "
          + "\(DaemonBenchReport.format(1000 / options.rate / Double(phases.count), 1)) ms apart, "
          + "their clients on one loop; client side CPU for all "
          + "\(DaemonBenchReport.format(ownCPU, 2)) s")
      results.append(last)
    }
    return results
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
      case "--clients":
        guard let v = value().flatMap({ Int($0) }), v > 0 else { return nil }
        options.clients = v
      case "--regions":
        guard let v = value().flatMap({ Int($0) }), v >= 0 else { return nil }
        options.regions = v
      case "--fixes":
        guard let v = value().flatMap({ Int($0) }), v > 0 else { return nil }
        options.fixes = v
      case "--warmup":
        guard let v = value().flatMap({ Int($0) }), v >= 0 else { return nil }
        options.warmup = v
      case "--rate":
        guard let v = value().flatMap({ Double($0) }), v > 0, v <= 100 else {
          return nil
        }
        options.rate = v
      case "--gpsd":
        guard let v = value() else { return nil }
        options.gpsd = v
      case "--locationd":
        guard let v = value() else { return nil }
        options.locationd = v
      case "--skip-gpsd": options.skipGPSD = true
      case "--skip-daemon": options.skipDaemon = true
      case "--skip-floor": options.skipFloor = true
      case "--interleave": options.interleave = true
      case "--process-floor": options.processFloor = true
      case "--samples":
        guard let v = value() else { return nil }
        options.samples = v
      default: return nil
      }
      index += 1
    }
    return options
  }

  static func loadAverage() -> String {
    let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
    return text.split(separator: " ").prefix(3).joined(separator: " ")
  }

  // MARK: Shared by both phases

  /// Writes a progress line to standard error (results go to standard output).
  static func progress(_ text: String) {
    FileHandle.standardError.write(Data("locbench daemon: \(text)\n".utf8))
  }

  /// Pumps `clients` until `done` holds, or throws after `seconds`.
  static func wait(
    _ clients: DaemonBenchClients, seconds: Double, what: String,
    handler: (Int, UnsafeRawBufferPointer, UInt64) -> Void, until done: () -> Bool
  ) throws {
    let deadline = DaemonBenchSystem.now() + UInt64(seconds * 1e9)
    while !done() {
      if DaemonBenchSystem.now() > deadline {
        throw DaemonBenchSystem.Failure(description: "\(what): not done within \(Int(seconds)) s")
      }
      clients.pump(timeoutMilliseconds: 20, handler: handler)
    }
  }

  /// Writes every epoch to every feed connection on the feed's schedule, pumping the clients in
  /// between; records the write times; after the last write, pumps until every measured fix is
  /// delivered or one more second has passed. `usage` is read when the first measured epoch is
  /// written and again at the end.
  static func feed(
    _ feed: DaemonBenchFeed, to connections: [Int32], options: Options,
    clients: DaemonBenchClients, latency: DaemonBenchLatency,
    usage: @escaping () -> DaemonBenchSystem.Usage,
    handler: (Int, UnsafeRawBufferPointer, UInt64) -> Void
  ) -> (before: DaemonBenchSystem.Usage, after: DaemonBenchSystem.Usage, seconds: Double) {
    let target = DaemonBenchTarget(latency: latency, usage: usage)
    target.connections = connections
    let seconds = DaemonBench.feed(
      feed, targets: [target], options: options, clients: clients, handler: handler)
    return (target.before, target.after, seconds)
  }

  /// Writes every epoch to every target's feed connections, target `i` of `n` at `i / n` of each
  /// period after the first (so interleaved daemons are fed the same epochs in the same minutes,
  /// never at the same moment), pumping the clients in between; records the write times; after
  /// the last write, pumps until every target's measured fixes are delivered or one more second
  /// has passed. Each target's usage is read when its first measured epoch is written and again
  /// at the end. Returns the wall-clock seconds from the first measured write to the end.
  static func feed(
    _ feed: DaemonBenchFeed, targets: [DaemonBenchTarget], options: Options,
    clients: DaemonBenchClients, handler: (Int, UnsafeRawBufferPointer, UInt64) -> Void
  ) -> Double {
    let period = UInt64(feed.periodMilliseconds) * 1_000_000
    let begin = DaemonBenchSystem.now() + 100_000_000
    var measuredStart: UInt64 = 0
    for epoch in 0..<options.epochs {
      let bytes = feed.epoch(epoch)
      for (slot, target) in targets.enumerated() {
        let due =
          begin + UInt64(epoch) * period + period * UInt64(slot) / UInt64(targets.count)
        while true {
          let current = DaemonBenchSystem.now()
          if current >= due { break }
          clients.pump(timeoutMilliseconds: Int32((due - current) / 1_000_000), handler: handler)
        }
        if epoch == options.warmup {
          target.before = target.usage()
          if slot == 0 { measuredStart = DaemonBenchSystem.now() }
        }
        for (index, fd) in target.connections.enumerated() {
          target.latency.written[index][epoch] = DaemonBenchSystem.now()
          try? DaemonBenchSystem.writeAll(fd, bytes)
          DaemonBenchSystem.drain(fd)
        }
      }
    }
    let deadline = DaemonBenchSystem.now() + 1_000_000_000
    while DaemonBenchSystem.now() < deadline {
      clients.pump(timeoutMilliseconds: 10, handler: handler)
      if targets.allSatisfy({
        $0.latency.measuredDeliveries >= $0.latency.clients * $0.latency.measured.count
      }) {
        break
      }
    }
    for target in targets { target.after = target.usage() }
    return Double(DaemonBenchSystem.now() - measuredStart) / 1e9
  }
}

/// One daemon of `locbench daemon`, set up (its clients connected on the shared loop, its lines
/// routed to it) and waiting for its feed.
protocol DaemonBenchPhase: AnyObject {
  /// What the feed writes to and measures.
  var target: DaemonBenchTarget { get }
  /// The result once fed; `clientCPU` is the bench's own CPU over the feed when this phase was
  /// fed alone (nil: shared with the other phases).
  func result(seconds: Double, clientCPU: Double?) throws -> DaemonBenchResult
}

/// One daemon fed by `DaemonBench.feed(_:targets:options:clients:handler:)`: the connections it
/// reads the feed on, its latency bookkeeping, how to read its processes' usage, and that usage
/// at the first measured write and at the end.
final class DaemonBenchTarget {
  /// The feed connections, one per daemon process (`latency.written`'s first index).
  var connections: [Int32] = []
  /// The phase's latency bookkeeping.
  let latency: DaemonBenchLatency
  /// The daemon processes' usage now (none until set).
  var usage: () -> DaemonBenchSystem.Usage
  /// The usage when the first measured epoch was written.
  var before = DaemonBenchSystem.Usage()
  /// The usage at the end.
  var after = DaemonBenchSystem.Usage()

  init(
    latency: DaemonBenchLatency,
    usage: @escaping () -> DaemonBenchSystem.Usage = { DaemonBenchSystem.Usage() }
  ) {
    self.latency = latency
    self.usage = usage
  }
}

/// Hands each line the shared client loop reads to the phase that owns the connection: phases
/// add their connections one after the other, so each owns the indices from its first on.
final class DaemonBenchRouter {
  typealias Handler = (Int, UnsafeRawBufferPointer, UInt64) -> Void
  private var phases: [(first: Int, handle: Handler)] = []

  /// Routes connections from index `first` on (until the next phase's first) to `handle`, with
  /// indices counted from `first`.
  func add(first: Int, _ handle: @escaping Handler) {
    phases.append((first, handle))
  }

  /// Hands the line to its phase's handler.
  func route(_ client: Int, _ line: UnsafeRawBufferPointer, _ time: UInt64) {
    for phase in phases.reversed() where client >= phase.first {
      phase.handle(client - phase.first, line, time)
      return
    }
  }
}
