import Foundation

/// The locationd half of `locbench daemon`: the built `locationd` as a child process, clients
/// speaking protocol v1 over its Unix socket.
final class DaemonBenchLocationd: DaemonBenchPhase {
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

  /// The `locationd` to run: `--locationd PATH`, else the release product of this package built
  /// as `make` builds the installed programs (the Swift runtime linked statically, the code laid
  /// out for the hot path), by the Makefile's `bench-locationd` in a build directory of its own
  /// (`.build-bench`): brought up to date first, so that the bench never measures a stale daemon,
  /// and `swift run -c release locbench`'s own build is left alone.
  static func executable(_ options: DaemonBench.Options) throws -> String {
    if let path = options.locationd { return path }
    // This file is <root>/Sources/locbench/DaemonBenchLocationd.swift.
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .deletingLastPathComponent().deletingLastPathComponent().path
    let log = NSTemporaryDirectory() + "/locbench-build-locationd.log"
    DaemonBench.progress("building locationd (make bench-locationd)")
    let pid = try DaemonBenchSystem.spawn(
      "/usr/bin/env", ["make", "-s", "-C", root, "bench-locationd"], logPath: log)
    let status = DaemonBenchSystem.waitForExit(pid)
    guard status == 0 else {
      throw DaemonBenchSystem.Failure(
        description: "`make bench-locationd` failed (status \(status)); see \(log)")
    }
    let path = "\(root)/.build-bench/release/locationd"
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

  let target: DaemonBenchTarget
  private let options: DaemonBench.Options
  private let clients: DaemonBenchClients
  private let clientRange: Range<Int>
  private var directory = ""
  private var logPath = ""
  private var listener: Int32 = -1
  private var feedConnection: Int32 = -1
  private var pid: pid_t = 0
  private var welcomed = 0
  private var startedTotal = 0
  private var failedRegions = 0
  private var errors: [String] = []
  private var locationLines = 0
  private var connectSeconds = 0.0
  private var regionSeconds = 0.0
  private var growth = ""
  private var afterSetup: DaemonBenchSystem.Usage?

  /// Starts locationd, connects and sets up the clients on `clients`, starts their updates and
  /// waits until the daemon reads the feed.
  init(
    options: DaemonBench.Options, feed: DaemonBenchFeed, clients: DaemonBenchClients,
    router: DaemonBenchRouter
  ) throws {
    self.options = options
    self.clients = clients
    clientRange = clients.count..<(clients.count + options.clients)
    let latency = DaemonBenchLatency(
      epochs: options.epochs, measured: options.measured, clients: options.clients, feeds: 1)
    target = DaemonBenchTarget(latency: latency)
    target.usage = { [weak self] in
      self.flatMap { DaemonBenchSystem.usage(of: $0.pid) } ?? DaemonBenchSystem.Usage()
    }
    let first = clients.count
    router.add(first: first) { [weak self] client, line, time in
      self?.handle(client, line, time, feed: feed)
    }
    try start()
    try connectClients(router: router)
    try addRegions(router: router)
    try startUpdates(router: router)
  }

  deinit {
    if pid > 0 { DaemonBenchSystem.stop(pid) }
    if listener >= 0 { close(listener) }
    if feedConnection >= 0 { close(feedConnection) }
    if !directory.isEmpty { try? FileManager.default.removeItem(atPath: directory) }
  }

  private func handle(
    _ client: Int, _ line: UnsafeRawBufferPointer, _ time: UInt64, feed: DaemonBenchFeed
  ) {
    if Self.recordLocations(line, client: client, at: time, feed: feed, latency: target.latency) {
      locationLines += 1
    } else if DaemonBenchLine.contains(Self.regionStarted, in: line) {
      startedTotal += 1
    } else if DaemonBenchLine.contains(Self.regionFailed, in: line) {
      startedTotal += 1
      failedRegions += 1
    } else if DaemonBenchLine.contains(Self.welcome, in: line) {
      welcomed += 1
    } else if DaemonBenchLine.contains(Self.error, in: line) {
      if errors.count < 3 { errors.append(String(decoding: line, as: UTF8.self)) }
    }
  }

  private func failure(_ text: String) -> DaemonBenchSystem.Failure {
    Self.failure(text, logPath: logPath)
  }

  /// Throws the first error line locationd sent, if any.
  private func checkErrors() throws {
    if !errors.isEmpty { throw failure("error from locationd: \(errors[0])") }
  }

  /// Starts the daemon with a private socket, store and configuration.
  private func start() throws {
    let program = try Self.executable(options)
    directory = try Self.temporaryDirectory(prefix: "locbench-locationd")
    logPath = "\(directory)/locationd.log"
    let feedPort: Int
    (listener, feedPort) = try DaemonBenchSystem.listenLoopback()
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
        "--foreground", "--socket", "\(directory)/socket", "--store",
        "\(directory)/store.sqlite", "--source", "nmea+tcp://127.0.0.1:\(feedPort)", "--policy",
        "grant", "--config", configuration,
      ], logPath: logPath)
  }

  /// Waits for the socket, then connects every client and says hello (at most 32 unanswered).
  private func connectClients(router: DaemonBenchRouter) throws {
    let setupStart = DaemonBenchSystem.now()
    let deadline = setupStart + 20_000_000_000
    for client in 0..<options.clients {
      let fd = try Self.connect(
        "\(directory)/socket", daemon: &pid, logPath: logPath, deadline: deadline)
      let index = clients.add(fd)
      clients.send(index, line: Self.helloLine)
      try DaemonBench.wait(
        clients, seconds: 20, what: "locationd welcomes", handler: router.route
      ) { client + 1 - welcomed < 32 || !errors.isEmpty }
      try checkErrors()
    }
    try DaemonBench.wait(
      clients, seconds: 20, what: "locationd welcomes", handler: router.route
    ) { welcomed == options.clients || !errors.isEmpty }
    try checkErrors()
    connectSeconds = Double(DaemonBenchSystem.now() - setupStart) / 1e9
  }

  /// Registers each client and adds its regions, one client at a time (at most 4 clients'
  /// regions pending).
  private func addRegions(router: DaemonBenchRouter) throws {
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
      var batch: [UInt8] = Array(Self.registerLine.utf8) + [10]
      for index in 0..<options.regions {
        batch.append(contentsOf: Self.region(client: client, index: index).utf8)
        batch.append(10)
      }
      clients.send(clientRange.lowerBound + client, batch)
      try DaemonBench.wait(
        clients, seconds: 60, what: "locationd regionStarted answers", handler: router.route
      ) { startedTotal >= (client - 3) * options.regions || !errors.isEmpty }
      try checkErrors()
    }
    try DaemonBench.wait(
      clients, seconds: 60, what: "locationd regionStarted answers", handler: router.route
    ) { startedTotal >= options.clients * options.regions || !errors.isEmpty }
    try checkErrors()
    let regionEnd = DaemonBenchSystem.now()
    regionSeconds = Double(regionEnd - regionStart) / 1e9
    if tenths.count >= 10 {
      let first = Double(tenths[1] - tenths[0]) / 1e9
      let last = Double(regionEnd - tenths[9]) / 1e9
      growth =
        "; first tenth \(DaemonBenchReport.format(first, 2)) s, last tenth "
        + "\(DaemonBenchReport.format(last, 2)) s"
    }
    afterSetup = DaemonBenchSystem.usage(of: pid)
  }

  /// Starts every client's updates; the source starts with the first: waits until locationd
  /// connects to the feed.
  private func startUpdates(router: DaemonBenchRouter) throws {
    for client in clientRange {
      clients.send(client, line: Self.startUpdatesLine)
    }
    let acceptDeadline = DaemonBenchSystem.now() + 20_000_000_000
    while feedConnection < 0 {
      clients.pump(timeoutMilliseconds: 0, handler: router.route)
      do {
        feedConnection = try DaemonBenchSystem.accept(
          listener, deadline: min(acceptDeadline, DaemonBenchSystem.now() + 50_000_000),
          what: "locationd reading the feed")
      } catch {
        if DaemonBenchSystem.now() > acceptDeadline { throw failure("\(error)") }
      }
    }
    target.connections = [feedConnection]
    DaemonBench.progress("locationd: regions added, updates started, the feed connected")
  }

  func result(seconds: Double, clientCPU: Double?) throws -> DaemonBenchResult {
    if DaemonBenchSystem.hasExited(pid) {
      pid = 0
      throw failure("locationd exited during the run")
    }
    let latency = target.latency
    var notes = [
      "locationd: \(options.clients) connections (one app: all from this process) in "
        + "\(DaemonBenchReport.format(connectSeconds, 2)) s; \(options.clients * options.regions) "
        + "regions added in \(DaemonBenchReport.format(regionSeconds, 2)) s "
        + "(\(failedRegions) failed\(growth)); \(locationLines) locations lines, "
        + "\(latency.duplicates) repeated fixes, \(latency.unmatched) off the grid"
        + (clientCPU.map { "; client side CPU \(DaemonBenchReport.format($0, 2)) s" } ?? "")
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
      cpuSeconds: target.after.cpuSeconds - target.before.cpuSeconds, fixes: options.fixes,
      seconds: seconds, residentBytes: target.after.residentBytes,
      peakResidentBytes: target.after.peakResidentBytes, processes: 1,
      closedClients: clientRange.count { !clients.isOpen($0) }, notes: notes,
      epochRows: latency.epochRows(offset: 0))
  }
}
