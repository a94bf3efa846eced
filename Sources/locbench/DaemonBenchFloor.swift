import Foundation

/// The measuring floor of `locbench daemon`: the least fan-out latency this harness can see on
/// this machine under its present load.
///
/// A thread of the bench process stands in for a daemon: it reads the same NMEA feed (a socket
/// pair), and on each epoch's RMC writes one short `locations`-style line carrying the fix's time
/// to every client (socket pairs, blocking writes in a loop): no parsing, no JSON encoding, no
/// queues. Its latency is what the client loop, the kernel and the scheduler add to any daemon's.
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
    let latency = DaemonBenchLatency(
      epochs: options.epochs, measured: options.measured, clients: options.clients, feeds: 1)
    let own = DaemonBenchSystem.Usage()
    target = DaemonBenchTarget(latency: latency, usage: { own })
    var feedPair: [Int32] = [-1, -1]
    try DaemonBenchSystem.check(
      socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &feedPair),
      "socketpair")
    feedEnd = feedPair[0]
    var serverEnds: [Int32] = []
    let source = feedPair[1]
    let timeKey = Array(#""time":"#.utf8)
    router.add(first: clients.count) { client, line, time in
      guard let start = DaemonBenchLine.end(of: timeKey, in: line),
        let (seconds, _) = DaemonBenchLine.number(in: line, at: start)
      else { return }
      latency.record(
        client: client, epoch: feed.index(ofMilliseconds: Int64((seconds * 1000).rounded())),
        at: time)
    }
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
    let thread = Thread {
      Self.fanOut(source: source, to: ends, feed: feed)
    }
    thread.start()
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
        "floor: \(fixes) fixes through a thread of this process that writes a "
          + "40-byte line to each client socket on each RMC (the harness's own latency)"
      ])
  }

  /// The stand-in daemon: counts RMC sentences on `source` and writes the matching fix time to
  /// every socket in `ends`; closes them all when `source` ends.
  private static func fanOut(source: Int32, to ends: [Int32], feed: DaemonBenchFeed) {
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
      for _ in 0..<found {
        let milliseconds = feed.startMilliseconds + Int64(epoch) * feed.periodMilliseconds
        let seconds = Double(milliseconds) / 1000
        let line = Array(#"{"type":"locations","time":\#(seconds)}"#.utf8) + [10]
        for end in ends { try? DaemonBenchSystem.writeAll(end, line) }
        epoch += 1
      }
    }
    close(source)
    for end in ends { close(end) }
  }
}
