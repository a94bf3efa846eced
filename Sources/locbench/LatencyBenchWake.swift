import Foundation
import LocationFormats
import LocationModel
import LocationProtocol

/// What waking costs on this machine, printed after `--breakdown`'s stages: one system call
/// (`poll` of an idle socket, made first, as a real path wakes from `epoll_wait`), one epoch's
/// decoding (`NMEADecoder`, GGA + RMC) and one fix's encoding (`DaemonProtocol.encodeFixes`), in
/// this process, timed warm (back to back), after a sweep of 64 MB through the caches, after
/// sleeping one period of the feed (the first epoch after waking, and the second), and after
/// sleeping and then spinning for 0.3 ms before the work.
///
/// It tells apart the causes of the traced stages' cost: the cache sweep evicts code and data
/// (and the translation buffers) without letting the processor idle; the spin lets a processor
/// that slows down when idle get back to speed before the work. Where sleeping costs more than the
/// sweep and the spin does not help, the cost is the host's: what else ran on the processor while
/// this one idled (caches, translation buffers and branch predictors all cold), not the clock.
enum LatencyBenchWake {
  /// Rounds per condition (the median is reported).
  static let rounds = 100

  /// Median microseconds of one condition.
  struct Times {
    var decode: Double
    var encode: Double
    var call: Double
  }

  static func report(rate: Double) {
    let feed = DaemonBenchFeed(rate: rate)
    let epochs = (0..<(4 * rounds)).map { feed.epoch($0) }
    var decoder = NMEADecoder(options: .init(source: "wake", reportsAtCycleEnd: true))
    var sweep = [UInt8](repeating: 1, count: 64 << 20)
    let period = UInt32((1_000_000 / rate).rounded())
    var next = 0
    /// What the timed work produced, summed and read at the end, so that the optimizer keeps it.
    var kept = 0
    var pair: [Int32] = [-1, -1]
    guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0 else {
      print("\nWhat waking costs: not measured (socketpair: errno \(errno))")
      return
    }
    defer { for fd in pair { close(fd) } }
    /// One system call that finds nothing to do.
    func idlePoll() {
      var descriptor = pollfd(fd: pair[0], events: Int16(POLLIN), revents: 0)
      kept &+= Int(poll(&descriptor, 1, 0))
    }
    /// Median microseconds of decoding, of encoding and of the system call, each round after
    /// `prepare` (and, with `twice`, after doing it all once untimed on the epoch before).
    func measure(twice: Bool = false, _ prepare: () -> Void) -> Times {
      var decodes: [Double] = []
      var encodes: [Double] = []
      var calls: [Double] = []
      for _ in 0..<rounds {
        prepare()
        if twice {
          idlePoll()
          let outputs = epochs[next % epochs.count].withUnsafeBytes { decoder.decode(bytes: $0) }
          next += 1
          for case .fix(let fix) in outputs { kept &+= DaemonProtocol.encodeFixes([fix]).count }
        }
        let epoch = epochs[next % epochs.count]
        next += 1
        let call = LatencyTrace.now()
        idlePoll()
        let start = LatencyTrace.now()
        let outputs = epoch.withUnsafeBytes { decoder.decode(bytes: $0) }
        let decoded = LatencyTrace.now()
        var fixes: [Fix] = []
        for output in outputs {
          if case .fix(let fix) = output { fixes.append(fix) }
          if case .undatedFix(let fix) = output { fixes.append(fix) }
        }
        let encodingStart = LatencyTrace.now()
        let line = DaemonProtocol.encodeFixes(fixes)
        let encoded = LatencyTrace.now()
        kept &+= line.count &+ outputs.count
        decodes.append(Double(decoded - start) / 1000)
        encodes.append(Double(encoded - encodingStart) / 1000)
        calls.append(Double(start - call) / 1000)
      }
      return Times(
        decode: LatencyBench.median(decodes), encode: LatencyBench.median(encodes),
        call: LatencyBench.median(calls))
    }
    func sweepCaches() {
      sweep.withUnsafeMutableBufferPointer { buffer in
        var index = 0
        while index < buffer.count {
          buffer[index] &+= 1
          index += 64
        }
      }
    }
    let rows: [(String, Times)] = [
      ("warm (back to back)", measure {}),
      ("after a 64 MB sweep of the caches", measure(sweepCaches)),
      ("after sleeping one period", measure { usleep(period) }),
      ("after sleeping one period, the second epoch", measure(twice: true) { usleep(period) }),
      (
        "after sleeping one period, then spinning 0.3 ms",
        measure {
          usleep(period)
          let start = LatencyTrace.now()
          while LatencyTrace.now() - start < 300_000 {}
        }
      ),
    ]
    print("")
    print(
      "What waking costs here (one epoch's decoding, one fix's encoding and one system call in"
        + " this process, median of \(rounds); the period "
        + "\(DaemonBenchReport.format(Double(period) / 1000, 0)) ms):"
    )
    print("")
    print("| condition | decode µs | encode µs | a system call µs |")
    print("| --- | --- | --- | --- |")
    for (name, times) in rows {
      print(
        "| \(name) | \(DaemonBenchReport.format(times.decode, 2)) | "
          + "\(DaemonBenchReport.format(times.encode, 2)) | "
          + "\(DaemonBenchReport.format(times.call, 2)) |")
    }
    if kept == 0 { print("(nothing decoded)") }
  }
}
