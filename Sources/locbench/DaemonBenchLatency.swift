import Foundation

/// Latency bookkeeping for one phase: when each epoch was written to each feed connection, and
/// when each client first received each fix (matched by the fix's time).
final class DaemonBenchLatency {
  /// Epochs written (warm-up, measured, and one more that closes the last measured epoch).
  let epochs: Int
  /// Clients.
  let clients: Int
  /// `written[feed][epoch]`: monotonic ns of the write of that epoch to that feed (0: not yet).
  var written: [[UInt64]]
  /// `received[client * epochs + epoch]`: monotonic ns of the first delivery (0: none).
  var received: [UInt64]
  /// The feed each client's daemon reads.
  var feedOfClient: [Int]
  /// Deliveries of a fix a client had already received.
  var duplicates = 0
  /// Deliveries whose time matched no epoch.
  var unmatched = 0
  /// The epochs whose latencies count.
  let measured: Range<Int>
  /// First deliveries of measured epochs so far.
  private(set) var measuredDeliveries = 0

  /// Empty bookkeeping for `clients` clients and `feeds` feed connections.
  init(epochs: Int, measured: Range<Int>, clients: Int, feeds: Int) {
    self.epochs = epochs
    self.measured = measured
    self.clients = clients
    written = Array(repeating: Array(repeating: 0, count: epochs), count: feeds)
    received = Array(repeating: 0, count: epochs * clients)
    feedOfClient = Array(repeating: 0, count: clients)
  }

  /// Records that `client` received the fix of `epoch` (nil: a time off the grid) at `time`.
  func record(client: Int, epoch: Int?, at time: UInt64) {
    guard let epoch, epoch >= 0, epoch < epochs else {
      unmatched += 1
      return
    }
    let slot = client * epochs + epoch
    if received[slot] == 0 {
      received[slot] = time
      if measured.contains(epoch) { measuredDeliveries += 1 }
    } else {
      duplicates += 1
    }
  }

  /// Latency percentiles of the measured epochs, in milliseconds.
  struct Summary {
    /// Deliveries counted.
    var delivered: Int
    /// Deliveries expected (clients times measured epochs).
    var expected: Int
    /// Median, 99th percentile and worst latency, ms; NaN when nothing was delivered.
    var p50: Double
    /// The 99th percentile, ms.
    var p99: Double
    /// The worst, ms.
    var maximum: Double
    /// The median over the epochs of the first client's latency (the daemon's own delay before
    /// its first write, plus one client's read), ms.
    var firstP50: Double = .nan
  }

  /// Nanoseconds from the write of epoch `epoch + offset` on the client's feed to the client's
  /// first delivery of epoch `epoch`; nil when either did not happen.
  func latency(client: Int, epoch: Int, offset: Int) -> Int64? {
    guard epoch + offset < epochs else { return nil }
    let time = received[client * epochs + epoch]
    let start = written[feedOfClient[client]][epoch + offset]
    guard time != 0 && start != 0 else { return nil }
    return Int64(time) - Int64(start)
  }

  /// Latencies of the measured epochs, from the write of epoch `e + offset` (0: the epoch
  /// itself; 1: the next epoch, whose first sentence closes it for a decoder that ends an epoch
  /// when the next begins).
  func summary(offset: Int) -> Summary {
    var latencies: [Int64] = []
    latencies.reserveCapacity(clients * measured.count)
    var firsts = [Int64](repeating: .max, count: epochs)
    for client in 0..<clients {
      for epoch in measured {
        if let latency = latency(client: client, epoch: epoch, offset: offset) {
          latencies.append(latency)
          firsts[epoch] = min(firsts[epoch], latency)
        }
      }
    }
    let firstSorted = firsts.filter { $0 != .max }.sorted()
    latencies.sort()
    func percentile(_ fraction: Double) -> Double {
      guard !latencies.isEmpty else { return .nan }
      // Nearest rank: the smallest value with at least `fraction` of the values at or below it.
      let rank = Int((fraction * Double(latencies.count)).rounded(.up))
      return Double(latencies[max(0, min(latencies.count - 1, rank - 1))]) / 1e6
    }
    return Summary(
      delivered: latencies.count, expected: clients * measured.count, p50: percentile(0.5),
      p99: percentile(0.99), maximum: percentile(1),
      firstP50: firstSorted.isEmpty ? .nan : Double(firstSorted[firstSorted.count / 2]) / 1e6)
  }
}

extension DaemonBenchLatency {
  /// One line per measured epoch, in time order: `EPOCH FIRST MEDIAN P99 LAST`, the latencies in
  /// milliseconds (as `summary(offset:)` counts them) of the epoch's first client, its median
  /// client, its 99th percentile and its last, for `--samples`. A shared machine's slow minutes
  /// show as runs of slow epochs, in every daemon that was fed in them.
  func epochRows(offset: Int) -> String {
    var rows = ""
    var row: [Int64] = []
    row.reserveCapacity(clients)
    for epoch in measured {
      row.removeAll(keepingCapacity: true)
      for client in 0..<clients {
        if let latency = latency(client: client, epoch: epoch, offset: offset) {
          row.append(latency)
        }
      }
      guard !row.isEmpty else { continue }
      row.sort()
      let rank99 = Int((0.99 * Double(row.count)).rounded(.up)) - 1
      let columns = [row[0], row[row.count / 2], row[max(0, rank99)], row[row.count - 1]]
      let milliseconds = columns.map { String(format: "%.3f", Double($0) / 1e6) }
      rows += "\(epoch) " + milliseconds.joined(separator: " ") + "\n"
    }
    return rows
  }
}

/// What one phase measured, for the table.
struct DaemonBenchResult {
  /// The column title.
  var name: String
  /// Latency from the write of the fix's own epoch.
  var fromEpoch: DaemonBenchLatency.Summary
  /// Latency from the write of the next epoch (which closes the fix's epoch).
  var fromClose: DaemonBenchLatency.Summary
  /// Which of the two is the daemon's own fan-out latency (the write after which it had every
  /// byte it needed to report the fix).
  var headlineFromClose: Bool
  /// Daemon CPU seconds over the measured epochs (all its processes).
  var cpuSeconds: Double
  /// Measured epochs.
  var fixes: Int
  /// Wall-clock seconds of the measured epochs.
  var seconds: Double
  /// Resident memory at the end, bytes (all its processes).
  var residentBytes: Int
  /// Peak resident memory, bytes (all its processes).
  var peakResidentBytes: Int
  /// Daemon processes.
  var processes: Int
  /// Client connections that ended before the end.
  var closedClients: Int
  /// Notes printed under the table.
  var notes: [String] = []
  /// The headline latencies epoch by epoch (`DaemonBenchLatency.epochRows`).
  var epochRows = ""

  /// The headline latency summary.
  var headline: DaemonBenchLatency.Summary { headlineFromClose ? fromClose : fromEpoch }
}
