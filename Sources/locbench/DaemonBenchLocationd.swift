import Foundation

/// The locationd half of `locbench daemon`: the built `locationd` as a child process, clients
/// speaking protocol v1 over its Unix socket.
enum DaemonBenchLocationd {
  private static let locations = Array(#""type":"locations""#.utf8)
  private static let welcome = Array(#""type":"welcome""#.utf8)
  private static let regionStarted = Array(#""type":"regionStarted""#.utf8)
  private static let regionFailed = Array(#""type":"regionFailed""#.utf8)
  private static let error = Array(#""type":"error""#.utf8)
  private static let timeKey = Array(#""time":"#.utf8)

  /// The lines an app's connection sends: hello, register client 1, start its updates (every
  /// location, no distance filter).
  static let helloLine = #"{"type":"hello","version":1,"role":"app"}"#
  static let registerLine = #"{"type":"register","client":1}"#
  static let startUpdatesLine =
    #"{"type":"startUpdates","client":1,"request":{"desiredAccuracy":-1,"distanceFilter":-1,"pausesAutomatically":false,"activity":"other"}}"#

  /// Calls `body` with the time (Unix seconds) of each fix of `line`, in order, when it is a
  /// `locations` delivery (no array made: the harness reads 160,000 such lines); returns whether
  /// it was one.
  static func forEachFixTime(
    in line: UnsafeRawBufferPointer, _ body: (Double) -> Void
  ) -> Bool {
    guard DaemonBenchLine.contains(locations, in: line) else { return false }
    var offset = 0
    while let start = DaemonBenchLine.end(of: timeKey, in: line, from: offset),
      let (seconds, end) = DaemonBenchLine.number(in: line, at: start)
    {
      body(seconds)
      offset = end
    }
    return true
  }

  /// A new private directory, under /dev/shm when it is writable and `inMemory` holds (so the
  /// store's commits cost no disk flushes during setup), else under the temporary directory.
  static func temporaryDirectory(prefix: String, inMemory: Bool = true) throws -> String {
    let base = inMemory && access("/dev/shm", W_OK) == 0 ? "/dev/shm" : NSTemporaryDirectory()
    var template = Array("\(base)/\(prefix)-XXXXXX".utf8CString)
    guard
      let path = template.withUnsafeMutableBufferPointer({ buffer in
        buffer.baseAddress.flatMap { mkdtemp($0) }.map { String(cString: $0) }
      })
    else { throw DaemonBenchSystem.Failure(description: "mkdtemp under \(base) failed") }
    return path
  }

  /// The `locationd` to run: `--locationd PATH`, else the release product of this package,
  /// brought up to date first with `swift build -c release --product locationd` (so the bench
  /// never measures a stale daemon; `swift run locbench` builds only locbench).
  static func executable(_ options: DaemonBench.Options) throws -> String {
    if let path = options.locationd { return path }
    // This file is <root>/Sources/locbench/DaemonBenchLocationd.swift.
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .deletingLastPathComponent().deletingLastPathComponent().path
    let log = NSTemporaryDirectory() + "/locbench-build-locationd.log"
    DaemonBench.progress("building locationd (swift build -c release --product locationd)")
    let pid = try DaemonBenchSystem.spawn(
      "/usr/bin/env",
      ["swift", "build", "--package-path", root, "-c", "release", "--product", "locationd"],
      logPath: log)
    let status = DaemonBenchSystem.waitForExit(pid)
    guard status == 0 else {
      throw DaemonBenchSystem.Failure(
        description: "`swift build -c release --product locationd` failed (status \(status)); "
          + "see \(log)")
    }
    let path = "\(root)/.build/release/locationd"
    guard access(path, X_OK) == 0 else {
      throw DaemonBenchSystem.Failure(description: "no locationd at \(path) after the build")
    }
    return path
  }

  /// Region `index` of client `client`: a circle 5 to 30 km north of the track (so never
  /// entered), radius 100 to 1,000 m.
  static func region(client: Int, index: Int) -> String {
    let serial = client &* 7919 &+ index &* 104_729
    let latitude = DaemonBenchFeed.latitude + 0.05 + Double(serial % 2237) * 0.0001
    let longitude = DaemonBenchFeed.longitude - 0.2 + Double(serial % 3001) * 0.0002
    let radius = 100 + Double(serial % 901)
    return
      #"{"type":"addRegion","client":1,"group":"manager","region":{"identifier":"c\#(client)r\#(index)","latitude":\#(latitude),"longitude":\#(longitude),"radius":\#(radius),"hysteresis":5,"notifyOnEntry":true,"notifyOnExit":true},"initialState":"outside"}"#
  }

  /// A failure whose description ends with the last lines of locationd's log at `logPath`.
  static func failure(_ text: String, logPath: String) -> DaemonBenchSystem.Failure {
    let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
    let tail = log.split(separator: "\n").suffix(5).joined(separator: " | ")
    return DaemonBenchSystem.Failure(
      description: text + (tail.isEmpty ? "" : "; locationd said: \(tail)"))
  }

  /// Connects to locationd's socket at `path` once it listens, retrying until `deadline`
  /// (monotonic ns); throws when the daemon `pid` exited first (and sets `pid` to 0, reaped).
  static func connect(
    _ path: String, daemon pid: inout pid_t, logPath: String, deadline: UInt64
  ) throws -> Int32 {
    while true {
      do {
        return try DaemonBenchSystem.connectUnix(path: path)
      } catch {
        if DaemonBenchSystem.hasExited(pid) {
          pid = 0
          throw failure("locationd exited", logPath: logPath)
        }
        if DaemonBenchSystem.now() > deadline { throw failure("\(error)", logPath: logPath) }
        usleep(20_000)
      }
    }
  }

  /// Records the fixes of a `locations` line received by `client` at `time` (matched to the
  /// feed's epochs by their time); returns whether `line` was a `locations` delivery.
  static func recordLocations(
    _ line: UnsafeRawBufferPointer, client: Int, at time: UInt64, feed: DaemonBenchFeed,
    latency: DaemonBenchLatency
  ) -> Bool {
    forEachFixTime(in: line) { seconds in
      let milliseconds = Int64((seconds * 1000).rounded())
      latency.record(client: client, epoch: feed.index(ofMilliseconds: milliseconds), at: time)
    }
  }

  /// Starts locationd, connects and sets up the clients, feeds every epoch and measures.
  static func measure(_ options: DaemonBench.Options) throws -> DaemonBenchResult {
    let program = try executable(options)
    let directory = try temporaryDirectory(prefix: "locbench-locationd")
    let socketPath = "\(directory)/socket"
    let logPath = "\(directory)/locationd.log"
    let (listener, feedPort) = try DaemonBenchSystem.listenLoopback()
    var feedConnection: Int32 = -1
    var pid: pid_t = 0
    let clients = DaemonBenchClients()
    defer {
      clients.closeAll()
      if pid > 0 { DaemonBenchSystem.stop(pid) }
      close(listener)
      if feedConnection >= 0 { close(feedConnection) }
      try? FileManager.default.removeItem(atPath: directory)
    }
    // The 500 clients stand for 500 apps, but they are one uid here: the per-uid caps (256
    // connections, 10,000 regions, 10,000 requests a second) are raised to what 500 apps of
    // their own uids would have.
    let configuration = directory + "/locationd.conf"
    try """
    max-connections-per-uid = 1000
    max-regions-per-uid = 50000
    requests-per-uid = 1000000

    """.write(toFile: configuration, atomically: false, encoding: .utf8)
    pid = try DaemonBenchSystem.spawn(
      program,
      [
        "--foreground", "--socket", socketPath, "--store", "\(directory)/store.sqlite",
        "--source", "nmea+tcp://127.0.0.1:\(feedPort)", "--policy", "grant", "--config",
        configuration,
      ], logPath: logPath)
    func failure(_ text: String) -> DaemonBenchSystem.Failure {
      Self.failure(text, logPath: logPath)
    }

    let feed = DaemonBenchFeed(rate: options.rate)
    let latency = DaemonBenchLatency(
      epochs: options.epochs, measured: options.measured, clients: options.clients, feeds: 1)
    var welcomed = 0
    var started = [Int](repeating: 0, count: options.clients)
    var startedTotal = 0
    var failedRegions = 0
    var errors: [String] = []
    var locationLines = 0
    let handler: (Int, UnsafeRawBufferPointer, UInt64) -> Void = { client, line, time in
      if recordLocations(line, client: client, at: time, feed: feed, latency: latency) {
        locationLines += 1
      } else if DaemonBenchLine.contains(regionStarted, in: line) {
        started[client] += 1
        startedTotal += 1
      } else if DaemonBenchLine.contains(regionFailed, in: line) {
        started[client] += 1
        startedTotal += 1
        failedRegions += 1
      } else if DaemonBenchLine.contains(welcome, in: line) {
        welcomed += 1
      } else if DaemonBenchLine.contains(error, in: line) {
        if errors.count < 3 { errors.append(String(decoding: line, as: UTF8.self)) }
      }
    }

    // Wait for the socket, then connect every client and say hello (at most 32 unanswered).
    let setupStart = DaemonBenchSystem.now()
    let deadline = setupStart + 20_000_000_000
    for client in 0..<options.clients {
      let fd = try connect(socketPath, daemon: &pid, logPath: logPath, deadline: deadline)
      _ = clients.add(fd)
      clients.send(client, line: helloLine)
      try DaemonBench.wait(clients, seconds: 20, what: "locationd welcomes", handler: handler) {
        client + 1 - welcomed < 32 || !errors.isEmpty
      }
      if !errors.isEmpty { throw failure("error from locationd: \(errors[0])") }
    }
    try DaemonBench.wait(clients, seconds: 20, what: "locationd welcomes", handler: handler) {
      welcomed == options.clients || !errors.isEmpty
    }
    if !errors.isEmpty { throw failure("error from locationd: \(errors[0])") }
    let connectSeconds = Double(DaemonBenchSystem.now() - setupStart) / 1e9

    // Register and add the regions, one client at a time (at most 4 clients' regions pending).
    let regionStart = DaemonBenchSystem.now()
    DaemonBench.progress(
      "locationd: adding \(options.clients * options.regions) regions over \(options.clients) "
        + "connections")
    // When the first and the last tenth of the clients' regions were sent, to show how the cost
    // of an add grows with the regions already held.
    var tenths: [UInt64] = []
    for client in 0..<options.clients {
      if options.clients >= 10 && client % (options.clients / 10) == 0 {
        tenths.append(DaemonBenchSystem.now())
      }
      var batch: [UInt8] = Array(registerLine.utf8) + [10]
      for index in 0..<options.regions {
        batch.append(contentsOf: region(client: client, index: index).utf8)
        batch.append(10)
      }
      clients.send(client, batch)
      try DaemonBench.wait(
        clients, seconds: 60, what: "locationd regionStarted answers", handler: handler
      ) { startedTotal >= (client - 3) * options.regions || !errors.isEmpty }
      if !errors.isEmpty { throw failure("error from locationd: \(errors[0])") }
    }
    try DaemonBench.wait(
      clients, seconds: 60, what: "locationd regionStarted answers", handler: handler
    ) { startedTotal >= options.clients * options.regions || !errors.isEmpty }
    if !errors.isEmpty { throw failure("error from locationd: \(errors[0])") }
    let regionEnd = DaemonBenchSystem.now()
    let regionSeconds = Double(regionEnd - regionStart) / 1e9
    var growth = ""
    if tenths.count >= 10 {
      let first = Double(tenths[1] - tenths[0]) / 1e9
      let last = Double(regionEnd - tenths[9]) / 1e9
      growth =
        "; first tenth \(DaemonBenchReport.format(first, 2)) s, last tenth "
        + "\(DaemonBenchReport.format(last, 2)) s"
    }
    DaemonBench.progress("locationd: regions added; feeding \(options.epochs) epochs")
    let afterSetup = DaemonBenchSystem.usage(of: pid)

    for client in 0..<options.clients {
      clients.send(client, line: startUpdatesLine)
    }
    // The source starts with the first startUpdates: locationd connects to the feed.
    let acceptDeadline = DaemonBenchSystem.now() + 20_000_000_000
    while feedConnection < 0 {
      clients.pump(timeoutMilliseconds: 0, handler: handler)
      do {
        feedConnection = try DaemonBenchSystem.accept(
          listener, deadline: min(acceptDeadline, DaemonBenchSystem.now() + 50_000_000),
          what: "locationd reading the feed")
      } catch {
        if DaemonBenchSystem.now() > acceptDeadline { throw failure("\(error)") }
      }
    }

    let ownBefore = DaemonBenchSystem.ownCPUSeconds()
    let empty = DaemonBenchSystem.Usage(cpuSeconds: 0, residentBytes: 0, peakResidentBytes: 0)
    let (before, after, seconds) = DaemonBench.feed(
      feed, to: [feedConnection], options: options, clients: clients, latency: latency,
      usage: { DaemonBenchSystem.usage(of: pid) ?? empty }, handler: handler)
    let ownCPU = DaemonBenchSystem.ownCPUSeconds() - ownBefore
    if DaemonBenchSystem.hasExited(pid) {
      pid = 0
      throw failure("locationd exited during the run")
    }
    var notes = [
      "locationd: \(options.clients) connections (one app: all from this process) in "
        + "\(DaemonBenchReport.format(connectSeconds, 2)) s; \(options.clients * options.regions) "
        + "regions added in \(DaemonBenchReport.format(regionSeconds, 2)) s "
        + "(\(failedRegions) failed\(growth)); \(locationLines) locations lines, "
        + "\(latency.duplicates) repeated fixes, \(latency.unmatched) off the grid; "
        + "client side CPU \(DaemonBenchReport.format(ownCPU, 2)) s"
    ]
    if let afterSetup {
      notes.append(
        "locationd: after setup, before any fix: RSS "
          + "\(DaemonBenchReport.megabytes(afterSetup.residentBytes)) MB, CPU for setup "
          + "\(DaemonBenchReport.format(afterSetup.cpuSeconds, 2)) s")
    }
    if !errors.isEmpty { notes.append("locationd errors: " + errors.joined(separator: " ")) }
    return DaemonBenchResult(
      name: "locationd", fromEpoch: latency.summary(offset: 0),
      fromClose: latency.summary(offset: 1), headlineFromClose: false,
      cpuSeconds: after.cpuSeconds - before.cpuSeconds, fixes: options.fixes, seconds: seconds,
      residentBytes: after.residentBytes, peakResidentBytes: after.peakResidentBytes,
      processes: 1, closedClients: clients.closedCount, notes: notes)
  }
}
