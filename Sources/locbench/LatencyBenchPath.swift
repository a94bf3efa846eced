import Foundation
import LocationModel

/// One path of `locbench latency` set up: its terminal, its processes and what its consumer
/// delivered. `stop()` ends the processes and removes the temporary directory.
final class LatencyBenchPath {
  let path: String
  let pty: LatencyBenchPTY
  let directory: String
  let records = LatencyBenchRecords()
  private(set) var pids: [pid_t] = []
  private(set) var descriptors: [Int32] = []
  private var stopped = false

  private init(path: String) throws {
    self.path = path
    pty = try LatencyBenchPTY()
    directory = try DaemonBenchLocationd.temporaryDirectory(prefix: "locbench-latency")
  }

  deinit { stop() }

  func stop() {
    guard !stopped else { return }
    stopped = true
    for pid in pids.reversed() { DaemonBenchSystem.stop(pid) }
    for fd in descriptors { close(fd) }
    try? FileManager.default.removeItem(atPath: directory)
  }

  /// Starts `path`'s processes on a terminal of its own (see `LatencyBench` for each path).
  static func start(_ path: String, options: LatencyBench.Options, trace: Bool) throws
    -> LatencyBenchPath
  {
    let run = try LatencyBenchPath(path: path)
    do {
      try run.start(options: options, trace: trace)
    } catch {
      run.stop()
      throw error
    }
    return run
  }

  private func start(options: LatencyBench.Options, trace: Bool) throws {
    let traceEnvironment = trace ? ["CORELOCATION_LATENCY_TRACE": "3"] : [:]
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
        let fd = try LatencyBench.startClient(
          mode: "gpsd", arguments: [String(port)], environment: [:],
          logPath: "\(directory)/client.log", pids: &pids)
        descriptors.append(fd)
        records.readClient(fd)
        return
      }
      let fd = try LatencyBench.connectRetrying {
        try DaemonBenchSystem.connectLoopback(port: port)
      }
      descriptors.append(fd)
      try DaemonBenchSystem.writeAll(fd, Array("?WATCH={\"enable\":true,\"json\":true};\n".utf8))
      records.readGPSD(fd)
    case "embedded", "live":
      let fd = try LatencyBench.startClient(
        mode: path == "live" ? "live" : "delegate",
        environment: [
          "CORELOCATION_SOURCE": "nmea://\(pty.path)", "CORELOCATION_DAEMON": "off",
          "CORELOCATION_STORE": ":memory:",
        ].merging(traceEnvironment) { $1 }, logPath: "\(directory)/client.log", pids: &pids)
      descriptors.append(fd)
      records.readClient(fd)
    case "locationd", "locationd-socket":
      try startLocationd(options: options, trace: trace, traceEnvironment: traceEnvironment)
    default:
      throw DaemonBenchSystem.Failure(description: "unknown path \(path)")
    }
  }

  private func startLocationd(
    options: LatencyBench.Options, trace: Bool, traceEnvironment: [String: String]
  ) throws {
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
      return
    }
    close(probe)
    let fd = try LatencyBench.startClient(
      mode: "delegate",
      environment: ["CORELOCATION_DAEMON_SOCKET": socket, "CORELOCATION_DAEMON": "required"]
        .merging(traceEnvironment) { $1 },
      logPath: "\(directory)/client.log", pids: &pids)
    descriptors.append(fd)
    records.readClient(fd)
  }

  /// Processor time in ns of the processes this path started, so far
  /// (`DaemonBenchSystem.processorNanoseconds`); a process gone counts 0.
  func processorTime() -> Double {
    pids.reduce(0) { $0 + DaemonBenchSystem.processorNanoseconds(of: $1) }
  }

  /// Feeds epochs through `written` until the consumer has delivered 5 locations (at most 30 s).
  /// - Returns: the index of the next epoch to write.
  func preroll(_ written: LatencyBenchWriter, rate: Double) throws -> Int {
    let prerollLimit = Int(30 * rate)
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
    return first
  }

  /// The latencies of the `measured` epochs written through `written`, and with `trace`, the
  /// median time to each traced stage.
  func result(
    rate: Double, written: LatencyBenchWriter, measured: Range<Int>,
    options: LatencyBench.Options, trace: Bool
  ) -> LatencyBench.Result {
    let feed = written.feed
    let received = records.firstDeliveries(feed: feed)
    var latencies: [Double] = []
    var lost = 0
    // "EPOCH MILLISECONDS WRITER-LATENESS" lines, only for `--samples`.
    var text = ""
    for epoch in measured {
      if let time = received[epoch], let sent = written.times[epoch] {
        let latency = Double(Int64(time) - Int64(sent)) / 1e6
        latencies.append(latency)
        if options.samples != nil {
          text += "\(epoch) \(latency) \(written.lateness[epoch] ?? .nan)\n"
        }
      } else {
        lost += 1
      }
    }
    if let samples = options.samples {
      try? text.write(
        toFile: "\(samples)/\(path)-\(Int(rate))\(trace ? "-traced" : "").txt", atomically: true,
        encoding: .utf8)
    }
    var stages: [LatencyBench.StageTime] = []
    if trace {
      let marks = records.stageMarks(feed: feed)
      // Each epoch's last traced stage so far, for the step to the next one.
      var previous: [Int: UInt64] = [:]
      // With `--samples`: each epoch's stages in order, "EPOCH STAGE=MS ..." (where a slow
      // epoch's time went).
      var epochStages: [Int: String] = [:]
      for stage in LatencyTrace.Stage.allCases {
        var values: [Double] = []
        var steps: [Double] = []
        for epoch in measured {
          guard let time = marks[stage.rawValue]?[epoch], let sent = written.times[epoch] else {
            continue
          }
          let value = Double(Int64(time) - Int64(sent)) / 1e6
          values.append(value)
          if options.samples != nil {
            epochStages[epoch, default: "\(epoch)"] += " \(stage.rawValue)=\(value)"
          }
          if let last = previous[epoch] { steps.append(Double(Int64(time) - Int64(last)) / 1e6) }
          previous[epoch] = time
        }
        guard !values.isEmpty else { continue }
        stages.append(
          .init(
            name: stage.rawValue, median: LatencyBench.median(values),
            step: steps.isEmpty ? nil : LatencyBench.median(steps),
            stepP99: steps.isEmpty ? nil : LatencyBench.percentile(steps, 0.99)))
      }
      if let samples = options.samples {
        let lines = measured.compactMap { epochStages[$0] }.joined(separator: "\n")
        try? (lines + "\n").write(
          toFile: "\(samples)/\(path)-\(Int(rate))-stages.txt", atomically: true,
          encoding: .utf8)
      }
      stages.append(
        .init(
          name: "app (bench's own record)",
          median: latencies.isEmpty ? .nan : LatencyBench.median(latencies), step: nil))
    }
    var result = LatencyBench.Result(
      path: path, rate: rate, latencies: latencies, lost: lost, note: nil, stages: stages)
    result.writerLateness = measured.compactMap { written.lateness[$0] }
    return result
  }
}
