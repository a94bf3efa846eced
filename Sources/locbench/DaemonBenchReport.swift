import Foundation

/// The table `locbench daemon` prints: one column per daemon, then locationd / gpsd.
enum DaemonBenchReport {
  /// `value` with `decimals` decimals ("n/a" when not finite).
  static func format(_ value: Double, _ decimals: Int) -> String {
    guard value.isFinite else { return "n/a" }
    return String(format: "%.\(decimals)f", value)
  }

  /// Bytes as megabytes (10^6), one decimal.
  static func megabytes(_ bytes: Int) -> String { format(Double(bytes) / 1e6, 1) }

  private static func pad(_ text: String, _ width: Int) -> String {
    text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
  }

  /// Prints the table, the targets, the notes and what was skipped.
  static func print(
    _ results: [DaemonBenchResult], skipped: [String], options: DaemonBench.Options
  ) {
    let daemon = results.first { $0.name == "locationd" }
    let gpsd = results.first { $0.name == "gpsd" }
    let floor = results.first { $0.name == "floor" }
    typealias Row = (
      label: String, value: (DaemonBenchResult) -> Double, decimals: Int, floor: Bool
    )
    let rows: [Row] = [
      ("latency p50, ms (fan-out)", { $0.headline.p50 }, 2, true),
      ("latency p99, ms (fan-out)", { $0.headline.p99 }, 2, true),
      ("latency max, ms (fan-out)", { $0.headline.maximum }, 2, true),
      ("first client of a fix p50, ms", { $0.headline.firstP50 }, 2, true),
      ("feed to client p50, ms", { $0.fromEpoch.p50 }, 2, false),
      ("feed to client p99, ms", { $0.fromEpoch.p99 }, 2, false),
      (
        "delivered, % of clients x fixes",
        {
          100 * Double($0.headline.delivered) / Double(max(1, $0.headline.expected))
        }, 2, true
      ),
      ("CPU per fix, ms", { 1000 * $0.cpuSeconds / Double(max(1, $0.fixes)) }, 3, false),
      (
        "CPU per fix per client, us",
        {
          1e6 * $0.cpuSeconds / Double(max(1, $0.fixes)) / Double(max(1, options.clients))
        }, 2, false
      ),
      ("CPU, % of one core", { 100 * $0.cpuSeconds / max($0.seconds, 1e-9) }, 1, false),
      ("RSS at end, MB", { Double($0.residentBytes) / 1e6 }, 1, false),
      ("RSS peak (VmHWM), MB", { Double($0.peakResidentBytes) / 1e6 }, 1, false),
    ]
    Swift.print("")
    Swift.print(
      pad("", 38) + pad("locationd", 14) + pad("gpsd", 14) + pad("locationd / gpsd", 18)
        + "floor (harness)")
    Swift.print(
      pad("processes", 38) + pad(daemon.map { "\($0.processes)" } ?? "-", 14)
        + pad(gpsd.map { "\($0.processes)" } ?? "-", 14))
    for row in rows {
      let left = daemon.map { row.value($0) }
      let right = gpsd.map { row.value($0) }
      var ratio = "-"
      if let left, let right, right != 0, left.isFinite, right.isFinite {
        ratio = format(left / right, 2)
      }
      let bottom = row.floor ? floor.map { format(row.value($0), row.decimals) } ?? "-" : ""
      Swift.print(
        pad(row.label, 38) + pad(left.map { format($0, row.decimals) } ?? "-", 14)
          + pad(right.map { format($0, row.decimals) } ?? "-", 14) + pad(ratio, 18) + bottom)
    }
    Swift.print("")
    Swift.print(
      "fan-out latency: from the write of the fix's own epoch to each client's read of it (both "
        + "daemons report an epoch at the cycle's last sentence, learned from the stream); feed "
        + "to client: the same figure")
    if let daemon {
      let p99 = daemon.headline.p99
      let rss = Double(daemon.peakResidentBytes) / 1e6
      Swift.print(
        "targets: locationd p99 <= 5 ms: \(p99 <= 5 ? "met" : "NOT met") (\(format(p99, 2)) ms); "
          + "RSS <= 50 MB: \(rss <= 50 ? "met" : "NOT met") (peak \(format(rss, 1)) MB)"
          + (floor.map {
            "; the harness alone (floor) has p99 \(format($0.headline.p99, 2)) ms on this "
              + "machine at this load"
          } ?? ""))
      if let processFloor = results.first(where: { $0.name == "floor-process" }) {
        Swift.print(
          "locationd p99 / the floor in a process of its own: "
            + "\(format(p99 / processFloor.headline.p99, 2))x (its p50 / p99 / first client p50 "
            + "\(format(processFloor.headline.p50, 2)) / \(format(processFloor.headline.p99, 2)) / "
            + "\(format(processFloor.headline.firstP50, 2)) ms, CPU per fix "
            + "\(format(1000 * processFloor.cpuSeconds / Double(max(1, processFloor.fixes)), 3)) ms;"
            + " for comparison: the target is against the harness's floor)")
      }
      if let floor {
        let ratio = p99 / floor.headline.p99
        Swift.print(
          "locationd p99 / the floor's: \(format(ratio, 2))x (target at most 1.1x: "
            + "\(ratio <= 1.1 ? "met" : "NOT met")"
            + (options.interleave
              ? ", fed in the same minutes)" : "; run one after the other, see --interleave)"))
      }
    }
    for result in results {
      if result.closedClients > 0 {
        Swift.print("\(result.name): \(result.closedClients) client connections were closed")
      }
      for note in result.notes { Swift.print(note) }
    }
    for line in skipped { Swift.print(line) }
  }
}
