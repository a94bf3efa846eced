import Foundation

/// The epochs written to the terminal and when each write returned.
final class LatencyBenchWriter {
  let pty: LatencyBenchPTY
  let feed: DaemonBenchFeed
  private(set) var times: [Int: UInt64] = [:]
  /// How late this thread woke for each epoch's deadline, in ms (`LatencyBenchStalls`).
  private(set) var lateness: [Int: Double] = [:]
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
    write(index, at: next)
    next += period
  }

  /// Waits until `deadline` (monotonic nanoseconds), then writes epoch `index`.
  func write(_ index: Int, at deadline: UInt64) {
    var time = timespec(
      tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
    while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &time, nil) == EINTR {}
    let woke = DaemonBenchSystem.now()
    pty.write(feed.epoch(index))
    times[index] = DaemonBenchSystem.now()
    lateness[index] = woke > deadline ? Double(woke - deadline) / 1e6 : 0
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
