import Foundation
import LocationModel

/// `locbench latency`: how long after a receiver finishes an epoch on the wire the consumer holds
/// the location, measured as a user would, on one machine in one run.
///
/// A pseudo-terminal stands for the serial line (`LatencyBenchPTY`); the bench writes one GGA + RMC
/// epoch per period (`DaemonBenchFeed`, 10 and 20 Hz by default) on absolute `CLOCK_MONOTONIC`
/// deadlines and notes when each write returned. Each path then reads that terminal, in turn:
///
/// - **gpsd**: `gpsd -N -n -b -S PORT /dev/pts/N` (read-only, no hunting), a socket client on
///   `?WATCH={"enable":true,"json":true}`; the time is when the client's `read` returned the TPV.
/// - **embedded**: a child process with `CORELOCATION_SOURCE=nmea:///dev/pts/N` and
///   `CORELOCATION_DAEMON=off`, a `CLLocationManager` made on the main thread, its delegate on
///   the main run loop (`LatencyBenchClient`).
/// - **live**: the same with `CLLocationUpdate.liveUpdates()` in a task.
/// - **locationd**: the release `locationd` reading the terminal (`--source nmea:///dev/pts/N`),
///   and the delegate child as its client (`CORELOCATION_DAEMON_SOCKET`).
/// - **locationd-socket** (not run by default): the same daemon, and a bare client of its
///   protocol reading on a thread of its own, as gpsd's client does: the daemon's share of the
///   path, without the app's runtime.
/// - **gpsd-app** (not run by default): gpsd again, and an app of the delegate child's shape as
///   its client, its main run loop reading gpsd's socket (`LatencyBenchGPSDApp`): the
///   like-for-like baseline of the locationd path, the same app runtime on both sides of the
///   comparison.
///
/// Each path is fed until it has delivered 5 locations (at most 30 s), then 10 warm-up epochs,
/// then the measured epochs, then one more; an epoch's latency is from the return of its write to
/// the first time the consumer had its location (matched by the location's time). p50, p90, p99,
/// max and the ratio to gpsd's in the same run; epochs never delivered are counted. With
/// `--interleave`, all the paths run at once, each on a terminal of its own, their writes spread
/// evenly over each period, so that every path's tail comes from the same minutes of the
/// machine's noise (`measureInterleaved`). After the table, how late the bench's own writer woke
/// for the measured epochs' deadlines (`LatencyBenchStalls`): the machine's delay in waking an
/// idle thread in the same minutes, which any path's tail can meet too.
///
/// `--breakdown` runs the paths again with `CORELOCATION_LATENCY_TRACE` set (the runtime then
/// writes a line per stage a fix passes, `LatencyTrace`), and prints the median time from the
/// epoch's write to each stage: where the time goes. The tracing's own writes cost a few
/// microseconds per stage, so those runs do not count for the headline figures. It then times one
/// epoch's decoding and one fix's encoding warm, after a cache sweep and after sleeping a period
/// (`LatencyBenchWake`): what the machine itself charges code that wakes once per epoch.
///
/// `--wake US` and `--spin US` set `CORELOCATION_EPOCH_WAKE` and `CORELOCATION_EPOCH_SPIN` for the
/// processes the run starts (`EpochLead`: the readers wake up, or poll, from that lead before each
/// epoch; `--wake 0` turns the default wake-up off); the table's last column is each path's
/// processor time per epoch, so that what either costs is printed beside what it buys.
enum LatencyBench {
  struct Options {
    var rates: [Double] = [10, 20]
    var epochs = 600
    var paths = ["gpsd", "embedded", "live", "locationd"]
    var gpsd = "/usr/sbin/gpsd"
    var locationd: String?
    var breakdown = false
    /// All paths at once, their epochs interleaved (`--interleave`, `measureInterleaved`).
    var interleave = false
    /// A directory for each path's latencies, one epoch a line ("EPOCH MILLISECONDS", then how
    /// late the bench's writer woke for that epoch, in ms: `LatencyBenchStalls`), to see
    /// the tail in time order (`--samples DIR`); with `--breakdown`, the traced runs' latencies
    /// ("PATH-RATE-traced.txt") and each traced epoch's stages ("PATH-RATE-stages.txt") too.
    var samples: String?
    /// The spin before each epoch, in microseconds, for every process of ours the run starts
    /// (`--spin US`: `CORELOCATION_EPOCH_SPIN`, `EpochLead`); nil for none.
    var spin: Int?
    /// The wake-up before each epoch, in microseconds (`--wake US`: `CORELOCATION_EPOCH_WAKE`,
    /// `EpochLead`; 0 for none); nil for the default.
    var wake: Int?
  }

  /// One traced stage of a path: the median milliseconds from the epoch's write to it, and the
  /// median of each epoch's own step from its previous traced stage (a difference of two medians
  /// can mislead: the stages' spreads differ), and that step's 99th percentile (where the tail
  /// comes from).
  struct StageTime {
    var name: String
    var median: Double
    var step: Double?
    var stepP99: Double?
  }

  struct Result {
    var path: String
    var rate: Double
    var latencies: [Double]
    var lost: Int
    var note: String?
    /// Each traced stage's times (with `--breakdown`).
    var stages: [StageTime] = []
    /// Processor time of the processes the path started (gpsd, `locationd`, the app; not the
    /// bench's own socket clients), in µs per epoch written, from warm-up to the end.
    var processorPerEpoch: Double?
    /// How late the bench's writer woke for each measured epoch's deadline, in ms.
    var writerLateness: [Double] = []

    func percentile(_ fraction: Double) -> Double { LatencyBench.percentile(latencies, fraction) }
  }

  /// The value at `fraction` of `values` sorted (NaN for none).
  static func percentile(_ values: [Double], _ fraction: Double) -> Double {
    guard !values.isEmpty else { return .nan }
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
  }

  /// The middle value of `values` (the upper one of the two for an even count); at least one.
  static func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

  static func run() {
    signal(SIGPIPE, SIG_IGN)
    guard let options = parse(Array(CommandLine.arguments.dropFirst(2))) else {
      print(
        "usage: locbench latency [--rates 10,20] [--epochs N]"
          + " [--paths gpsd,embedded,live,locationd,locationd-socket,gpsd-app]"
          + " [--gpsd PATH] [--locationd PATH] [--breakdown] [--interleave] [--samples DIR]"
          + " [--wake US] [--spin US]")
      return
    }
    // Inherited by `locationd` and the apps the run starts (gpsd ignores it).
    if let spin = options.spin {
      setenv("CORELOCATION_EPOCH_SPIN", String(spin), 1)
    } else {
      unsetenv("CORELOCATION_EPOCH_SPIN")
    }
    if let wake = options.wake {
      setenv("CORELOCATION_EPOCH_WAKE", String(wake), 1)
    } else {
      unsetenv("CORELOCATION_EPOCH_WAKE")
    }
    print(
      "locbench latency: \(options.epochs) measured epochs (GGA + RMC) per path and rate over a "
        + "pseudo-terminal; load average \(DaemonBench.loadAverage())"
        + (options.spin.map { "; spin before each epoch \($0) µs" }
          ?? "; wake-up before each epoch \(options.wake.map { "\($0) µs" } ?? "by default")"))
    var results: [Result] = []
    for rate in options.rates {
      if options.interleave {
        FileHandle.standardError.write(
          Data(
            ("locbench latency: \(options.paths.joined(separator: ", ")) at "
              + "\(DaemonBenchReport.format(rate, 0)) Hz, interleaved\n").utf8))
        results += measureInterleaved(paths: options.paths, rate: rate, options: options)
        continue
      }
      for path in options.paths {
        FileHandle.standardError.write(
          Data("locbench latency: \(path) at \(DaemonBenchReport.format(rate, 0)) Hz\n".utf8))
        do {
          results.append(try measure(path: path, rate: rate, options: options))
        } catch {
          results.append(
            Result(path: path, rate: rate, latencies: [], lost: 0, note: "\(error)"))
        }
      }
    }
    report(results)
    LatencyBenchStalls.report(results)
    guard options.breakdown else { return }
    var traced: [Result] = []
    for rate in options.rates {
      if options.interleave {
        let paths = options.paths.filter { !$0.hasPrefix("gpsd") }
        FileHandle.standardError.write(
          Data(
            ("locbench latency: \(paths.joined(separator: ", ")) at "
              + "\(DaemonBenchReport.format(rate, 0)) Hz, interleaved, traced\n").utf8))
        traced += measureInterleaved(paths: paths, rate: rate, options: options, trace: true)
          .filter { $0.note == nil }
        continue
      }
      for path in options.paths where !path.hasPrefix("gpsd") {
        FileHandle.standardError.write(
          Data(
            "locbench latency: \(path) at \(DaemonBenchReport.format(rate, 0)) Hz, traced\n".utf8))
        if let result = try? measure(path: path, rate: rate, options: options, trace: true) {
          traced.append(result)
        }
      }
    }
    reportStages(traced)
    if let rate = options.rates.first { LatencyBenchWake.report(rate: rate) }
  }

  static func parse(_ arguments: [String]) -> Options? {
    var options = Options()
    var index = 0
    while index < arguments.count {
      let argument = arguments[index]
      let value = index + 1 < arguments.count ? arguments[index + 1] : nil
      switch argument {
      case "--rates":
        guard let rates = value?.split(separator: ",").compactMap({ Double($0) }), !rates.isEmpty,
          rates.allSatisfy({ $0 > 0 && $0 <= 50 })
        else { return nil }
        options.rates = rates
      case "--epochs":
        guard let count = value.flatMap({ Int($0) }), count > 0 else { return nil }
        options.epochs = count
      case "--paths":
        guard let paths = value?.split(separator: ",").map(String.init), !paths.isEmpty else {
          return nil
        }
        options.paths = paths
      case "--gpsd":
        guard let value else { return nil }
        options.gpsd = value
      case "--locationd":
        guard let value else { return nil }
        options.locationd = value
      case "--samples":
        guard let value else { return nil }
        options.samples = value
      case "--spin":
        guard let spin = value.flatMap({ Int($0) }), spin > 0 else { return nil }
        options.spin = spin
      case "--wake":
        guard let wake = value.flatMap({ Int($0) }), wake >= 0 else { return nil }
        options.wake = wake
      case "--breakdown":
        options.breakdown = true
        index += 1
        continue
      case "--interleave":
        options.interleave = true
        index += 1
        continue
      default:
        return nil
      }
      index += 2
    }
    return options
  }

  // MARK: One path

  static func measure(path: String, rate: Double, options: Options, trace: Bool = false) throws
    -> Result
  {
    let run = try LatencyBenchPath.start(path, options: options, trace: trace)
    defer { run.stop() }
    let written = LatencyBenchWriter(pty: run.pty, feed: DaemonBenchFeed(rate: rate))
    // Until the consumer delivers, then warm-up, measured epochs and one more.
    let first = try run.preroll(written, rate: rate)
    let measuredStart = first + 10
    let measured = measuredStart..<(measuredStart + options.epochs)
    let processor = run.processorTime()
    for index in first..<(measured.upperBound + 1) { written.write(index) }
    // Let the last deliveries arrive.
    usleep(500_000)
    var result = run.result(
      rate: rate, written: written, measured: measured, options: options, trace: trace)
    result.processorPerEpoch =
      (run.processorTime() - processor) / 1_000 / Double(measured.upperBound + 1 - first)
    return result
  }

  /// Starts `locbench latency-client MODE` with `environment` added, its descriptor 3 the write
  /// end of a pipe; returns the read end.
  static func startClient(
    mode: String, arguments: [String] = [], environment: [String: String], logPath: String,
    pids: inout [pid_t]
  ) throws -> Int32 {
    var ends: [Int32] = [0, 0]
    guard pipe(&ends) == 0 else {
      throw DaemonBenchSystem.Failure(description: "pipe failed")
    }
    // The child gets the write end as descriptor 3 (dup2 clears the flag there), nothing else.
    _ = fcntl(ends[0], F_SETFD, FD_CLOEXEC)
    _ = fcntl(ends[1], F_SETFD, FD_CLOEXEC)
    let removed = ["CORELOCATION_SOURCE", "CORELOCATION_DAEMON", "CORELOCATION_DAEMON_SOCKET"]
    let saved = removed.map { ($0, getenv($0).map { String(cString: $0) }) }
    for name in removed { unsetenv(name) }
    for (name, value) in environment { setenv(name, value, 1) }
    defer {
      for name in environment.keys { unsetenv(name) }
      for (name, value) in saved { if let value { setenv(name, value, 1) } }
    }
    let pid = try DaemonBenchSystem.spawn(
      CommandLine.arguments[0], [LatencyBenchClient.mode, mode] + arguments, logPath: logPath,
      descriptor3: ends[1])
    close(ends[1])
    pids.append(pid)
    return ends[0]
  }

  static func connectRetrying(_ body: () throws -> Int32) throws -> Int32 {
    let deadline = DaemonBenchSystem.now() + 10_000_000_000
    while true {
      do {
        return try body()
      } catch {
        if DaemonBenchSystem.now() > deadline { throw error }
        usleep(20_000)
      }
    }
  }

  // MARK: Report

  static func reportStages(_ results: [Result]) {
    print("")
    print(
      "Where the time goes (median ms from the epoch's write to each stage, and in brackets the"
        + " median and the 99th percentile of each epoch's step from its previous stage; traced"
        + " runs):")
    print("")
    print(
      "| stage | "
        + results.map { "\($0.path) \(DaemonBenchReport.format($0.rate, 0)) Hz" }.joined(
          separator: " | ") + " |")
    print("| --- |" + String(repeating: " --- |", count: results.count))
    var names: [String] = []
    for result in results {
      for stage in result.stages where !names.contains(stage.name) { names.append(stage.name) }
    }
    for name in names {
      let cells = results.map { result -> String in
        guard let stage = result.stages.first(where: { $0.name == name }) else { return "" }
        var step = stage.step.map { " (+" + DaemonBenchReport.format($0, 3) } ?? ""
        if !step.isEmpty {
          step += stage.stepP99.map { "; p99 +" + DaemonBenchReport.format($0, 3) } ?? ""
          step += ")"
        }
        return DaemonBenchReport.format(stage.median, 3) + step
      }
      print("| \(name) | " + cells.joined(separator: " | ") + " |")
    }
  }

  static func report(_ results: [Result]) {
    func ms(_ value: Double) -> String { value.isNaN ? "-" : DaemonBenchReport.format(value, 2) }
    func ratio(_ value: Double, _ base: Double) -> String {
      value.isNaN || base.isNaN || base <= 0 ? "-" : DaemonBenchReport.format(value / base, 2) + "x"
    }
    print("")
    print(
      "| path | rate | p50 ms | p90 ms | p99 ms | max ms | lost | p50 / gpsd | p99 / gpsd | max / gpsd "
        + "| CPU µs / epoch |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for result in results {
      let base = results.first { $0.path == "gpsd" && $0.rate == result.rate && $0.note == nil }
      if let note = result.note {
        print(
          "| \(result.path) | \(DaemonBenchReport.format(result.rate, 0)) Hz | not measured: \(note) | | | | | | | | |"
        )
        continue
      }
      let p50 = result.percentile(0.5)
      let p99 = result.percentile(0.99)
      let max = result.latencies.max() ?? .nan
      print(
        "| \(result.path) | \(DaemonBenchReport.format(result.rate, 0)) Hz | \(ms(p50)) | "
          + "\(ms(result.percentile(0.9))) | \(ms(p99)) | \(ms(max)) | \(result.lost) | "
          + "\(ratio(p50, base?.percentile(0.5) ?? .nan)) | "
          + "\(ratio(p99, base?.percentile(0.99) ?? .nan)) | "
          + "\(ratio(max, base?.latencies.max() ?? .nan)) | "
          + "\(result.processorPerEpoch.map { DaemonBenchReport.format($0, 0) } ?? "-") |")
    }
  }
}
