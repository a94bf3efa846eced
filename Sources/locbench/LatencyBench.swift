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
/// max and the ratio to gpsd's in the same run; epochs never delivered are counted.
///
/// `--breakdown` runs the paths again with `CORELOCATION_LATENCY_TRACE` set (the runtime then
/// writes a line per stage a fix passes, `LatencyTrace`), and prints the median time from the
/// epoch's write to each stage: where the time goes. The tracing's own writes cost a few
/// microseconds per stage, so those runs do not count for the headline figures.
enum LatencyBench {
  struct Options {
    var rates: [Double] = [10, 20]
    var epochs = 600
    var paths = ["gpsd", "embedded", "live", "locationd"]
    var gpsd = "/usr/sbin/gpsd"
    var locationd: String?
    var breakdown = false
    /// A directory for each path's latencies, one epoch a line ("EPOCH MILLISECONDS"), to see
    /// the tail in time order (`--samples DIR`).
    var samples: String?
  }

  struct Result {
    var path: String
    var rate: Double
    var latencies: [Double]
    var lost: Int
    var note: String?
    /// Median milliseconds from the epoch's write to each traced stage (with `--breakdown`).
    var stages: [(String, Double)] = []

    func percentile(_ fraction: Double) -> Double {
      guard !latencies.isEmpty else { return .nan }
      let sorted = latencies.sorted()
      return sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
    }
  }

  static func run() {
    signal(SIGPIPE, SIG_IGN)
    guard let options = parse(Array(CommandLine.arguments.dropFirst(2))) else {
      print(
        "usage: locbench latency [--rates 10,20] [--epochs N]"
          + " [--paths gpsd,embedded,live,locationd,locationd-socket,gpsd-app]"
          + " [--gpsd PATH] [--locationd PATH] [--breakdown] [--samples DIR]")
      return
    }
    print(
      "locbench latency: \(options.epochs) measured epochs (GGA + RMC) per path and rate over a "
        + "pseudo-terminal; load average \(DaemonBench.loadAverage())")
    var results: [Result] = []
    for rate in options.rates {
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
    guard options.breakdown else { return }
    var traced: [Result] = []
    for rate in options.rates {
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
      case "--breakdown":
        options.breakdown = true
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
    let traceEnvironment = trace ? ["CORELOCATION_LATENCY_TRACE": "3"] : [:]
    let pty = try LatencyBenchPTY()
    let directory = try DaemonBenchLocationd.temporaryDirectory(prefix: "locbench-latency")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let records = LatencyBenchRecords()
    var pids: [pid_t] = []
    var descriptors: [Int32] = []
    defer {
      for pid in pids.reversed() { DaemonBenchSystem.stop(pid) }
      for fd in descriptors { close(fd) }
    }
    switch path {
    case "gpsd", "gpsd-app":
      guard access(options.gpsd, X_OK) == 0 else {
        throw DaemonBenchSystem.Failure(description: "no gpsd at \(options.gpsd)")
      }
      let port = try DaemonBenchSystem.freeLoopbackPort()
      pids.append(
        try DaemonBenchSystem.spawn(
          options.gpsd, ["-N", "-n", "-b", "-S", String(port), pty.path],
          logPath: "\(directory)/gpsd.log"))
      if path == "gpsd-app" {
        let fd = try startClient(
          mode: "gpsd", arguments: [String(port)], environment: [:],
          logPath: "\(directory)/client.log", pids: &pids)
        descriptors.append(fd)
        records.readClient(fd)
        break
      }
      let fd = try connectRetrying { try DaemonBenchSystem.connectLoopback(port: port) }
      descriptors.append(fd)
      try DaemonBenchSystem.writeAll(fd, Array("?WATCH={\"enable\":true,\"json\":true};\n".utf8))
      records.readGPSD(fd)
    case "embedded", "live":
      let fd = try startClient(
        mode: path == "live" ? "live" : "delegate",
        environment: [
          "CORELOCATION_SOURCE": "nmea://\(pty.path)", "CORELOCATION_DAEMON": "off",
          "CORELOCATION_STORE": ":memory:",
        ].merging(traceEnvironment) { $1 }, logPath: "\(directory)/client.log", pids: &pids)
      descriptors.append(fd)
      records.readClient(fd)
    case "locationd", "locationd-socket":
      let program = try DaemonBenchLocationd.executable(
        DaemonBench.Options(locationd: options.locationd))
      let socket = "\(directory)/socket"
      let log = "\(directory)/locationd.log"
      var daemonTrace: [Int32] = [-1, -1]
      if trace {
        guard pipe(&daemonTrace) == 0 else {
          throw DaemonBenchSystem.Failure(description: "pipe failed")
        }
        _ = fcntl(daemonTrace[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(daemonTrace[1], F_SETFD, FD_CLOEXEC)
        setenv("CORELOCATION_LATENCY_TRACE", "3", 1)
      }
      var daemon = try DaemonBenchSystem.spawn(
        program,
        [
          "--foreground", "--socket", socket, "--store", "\(directory)/store.sqlite", "--source",
          "nmea://\(pty.path)", "--policy", "grant",
        ], logPath: log, descriptor3: trace ? daemonTrace[1] : nil)
      if trace {
        unsetenv("CORELOCATION_LATENCY_TRACE")
        close(daemonTrace[1])
        descriptors.append(daemonTrace[0])
        records.readClient(daemonTrace[0])
      }
      pids.append(daemon)
      let probe = try DaemonBenchLocationd.connect(
        socket, daemon: &daemon, logPath: log,
        deadline: DaemonBenchSystem.now() + 20_000_000_000)
      guard path == "locationd" else {
        // A bare client of the protocol on a thread blocked in `read`, as gpsd's client is: the
        // daemon's share of the path without the app's runtime.
        descriptors.append(probe)
        try DaemonBenchSystem.writeAll(
          probe,
          Array(
            [
              DaemonBenchLocationd.helloLine, DaemonBenchLocationd.registerLine,
              DaemonBenchLocationd.startUpdatesLine,
            ].map { $0 + "\n" }.joined().utf8))
        records.readLocationd(probe)
        break
      }
      close(probe)
      let fd = try startClient(
        mode: "delegate",
        environment: ["CORELOCATION_DAEMON_SOCKET": socket, "CORELOCATION_DAEMON": "required"]
          .merging(traceEnvironment) { $1 },
        logPath: "\(directory)/client.log", pids: &pids)
      descriptors.append(fd)
      records.readClient(fd)
    default:
      throw DaemonBenchSystem.Failure(description: "unknown path \(path)")
    }

    let feed = DaemonBenchFeed(rate: rate)
    // Until the consumer delivers (at most 30 s), then warm-up, measured epochs and one more.
    let prerollLimit = Int(30 * rate)
    let written = LatencyBenchWriter(pty: pty, feed: feed)
    var first = 0
    while records.count < 5 {
      guard first < prerollLimit else {
        let logs = ["gpsd.log", "locationd.log", "client.log"].compactMap { name -> String? in
          guard let text = try? String(contentsOfFile: "\(directory)/\(name)", encoding: .utf8),
            !text.isEmpty
          else { return nil }
          return "\(name): " + text.split(separator: "\n").suffix(3).joined(separator: " / ")
        }
        throw DaemonBenchSystem.Failure(
          description: "no location within 30 s of feeding; " + logs.joined(separator: "; "))
      }
      written.write(first)
      first += 1
    }
    let measuredStart = first + 10
    let measured = measuredStart..<(measuredStart + options.epochs)
    for index in first..<(measured.upperBound + 1) { written.write(index) }
    // Let the last deliveries arrive.
    usleep(500_000)
    let received = records.firstDeliveries(feed: feed)
    var latencies: [Double] = []
    var lost = 0
    for epoch in measured {
      if let time = received[epoch], let sent = written.times[epoch] {
        latencies.append(Double(Int64(time) - Int64(sent)) / 1e6)
      } else {
        lost += 1
      }
    }
    if let directory = options.samples {
      var text = ""
      for epoch in measured {
        if let time = received[epoch], let sent = written.times[epoch] {
          text += "\(epoch) \(Double(Int64(time) - Int64(sent)) / 1e6)\n"
        }
      }
      try? text.write(
        toFile: "\(directory)/\(path)-\(Int(rate)).txt", atomically: true, encoding: .utf8)
    }
    var stages: [(String, Double)] = []
    if trace {
      let marks = records.stageMarks(feed: feed)
      for stage in LatencyTrace.Stage.allCases {
        let values = measured.compactMap { epoch -> Double? in
          guard let time = marks[stage.rawValue]?[epoch], let sent = written.times[epoch] else {
            return nil
          }
          return Double(Int64(time) - Int64(sent)) / 1e6
        }
        guard !values.isEmpty else { continue }
        stages.append((stage.rawValue, values.sorted()[values.count / 2]))
      }
      stages.append(
        (
          "app (bench's own record)",
          latencies.sorted().dropFirst(latencies.count / 2).first ?? .nan
        ))
    }
    return Result(
      path: path, rate: rate, latencies: latencies, lost: lost, note: nil, stages: stages)
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
    print("Where the time goes (median ms from the epoch's write to each stage, traced runs):")
    print("")
    print(
      "| stage | "
        + results.map { "\($0.path) \(DaemonBenchReport.format($0.rate, 0)) Hz" }.joined(
          separator: " | ") + " |")
    print("| --- |" + String(repeating: " --- |", count: results.count))
    var names: [String] = []
    for result in results {
      for (name, _) in result.stages where !names.contains(name) { names.append(name) }
    }
    for name in names {
      let cells = results.map { result -> String in
        guard let value = result.stages.first(where: { $0.0 == name })?.1 else { return "" }
        return DaemonBenchReport.format(value, 3)
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
      "| path | rate | p50 ms | p90 ms | p99 ms | max ms | lost | p50 / gpsd | p99 / gpsd | max / gpsd |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for result in results {
      let base = results.first { $0.path == "gpsd" && $0.rate == result.rate && $0.note == nil }
      if let note = result.note {
        print(
          "| \(result.path) | \(DaemonBenchReport.format(result.rate, 0)) Hz | not measured: \(note) | | | | | | | |"
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
          + "\(ratio(max, base?.latencies.max() ?? .nan)) |")
    }
  }
}

/// The epochs written to the terminal and when each write returned.
final class LatencyBenchWriter {
  let pty: LatencyBenchPTY
  let feed: DaemonBenchFeed
  private(set) var times: [Int: UInt64] = [:]
  private var next: UInt64
  private let period: UInt64

  init(pty: LatencyBenchPTY, feed: DaemonBenchFeed) {
    self.pty = pty
    self.feed = feed
    period = UInt64(feed.periodMilliseconds) * 1_000_000
    next = DaemonBenchSystem.now() + period
  }

  /// Waits for the epoch's deadline (absolute, so the rate does not drift), then writes it.
  func write(_ index: Int) {
    var deadline = timespec(tv_sec: Int(next / 1_000_000_000), tv_nsec: Int(next % 1_000_000_000))
    while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nil) == EINTR {}
    pty.write(feed.epoch(index))
    times[index] = DaemonBenchSystem.now()
    next += period
  }
}

/// What the consumer delivered: (location time in Unix ms, monotonic ns), from a reader thread.
final class LatencyBenchRecords: @unchecked Sendable {
  // @unchecked: `records` is guarded by `lock`.
  private let lock = NSLock()
  private var records: [(Int64, UInt64)] = []
  private var marks: [(String, Int64, UInt64)] = []
  private static let tpv = Array(#""class":"TPV""#.utf8)
  private static let timeKey = Array(#""time":""#.utf8)

  /// The time of a gpsd TPV report, in Unix milliseconds; nil for any other line.
  static func tpvMilliseconds(in line: UnsafeRawBufferPointer) -> Int64? {
    guard DaemonBenchLine.contains(tpv, in: line),
      let start = DaemonBenchLine.end(of: timeKey, in: line)
    else { return nil }
    return DaemonBenchLine.isoMilliseconds(in: line, at: start)
  }

  var count: Int { lock.withLock { records.count } }

  private func add(_ milliseconds: Int64, _ time: UInt64) {
    lock.withLock { records.append((milliseconds, time)) }
  }

  /// The first delivery of each epoch, by epoch index.
  func firstDeliveries(feed: DaemonBenchFeed) -> [Int: UInt64] {
    var first: [Int: UInt64] = [:]
    for (milliseconds, time) in lock.withLock({ records }) {
      guard let epoch = feed.index(ofMilliseconds: milliseconds) else { continue }
      if first[epoch] == nil { first[epoch] = time }
    }
    return first
  }

  /// Reads lines from `fd` on a thread of its own until it ends, handing each with the time its
  /// `read` returned.
  private func readLines(
    _ fd: Int32, _ handle: @escaping @Sendable (UnsafeRawBufferPointer, UInt64) -> Void
  ) {
    // Blocking reads: the loopback helpers make non-blocking sockets for poll loops.
    _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
    Thread.detachNewThread {
      var buffer = [UInt8](repeating: 0, count: 65_536)
      var pending: [UInt8] = []
      while true {
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        let time = DaemonBenchSystem.now()
        if count <= 0 { return }
        pending.append(contentsOf: buffer[0..<count])
        while let newline = pending.firstIndex(of: 0x0A) {
          pending[..<newline].withUnsafeBytes { handle($0, time) }
          pending.removeSubrange(...newline)
        }
      }
    }
  }

  /// gpsd's TPV reports.
  func readGPSD(_ fd: Int32) {
    readLines(fd) { [self] line, time in
      guard let milliseconds = Self.tpvMilliseconds(in: line) else { return }
      add(milliseconds, time)
    }
  }

  /// `locations` lines from `locationd`, by the time of their last fix.
  func readLocationd(_ fd: Int32) {
    readLines(fd) { [self] line, time in
      var last: Double?
      guard DaemonBenchLocationd.forEachFixTime(in: line, { last = $0 }), let last else { return }
      add(Int64((last * 1000).rounded()), time)
    }
  }

  /// The client's records, "MILLISECONDS MONOTONIC", and trace lines, "STAGE MILLISECONDS
  /// MONOTONIC".
  func readClient(_ fd: Int32) {
    readLines(fd) { [self] line, _ in
      let fields = String(decoding: line, as: UTF8.self).split(separator: " ")
      if fields.count == 3, let milliseconds = Int64(fields[1]), let time = UInt64(fields[2]) {
        lock.withLock { marks.append((String(fields[0]), milliseconds, time)) }
        return
      }
      guard fields.count == 2, let milliseconds = Int64(fields[0]), let time = UInt64(fields[1])
      else { return }
      add(milliseconds, time)
    }
  }

  /// The first time each traced stage saw each epoch, by stage and epoch index.
  func stageMarks(feed: DaemonBenchFeed) -> [String: [Int: UInt64]] {
    var first: [String: [Int: UInt64]] = [:]
    for (stage, milliseconds, time) in lock.withLock({ marks }) {
      guard let epoch = feed.index(ofMilliseconds: milliseconds) else { continue }
      if first[stage]?[epoch] == nil { first[stage, default: [:]][epoch] = time }
    }
    return first
  }
}
