import Foundation

extension LatencyBench {
  /// `--interleave`: every path of `paths` at once, each on a terminal and processes of its own,
  /// fed the same epochs at the same rate, path `i` of `n` writing at `i/n` of each period. The
  /// paths run one after the other otherwise, minutes apart, and a shared machine's noise (the
  /// host's other guests, which reach milliseconds) then falls on one path's tail and not
  /// another's; interleaved, every path's p99 and maximum come from the same minutes. Each write
  /// still finds the machine idle but for what the previous slot left running: at 20 Hz and 6
  /// paths the slots are 8 ms apart, far above every median and most tails.
  ///
  /// Each path is set up and fed until it delivers (`LatencyBenchPath.preroll`), one at a time;
  /// then all of them get 10 warm-up epochs, the measured epochs and one more, interleaved.
  static func measureInterleaved(
    paths: [String], rate: Double, options: Options, trace: Bool = false
  ) -> [Result] {
    var results: [Result] = []
    var runs: [LatencyBenchPath] = []
    defer { for run in runs { run.stop() } }
    for path in paths {
      do {
        // A path that fails here is stopped as it goes (`LatencyBenchPath`'s deinit).
        let run = try LatencyBenchPath.start(path, options: options, trace: trace)
        _ = try run.preroll(
          LatencyBenchWriter(pty: run.pty, feed: DaemonBenchFeed(rate: rate)), rate: rate)
        runs.append(run)
      } catch {
        results.append(Result(path: path, rate: rate, latencies: [], lost: 0, note: "\(error)"))
      }
    }
    guard !runs.isEmpty else { return results }
    // One feed for all, later than every preroll's epochs (which it does not count).
    let feed = DaemonBenchFeed(rate: rate)
    let writers = runs.map { LatencyBenchWriter(pty: $0.pty, feed: feed) }
    let period = UInt64(feed.periodMilliseconds) * 1_000_000
    let slot = period / UInt64(writers.count)
    let start = DaemonBenchSystem.now() + period
    let measured = 10..<(10 + options.epochs)
    let processor = runs.map { $0.processorTime() }
    for index in 0..<(measured.upperBound + 1) {
      for (slotIndex, writer) in writers.enumerated() {
        writer.write(index, at: start + UInt64(index) * period + UInt64(slotIndex) * slot)
      }
    }
    // Let the last deliveries arrive.
    usleep(500_000)
    for ((run, writer), before) in zip(zip(runs, writers), processor) {
      var result = run.result(
        rate: rate, written: writer, measured: measured, options: options, trace: trace)
      result.processorPerEpoch =
        (run.processorTime() - before) / 1_000 / Double(measured.upperBound + 1)
      results.append(result)
    }
    // In the order asked for, failed paths included.
    return paths.compactMap { path in results.first { $0.path == path } }
  }
}
