import Foundation
import LocationEngine
import LocationSimulation

/// `locbench visits` (issue 15): visit detection on seeded synthetic days with known stays
/// (`SyntheticDay`: noise, drift, reflections, coarse first fixes, indoor outages, tunnels, traffic
/// lights and drop-offs that are no visits), replayed through a real hub on the manual clock with
/// `startVisits` and a noisy simulated receiver (`SyntheticReceiver`, 5 s to a fix). An arrival or a
/// departure counts as detected when a reported one lies within 150 m of the true place and 5
/// minutes of the true time (each true event matched once). Prints one row per day with the
/// receiver duty-cycled, then the totals for the duty-cycled receiver and for one kept on at 1 Hz
/// by another client (the detector on every fix: the baseline of the same run); then checks the
/// issue's targets (precision and recall at least 95 % for both). Simulated seconds, not wall time.
///
///     swift run -c release locbench visits [days] [-v]
///
/// `-v` prints every event matched to no true one, with the day's stays and stops near it.
enum VisitsBench {
  static func run() {
    let arguments = CommandLine.arguments.dropFirst(2)
    let days = arguments.first.flatMap { Int($0) }.map { max(1, $0) } ?? 20
    let verbose = arguments.contains("-v")
    print(
      "\(days) synthetic days (seeds 1-\(days)); rule: VisitDetector (Kang et al. 2004), "
        + "\(Int(VisitDetector.radius)) m, \(Int(VisitDetector.minimumStay / 60)) min, "
        + "departure after \(Int(VisitDetector.departureConfirmation)) s outside")
    print(
      pad("seed", 6) + pad("hours", 7, right: true) + pad("stays", 7, right: true)
        + pad("stops", 7, right: true) + pad("arr. found", 12, right: true)
        + pad("dep. found", 12, right: true) + pad("reported", 10, right: true)
        + pad("at stops", 10, right: true) + pad("worst arr.", 12, right: true)
        + pad("worst dep.", 12, right: true) + pad("on %", 7, right: true))
    var totals: [VisitSimulation.Mode: Total] = [:]
    for seed in 1...UInt64(days) {
      let day = SyntheticDay(seed: seed)
      for mode in VisitSimulation.Mode.allCases {
        let report = VisitSimulation.run(day, mode: mode)
        totals[mode, default: Total()].add(report)
        if verbose { describe(report, day, mode) }
        guard mode == .dutyCycled else { continue }
        print(
          pad("\(seed)", 6) + pad(String(format: "%.1f", report.duration / 3600), 7, right: true)
            + pad("\(report.stays)", 7, right: true) + pad("\(report.stops)", 7, right: true)
            + pad("\(report.arrivals.matched)/\(report.arrivals.truth)", 12, right: true)
            + pad("\(report.departures.matched)/\(report.departures.truth)", 12, right: true)
            + pad("\(report.arrivals.detected + report.departures.detected)", 10, right: true)
            + pad("\(report.falseAtStops)", 10, right: true)
            + pad(seconds(report.arrivals.errors.max()), 12, right: true)
            + pad(seconds(report.departures.errors.max()), 12, right: true)
            + pad(String(format: "%.1f", report.onFraction * 100), 7, right: true))
      }
    }
    print()
    print(
      pad("receiver", 18) + pad("event", 11) + pad("precision", 11, right: true)
        + pad("recall", 9, right: true) + pad("found", 11, right: true)
        + pad("median", 9, right: true) + pad("p95", 8, right: true)
        + pad("worst", 8, right: true) + pad("at stops", 10, right: true)
        + pad("on %", 7, right: true))
    var failures: [String] = []
    for mode in VisitSimulation.Mode.allCases {
      guard let total = totals[mode] else { continue }
      for (name, score) in [("arrivals", total.arrivals), ("departures", total.departures)] {
        let errors = score.errors.sorted()
        print(
          pad(mode.rawValue, 18) + pad(name, 11)
            + pad(String(format: "%.1f %%", score.precision * 100), 11, right: true)
            + pad(String(format: "%.1f %%", score.recall * 100), 9, right: true)
            + pad("\(score.matched)/\(score.truth)", 11, right: true)
            + pad(seconds(quantile(errors, 0.5)), 9, right: true)
            + pad(seconds(quantile(errors, 0.95)), 8, right: true)
            + pad(seconds(errors.last), 8, right: true)
            + pad("\(total.falseAtStops)/\(total.stops)", 10, right: true)
            + pad(String(format: "%.1f", total.onFraction * 100), 7, right: true))
        if score.precision < 0.95 || score.recall < 0.95 {
          failures.append(
            "\(mode.rawValue) \(name): precision \(score.precision), recall \(score.recall)")
        }
      }
    }
    if failures.isEmpty {
      print(
        "targets met (arrivals and departures: precision and recall ≥ 95 %, each within 5 min)")
    } else {
      for failure in failures { print("TARGET MISSED: \(failure)") }
    }
  }

  /// Prints the events of a day that match nothing, with the true stays and stops near them.
  static func describe(
    _ report: VisitSimulation.Report, _ day: SyntheticDay, _ mode: VisitSimulation.Mode
  ) {
    for index in report.arrivals.unmatched + report.departures.unmatched {
      let visit = report.visits[index]
      let place = day.plane.project(latitude: visit.latitude, longitude: visit.longitude)
      print(
        "  seed \(day.seed) \(mode.rawValue): unmatched "
          + String(
            format: "arrival %@ departure %@ at (%.0f, %.0f) ±%.0f m",
            visit.arrival.map { String(format: "%.0f", $0) } ?? "-",
            visit.departure.map { String(format: "%.0f", $0) } ?? "-", place.east, place.north,
            visit.horizontalAccuracy))
      for stay in day.stays {
        let d =
          ((stay.east - place.east) * (stay.east - place.east)
          + (stay.north - place.north) * (stay.north - place.north)).squareRoot()
        if d < 1000 {
          print(
            String(
              format: "    stay at %.0f m: %@ to %@", d,
              stay.arrival.map { String(format: "%.0f", $0) } ?? "-",
              stay.departure.map { String(format: "%.0f", $0) } ?? "-"))
        }
      }
      for stop in day.stops {
        let d =
          ((stop.east - place.east) * (stop.east - place.east)
          + (stop.north - place.north) * (stop.north - place.north)).squareRoot()
        if d < 300 {
          print(String(format: "    stop at %.0f m: %.0f to %.0f", d, stop.start, stop.end))
        }
      }
    }
  }

  /// The sums over the days of one mode.
  struct Total {
    var arrivals = VisitSimulation.Score()
    var departures = VisitSimulation.Score()
    var stops = 0
    var falseAtStops = 0
    var duration = 0.0
    var onSeconds = 0.0

    var onFraction: Double { duration > 0 ? onSeconds / duration : 0 }

    mutating func add(_ report: VisitSimulation.Report) {
      arrivals.add(report.arrivals)
      departures.add(report.departures)
      stops += report.stops
      falseAtStops += report.falseAtStops
      duration += report.duration
      onSeconds += report.onSeconds
    }
  }

  /// The nearest-rank quantile of sorted values.
  static func quantile(_ sorted: [Double], _ q: Double) -> Double? {
    guard !sorted.isEmpty else { return nil }
    let rank = Int((q * Double(sorted.count)).rounded(.up))
    return sorted[min(max(rank - 1, 0), sorted.count - 1)]
  }

  static func seconds(_ value: Double?) -> String {
    value.map { String(format: "%.0f s", $0) } ?? "-"
  }

  static func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
    let padding = String(repeating: " ", count: max(0, width - text.count))
    return right ? padding + text : text + padding
  }
}
