import Foundation
import LocationModel
import LocationProtocol

/// The measuring floor of `locbench daemon`: the least fan-out latency this harness can see on
/// this machine under its present load.
///
/// A thread of the bench process stands in for a daemon: it reads the same NMEA feed (a socket
/// pair), and on each epoch's RMC writes that epoch's `locations` line to every client (socket
/// pairs, blocking writes in a loop): no parsing, no queues, and the lines encoded before the
/// run, by the daemon's own encoder, in the shape and length `locationd` sends them (about 390
/// bytes), so the client loop reads and matches the same bytes for both. Its latency is what the
/// client loop, the kernel and the scheduler add to any daemon's.
final class DaemonBenchFloor: DaemonBenchPhase {
  let target: DaemonBenchTarget
  private let fixes: Int
  private var feedEnd: Int32 = -1

  /// Starts the stand-in thread and connects `options.clients` clients to it on `clients`.
  init(
    options: DaemonBench.Options, feed: DaemonBenchFeed, clients: DaemonBenchClients,
    router: DaemonBenchRouter
  ) throws {
    fixes = options.fixes
    // A thread of this process: no daemon process to measure.
    target = Self.target(options: options, feed: feed, clients: clients, router: router)
    var feedPair: [Int32] = [-1, -1]
    try DaemonBenchSystem.check(
      socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &feedPair),
      "socketpair")
    feedEnd = feedPair[0]
    var serverEnds: [Int32] = []
    let source = feedPair[1]
    do {
      for _ in 0..<options.clients {
        var pair: [Int32] = [-1, -1]
        try DaemonBenchSystem.check(
          socketpair(
            AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair),
          "socketpair")
        try DaemonBenchSystem.setNonBlocking(pair[0])
        _ = clients.add(pair[0])
        serverEnds.append(pair[1])
      }
    } catch {
      close(source)
      for end in serverEnds { close(end) }
      throw error
    }
    target.connections = [feedEnd]
    let ends = serverEnds
    let lines = (0..<options.epochs).map { Self.line(feed, epoch: $0) }
    let thread = Thread {
      Self.fanOut(source: source, to: ends, lines: lines)
    }
    thread.start()
  }

  /// A stand-in's target, its `locations` lines recorded from the clients added next on.
  static func target(
    options: DaemonBench.Options, feed: DaemonBenchFeed, clients: DaemonBenchClients,
    router: DaemonBenchRouter
  ) -> DaemonBenchTarget {
    let latency = DaemonBenchLatency(
      epochs: options.epochs, measured: options.measured, clients: options.clients, feeds: 1)
    router.add(first: clients.count) { client, line, time in
      _ = DaemonBenchLocationd.recordLocations(
        line, client: client, at: time, feed: feed, latency: latency)
    }
    return DaemonBenchTarget(latency: latency)
  }

  deinit {
    // Closing our end of the feed ends the thread, which closes the client ends.
    shutdown(feedEnd, Int32(SHUT_RDWR))
    close(feedEnd)
  }

  func result(seconds: Double, clientCPU: Double?) -> DaemonBenchResult {
    let latency = target.latency
    return DaemonBenchResult(
      name: "floor", fromEpoch: latency.summary(offset: 0), fromClose: latency.summary(offset: 1),
      headlineFromClose: false, cpuSeconds: .nan, fixes: fixes, seconds: seconds,
      residentBytes: 0, peakResidentBytes: 0, processes: 0, closedClients: 0,
      notes: [
        "floor: \(fixes) fixes through a thread of this process that writes the epoch's "
          + "locations line, encoded before the run, to each client socket on each RMC (the "
          + "harness's own latency)"
      ], epochRows: latency.epochRows(offset: 0))
  }

  /// Epoch `epoch`'s `locations` line as `locationd` encodes it for a client reading the feed
  /// (the values its NMEA decoder gives the feed's RMC and GGA).
  static func line(_ feed: DaemonBenchFeed, epoch: Int) -> [UInt8] {
    let position = feed.position(epoch)
    let fix = Fix(
      latitude: position.latitude, longitude: position.longitude, altitude: 12,
      ellipsoidalAltitude: 59, horizontalAccuracy: 3.6, speed: 19.438 * 1852 / 3600, course: 90,
      time: position.time, quality: .autonomous, satellitesUsed: 10,
      source: "nmea+tcp://127.0.0.1:40000")
    return DaemonProtocol.encodeLocations(client: 1, fixesJSON: DaemonProtocol.encodeFixes([fix]))
  }

  /// The stand-in daemon: counts RMC sentences on `source` and writes the matching line of
  /// `lines` to every socket in `ends`; closes them all when `source` ends.
  static func fanOut(source: Int32, to ends: [Int32], lines: [[UInt8]]) {
    var buffer = [UInt8](repeating: 0, count: 4096)
    let marker = Array("$GPRMC".utf8)
    var epoch = 0
    var carry: [UInt8] = []
    while true {
      let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
      if count < 0 && errno == EINTR { continue }
      if count <= 0 { break }
      carry.append(contentsOf: buffer[0..<count])
      var found = 0
      carry.withUnsafeBytes { bytes in
        var offset = 0
        while let end = DaemonBenchLine.end(of: marker, in: bytes, from: offset) {
          found += 1
          offset = end
        }
      }
      if carry.count >= marker.count { carry.removeFirst(carry.count - marker.count + 1) }
      for _ in 0..<found where epoch < lines.count {
        for end in ends { try? DaemonBenchSystem.writeAll(end, lines[epoch]) }
        epoch += 1
      }
    }
    close(source)
    for end in ends { close(end) }
  }
}
