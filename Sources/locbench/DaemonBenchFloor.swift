import Foundation

/// The measuring floor of `locbench daemon`: the least fan-out latency this harness can see on
/// this machine under its present load.
///
/// A thread of the bench process stands in for a daemon: it reads the same NMEA feed (a socket
/// pair), and on each epoch's RMC writes one short `locations`-style line carrying the fix's time
/// to every client (socket pairs, blocking writes in a loop): no parsing, no JSON encoding, no
/// queues. Its latency is what the client loop, the kernel and the scheduler add to any daemon's.
enum DaemonBenchFloor {
  /// Runs the floor with the options' clients and a shorter feed (at most 100 measured fixes).
  static func measure(_ options: DaemonBench.Options) throws -> DaemonBenchResult {
    var floorOptions = options
    floorOptions.fixes = min(options.fixes, 100)
    floorOptions.warmup = min(options.warmup, 10)
    let feed = DaemonBenchFeed(rate: options.rate)
    var feedPair: [Int32] = [-1, -1]
    try DaemonBenchSystem.check(
      socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &feedPair),
      "socketpair")
    let clients = DaemonBenchClients()
    var serverEnds: [Int32] = []
    defer {
      clients.closeAll()
      close(feedPair[0])
    }
    for _ in 0..<options.clients {
      var pair: [Int32] = [-1, -1]
      try DaemonBenchSystem.check(
        socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair),
        "socketpair")
      try DaemonBenchSystem.setNonBlocking(pair[0])
      _ = clients.add(pair[0])
      serverEnds.append(pair[1])
    }
    let source = feedPair[1]
    let ends = serverEnds
    let thread = Thread {
      fanOut(source: source, to: ends, feed: feed)
    }
    thread.start()

    let latency = DaemonBenchLatency(
      epochs: floorOptions.epochs, measured: floorOptions.measured, clients: options.clients,
      feeds: 1)
    let timeKey = Array(#""time":"#.utf8)
    let handler: (Int, UnsafeRawBufferPointer, UInt64) -> Void = { client, line, time in
      guard let start = DaemonBenchLine.end(of: timeKey, in: line),
        let (seconds, _) = DaemonBenchLine.number(in: line, at: start)
      else { return }
      latency.record(
        client: client, epoch: feed.index(ofMilliseconds: Int64((seconds * 1000).rounded())),
        at: time)
    }
    DaemonBench.progress("floor: feeding \(floorOptions.epochs) epochs to the bench's own fan-out")
    let own = DaemonBenchSystem.Usage(cpuSeconds: 0, residentBytes: 0, peakResidentBytes: 0)
    let (_, _, seconds) = DaemonBench.feed(
      feed, to: [feedPair[0]], options: floorOptions, clients: clients, latency: latency,
      usage: { own }, handler: handler)
    // Closing our end of the feed ends the thread, which closes the client ends.
    shutdown(feedPair[0], Int32(SHUT_RDWR))
    return DaemonBenchResult(
      name: "floor", fromEpoch: latency.summary(offset: 0), fromClose: latency.summary(offset: 1),
      headlineFromClose: false, cpuSeconds: .nan, fixes: floorOptions.fixes, seconds: seconds,
      residentBytes: 0, peakResidentBytes: 0, processes: 0, closedClients: 0,
      notes: [
        "floor: \(floorOptions.fixes) fixes through a thread of this process that writes a "
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
