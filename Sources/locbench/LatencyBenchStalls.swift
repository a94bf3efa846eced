import Foundation

/// How late this machine wakes an idle thread, printed after `locbench latency`'s table: a thread
/// of the bench sleeps to absolute `CLOCK_MONOTONIC` deadlines (`clock_nanosleep`,
/// `TIMER_ABSTIME`) every 10 ms, as many times as epochs were measured, after the paths have
/// stopped, and reports how late each wake-up was.
///
/// Every path waits for its epoch in a blocked thread (gpsd's, `locationd`'s and the apps'), so a
/// machine that sometimes wakes a thread late puts that delay into whichever path's epoch it falls
/// on. On the 2-core virtual machines these figures come from, an idle thread woke 0.5-1.5 ms
/// late about every half second, and 2.5-3.8 ms late about every five seconds, while a thread
/// that kept its processor busy saw almost none of it: the host, not the guest's work. A path's
/// max (and, when several land on it, its p99) is then a draw of which epochs met those moments,
/// not a property of the path; the probe prints how large the draw can be here.
enum LatencyBenchStalls {
  /// The probe's period: 10 ms, short enough to run as many wake-ups as epochs in seconds, long
  /// enough for the processor to go idle between them.
  static let periodNanoseconds: UInt64 = 10_000_000

  /// Lateness of `count` wake-ups, in milliseconds, in order.
  static func measure(count: Int) -> [Double] {
    var late: [Double] = []
    late.reserveCapacity(count)
    var next = DaemonBenchSystem.now()
    for _ in 0..<count {
      next += periodNanoseconds
      var deadline = timespec(
        tv_sec: Int(next / 1_000_000_000), tv_nsec: Int(next % 1_000_000_000))
      while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nil) == EINTR {}
      let woke = DaemonBenchSystem.now()
      late.append(Double(woke &- next) / 1e6)
    }
    return late
  }

  /// Runs the probe and prints its line.
  static func report(count: Int) {
    let late = measure(count: count)
    guard !late.isEmpty else { return }
    func ms(_ value: Double) -> String { DaemonBenchReport.format(value, 2) }
    let overHalf = late.filter { $0 > 0.5 }.count
    let overTwo = late.filter { $0 > 2 }.count
    print("")
    print(
      "This machine's own wake-up delay (an idle thread of the bench sleeping to 10 ms deadlines, "
        + "\(late.count) times, after the paths stopped): p50 \(ms(LatencyBench.median(late))) ms,"
        + " p99 \(ms(LatencyBench.percentile(late, 0.99))) ms, max \(ms(late.max() ?? .nan)) ms;"
        + " \(overHalf) wake-ups over 0.5 ms late, \(overTwo) over 2 ms. A path's max near these"
        + " is the machine's, not the path's (`--no-probe` skips this).")
  }
}
