import Foundation

/// The table `locbench hostile` prints: one row per attack, the baseline first, then what each
/// attacker did and what its uid holds afterwards.
enum HostileBenchReport {
  /// The memory target, bytes.
  static let residentTarget = 100_000_000
  /// The latency target: the honest p99 within this factor of the baseline row's.
  static let latencyTarget = 2.0

  private static func pad(_ text: String, _ width: Int) -> String {
    text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
  }

  /// The targets a row did not meet (empty: all held), against the baseline's p99.
  static func missed(_ result: HostileBenchResult, baselineP99: Double?) -> [String] {
    var missed: [String] = []
    if result.latency.delivered < result.latency.expected { missed.append("fixes") }
    if let baselineP99, !(result.latency.p99 <= latencyTarget * baselineP99) {
      missed.append("p99")
    }
    if result.peakResidentBytes > residentTarget { missed.append("RSS") }
    if result.census.map({ !$0.withinCaps }) ?? false { missed.append("caps") }
    if !result.breaches.isEmpty { missed.append("breach") }
    return missed
  }

  /// Prints the table, the targets, each row's notes and what was skipped.
  static func print(
    _ results: [HostileBenchResult], skipped: [String], options: HostileBench.Options
  ) {
    let baselineP99 = results.first { $0.attack == .baseline }?.latency.p99
    let columns = [16, 14, 8, 8, 8, 9, 12, 8, 11]
    Swift.print("")
    Swift.print(
      zip(
        [
          "attack", "honest fixes", "p50 ms", "p99 ms", "max ms", "p99/base", "RSS peak MB",
          "CPU %", "store +MB",
        ], columns
      ).map { pad($0, $1) }.joined() + "targets")
    for result in results {
      let latency = result.latency
      let ratio = baselineP99.map { latency.p99 / $0 } ?? .nan
      let missed = missed(result, baselineP99: baselineP99)
      let cells = [
        "\(result.attack.label) \(result.attack.rawValue)",
        "\(latency.delivered)/\(latency.expected)",
        DaemonBenchReport.format(latency.p50, 2), DaemonBenchReport.format(latency.p99, 2),
        DaemonBenchReport.format(latency.maximum, 2), DaemonBenchReport.format(ratio, 2),
        DaemonBenchReport.megabytes(result.peakResidentBytes),
        DaemonBenchReport.format(100 * result.cpuPerSecond, 1),
        DaemonBenchReport.megabytes(result.storeGrowth),
      ]
      Swift.print(
        zip(cells, columns).map { pad($0, $1) }.joined()
          + (missed.isEmpty ? "all held" : "NOT held: " + missed.joined(separator: ", ")))
    }
    Swift.print("")
    Swift.print(
      "targets: every fix delivered to the honest app; its p99 at most "
        + "\(DaemonBenchReport.format(latencyTarget, 0))x the baseline row's; the daemon's peak "
        + "resident memory (VmHWM, from its start) at most "
        + "\(DaemonBenchReport.megabytes(residentTarget)) MB; what the hostile uid holds within "
        + "max-apps-per-uid (\(HostileBench.caps.apps)), max-regions (\(HostileBench.caps.regions)) "
        + "and max-pending-events (\(HostileBench.caps.pendingEvents)) (caps); nothing the daemon "
        + "must refuse allowed (breach). Latency: from the feed's write of a fix to the honest "
        + "app's read of it; CPU: the daemon's CPU time (utime and stime) over the measured fixes, in "
        + "percent of one core; store: growth of the store and its WAL while the attacker ran.")
    for result in results where result.attack != .baseline {
      Swift.print("")
      Swift.print("\(result.attack.label) \(result.attack.rawValue): \(result.attack.summary)")
      var lines: [String] = []
      if let counts = result.attackerCounts {
        let described = counts.sorted { $0.key < $1.key }.map { key, value in
          key == "bytes sent"
            ? "\(DaemonBenchReport.megabytes(value)) MB sent" : "\(key) \(value)"
        }
        lines.append(
          "attacker (\(DaemonBenchReport.format(result.attackerCPUPerSecond, 2)) CPU s/s): "
            + described.joined(separator: "; "))
      } else {
        lines.append("attacker: no summary (it was ended before it could print one)")
      }
      if let guardTripped = result.guardTripped { lines.append("guard: \(guardTripped)") }
      if let census = result.census {
        lines.append(
          "uid \(HostileBench.hostileUID) holds afterwards: \(census.identities) identities, "
            + "\(census.regions) regions (most for one: \(census.mostRegions)), "
            + "\(census.pendingEvents) kept events (most for one: \(census.mostPendingEvents))")
      } else {
        lines.append("uid \(HostileBench.hostileUID) holds afterwards: the daemon did not say")
      }
      for (breach, count) in result.breaches { lines.append("\(breach): \(count)") }
      lines.append(
        "daemon log grew by \(DaemonBenchReport.format(Double(result.logGrowth) / 1e3, 1)) kB")
      lines += result.notes
      for line in lines { Swift.print("  " + line) }
    }
    for line in skipped { Swift.print(line) }
  }
}
