import Foundation

/// How late the bench's own writer woke for the measured epochs, printed after `locbench
/// latency`'s table: the writer is an idle thread that sleeps to each epoch's absolute
/// `CLOCK_MONOTONIC` deadline (`clock_nanosleep`, `TIMER_ABSTIME`) before it writes, so its
/// lateness is this machine's delay in waking an idle thread, in the same minutes as the paths,
/// at no cost to them (a path's latency starts when the write returns).
///
/// Every path waits for its epoch in blocked threads too (gpsd's, `locationd`'s and the apps'), so
/// a machine that sometimes wakes a thread late puts that delay into whichever path's epoch it
/// falls on. On the 2-core virtual machines these figures come from, a C program sleeping to 1 or
/// 10 ms deadlines saw, in some 20-second windows and not in others, wake-ups 0.5-1.5 ms late
/// about every half second and 2.5-3.8 ms late about every five seconds, while a thread that kept
/// its processor busy saw almost none: the host, not the guest's work. A path's max, and its p99
/// when several such moments land on it, is then partly a draw of which epochs met them.
enum LatencyBenchStalls {
  /// Prints, for each rate, the writer's lateness over every measured epoch of every path.
  static func report(_ results: [LatencyBench.Result]) {
    var rates: [Double] = []
    for result in results where !rates.contains(result.rate) { rates.append(result.rate) }
    var lines: [String] = []
    for rate in rates {
      let late = results.filter { $0.rate == rate }.flatMap(\.writerLateness)
      guard !late.isEmpty else { continue }
      func ms(_ value: Double) -> String { DaemonBenchReport.format(value, 2) }
      lines.append(
        "- \(DaemonBenchReport.format(rate, 0)) Hz, \(late.count) wake-ups: p50 "
          + "\(ms(LatencyBench.median(late))) ms, p99 \(ms(LatencyBench.percentile(late, 0.99)))"
          + " ms, max \(ms(late.max() ?? .nan)) ms; \(late.filter { $0 > 0.5 }.count) over 0.5 ms,"
          + " \(late.filter { $0 > 2 }.count) over 2 ms")
    }
    guard !lines.isEmpty else { return }
    print("")
    print(
      "How late the bench's writer (an idle thread sleeping to each epoch's deadline) woke, in"
        + " the same minutes: the machine's own delay, which a path's tail can meet as well:")
    print("")
    for line in lines { print(line) }
  }
}
