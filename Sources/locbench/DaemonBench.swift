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
enum DaemonBench {
  /// The run's parameters (`locbench daemon [--clients N] [--regions N] [--fixes N] [--rate HZ]
  /// [--warmup N] [--gpsd PATH] [--locationd PATH] [--skip-gpsd] [--skip-daemon] [--skip-floor]`).
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
          + " [--gpsd PATH] [--locationd PATH] [--skip-gpsd] [--skip-daemon] [--skip-floor]")
      return
    }
    print(
      "locbench daemon: \(options.clients) clients, \(options.fixes) fixes at "
        + "\(DaemonBenchReport.format(options.rate, 1)) Hz (plus \(options.warmup) warm-up), "
        + "fed in real time from one NMEA TCP feed; load average \(loadAverage())")
    var results: [DaemonBenchResult] = []
    var skipped: [String] = []

    if !options.skipFloor {
      do {
        results.append(try DaemonBenchFloor.measure(options))
      } catch {
        skipped.append("floor: not measured: \(error)")
      }
    }
    if options.skipDaemon {
      skipped.append("locationd: skipped (--skip-daemon)")
    } else {
      do {
        results.append(try DaemonBenchLocationd.measure(options))
      } catch {
        skipped.append("locationd: not measured: \(error)")
      }
    }
    if options.skipGPSD {
      skipped.append("gpsd: skipped (--skip-gpsd)")
    } else if access(options.gpsd, X_OK) != 0 {
      skipped.append(
        "gpsd: baseline skipped: \(options.gpsd) is not installed (Debian package gpsd)")
    } else {
      do {
        results.append(try DaemonBenchGPSD.measure(options))
      } catch {
        skipped.append("gpsd: baseline not measured: \(error)")
      }
    }
    DaemonBenchReport.print(results, skipped: skipped, options: options)
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
    usage: () -> DaemonBenchSystem.Usage,
    handler: (Int, UnsafeRawBufferPointer, UInt64) -> Void
  ) -> (before: DaemonBenchSystem.Usage, after: DaemonBenchSystem.Usage, seconds: Double) {
    let period = UInt64(feed.periodMilliseconds) * 1_000_000
    let begin = DaemonBenchSystem.now() + 100_000_000
    var before = DaemonBenchSystem.Usage(cpuSeconds: 0, residentBytes: 0, peakResidentBytes: 0)
    var measuredStart: UInt64 = 0
    for epoch in 0..<options.epochs {
      let due = begin + UInt64(epoch) * period
      while true {
        let current = DaemonBenchSystem.now()
        if current >= due { break }
        clients.pump(timeoutMilliseconds: Int32((due - current) / 1_000_000), handler: handler)
      }
      if epoch == options.warmup {
        before = usage()
        measuredStart = DaemonBenchSystem.now()
      }
      let bytes = feed.epoch(epoch)
      for (index, fd) in connections.enumerated() {
        latency.written[index][epoch] = DaemonBenchSystem.now()
        try? DaemonBenchSystem.writeAll(fd, bytes)
        DaemonBenchSystem.drain(fd)
      }
    }
    let deadline = DaemonBenchSystem.now() + 1_000_000_000
    let expected = options.clients * options.fixes
    while DaemonBenchSystem.now() < deadline {
      clients.pump(timeoutMilliseconds: 10, handler: handler)
      if latency.measuredDeliveries >= expected { break }
    }
    let after = usage()
    let seconds = Double(DaemonBenchSystem.now() - measuredStart) / 1e9
    return (before, after, seconds)
  }
}
