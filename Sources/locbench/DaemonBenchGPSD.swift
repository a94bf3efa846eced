import Foundation

/// The baseline half of `locbench daemon`: gpsd's fan-out of the feed to `?WATCH` clients.
enum DaemonBenchGPSD {
  private static let tpv = Array(#""class":"TPV""#.utf8)
  private static let watch = Array(#""class":"WATCH""#.utf8)
  private static let timeKey = Array(#""time":""#.utf8)

  /// Starts the gpsd processes, connects the clients, feeds every epoch and measures.
  static func measure(_ options: DaemonBench.Options) throws -> DaemonBenchResult {
    let instances = (options.clients + options.clientsPerGPSD - 1) / options.clientsPerGPSD
    let directory = try DaemonBenchLocationd.temporaryDirectory(prefix: "locbench-gpsd")
    var pids: [pid_t] = []
    var feeds: [Int32] = []
    let clients = DaemonBenchClients()
    defer {
      clients.closeAll()
      for pid in pids { DaemonBenchSystem.stop(pid) }
      for fd in feeds { close(fd) }
      try? FileManager.default.removeItem(atPath: directory)
    }

    // One feed listener and one gpsd per instance, so each gpsd's feed connection is known.
    var ports: [Int] = []
    for instance in 0..<instances {
      let (listener, feedPort) = try DaemonBenchSystem.listenLoopback()
      defer { close(listener) }
      let port = try DaemonBenchSystem.freeLoopbackPort()
      let pid = try DaemonBenchSystem.spawn(
        options.gpsd, ["-N", "-n", "-S", String(port), "tcp://127.0.0.1:\(feedPort)"],
        logPath: "\(directory)/gpsd-\(instance).log")
      pids.append(pid)
      ports.append(port)
      feeds.append(
        try DaemonBenchSystem.accept(
          listener, deadline: DaemonBenchSystem.now() + 10_000_000_000,
          what: "gpsd \(instance) reading the feed"))
    }

    let feed = DaemonBenchFeed(rate: options.rate)
    let latency = DaemonBenchLatency(
      epochs: options.epochs, measured: options.measured, clients: options.clients,
      feeds: instances)
    var watching = [Bool](repeating: false, count: options.clients)
    var watchingCount = 0
    var tpvLines = 0
    let handler: (Int, UnsafeRawBufferPointer, UInt64) -> Void = { client, line, time in
      if DaemonBenchLine.contains(tpv, in: line) {
        tpvLines += 1
        guard let start = DaemonBenchLine.end(of: timeKey, in: line),
          let milliseconds = DaemonBenchLine.isoMilliseconds(in: line, at: start)
        else { return }
        latency.record(
          client: client, epoch: feed.index(ofMilliseconds: milliseconds), at: time)
      } else if !watching[client] && DaemonBenchLine.contains(watch, in: line) {
        watching[client] = true
        watchingCount += 1
      }
    }

    // Clients round-robin over the instances; at most 32 waiting for their WATCH answer.
    let setupStart = DaemonBenchSystem.now()
    for client in 0..<options.clients {
      let instance = client % instances
      latency.feedOfClient[client] = instance
      var fd: Int32 = -1
      let deadline = DaemonBenchSystem.now() + 10_000_000_000
      while fd < 0 {
        do {
          fd = try DaemonBenchSystem.connectLoopback(port: ports[instance])
        } catch {
          if DaemonBenchSystem.now() > deadline || DaemonBenchSystem.hasExited(pids[instance]) {
            throw error
          }
          usleep(20_000)
        }
      }
      let index = clients.add(fd)
      clients.send(index, line: #"?WATCH={"enable":true,"json":true}"#)
      try DaemonBench.wait(clients, seconds: 20, what: "gpsd WATCH answers", handler: handler) {
        client + 1 - watchingCount < 32
      }
    }
    try DaemonBench.wait(clients, seconds: 20, what: "gpsd WATCH answers", handler: handler) {
      watchingCount == options.clients
    }
    let setupSeconds = Double(DaemonBenchSystem.now() - setupStart) / 1e9

    func usage() -> DaemonBenchSystem.Usage {
      var total = DaemonBenchSystem.Usage(cpuSeconds: 0, residentBytes: 0, peakResidentBytes: 0)
      for pid in pids {
        guard let one = DaemonBenchSystem.usage(of: pid) else { continue }
        total.cpuSeconds += one.cpuSeconds
        total.residentBytes += one.residentBytes
        total.peakResidentBytes += one.peakResidentBytes
      }
      return total
    }
    DaemonBench.progress("gpsd: \(instances) processes ready; feeding \(options.epochs) epochs")
    let ownBefore = DaemonBenchSystem.ownCPUSeconds()
    let (before, after, seconds) = DaemonBench.feed(
      feed, to: feeds, options: options, clients: clients, latency: latency, usage: usage,
      handler: handler)
    let ownCPU = DaemonBenchSystem.ownCPUSeconds() - ownBefore
    let single = pids.first.flatMap { DaemonBenchSystem.usage(of: $0) }
    var notes = [
      "gpsd: \(instances) processes (Debian's gpsd serves at most 64 subscribers each), "
        + "\(options.clients) WATCH clients connected in "
        + "\(DaemonBenchReport.format(setupSeconds, 2)) s; \(tpvLines) TPV lines, "
        + "\(latency.duplicates) repeated, \(latency.unmatched) off the grid; "
        + "client side CPU \(DaemonBenchReport.format(ownCPU, 2)) s"
    ]
    if let single {
      notes.append(
        "gpsd: one process with \(options.clientsPerGPSD) clients: RSS "
          + "\(DaemonBenchReport.megabytes(single.residentBytes)) MB, peak "
          + "\(DaemonBenchReport.megabytes(single.peakResidentBytes)) MB")
    }
    return DaemonBenchResult(
      name: "gpsd", fromEpoch: latency.summary(offset: 0), fromClose: latency.summary(offset: 1),
      headlineFromClose: false, cpuSeconds: after.cpuSeconds - before.cpuSeconds,
      fixes: options.fixes, seconds: seconds, residentBytes: after.residentBytes,
      peakResidentBytes: after.peakResidentBytes, processes: instances,
      closedClients: clients.closedCount, notes: notes)
  }
}
