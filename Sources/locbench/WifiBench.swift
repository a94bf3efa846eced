import Foundation
import Geodesy
import LocationEngine
import LocationModel
import LocationSimulation

/// `locbench wifi`: Wi-Fi learning and positioning on a seeded simulated town (`WifiTown`: 2,000
/// access points along a 2 km × 2 km street grid, P₀ −40 dBm, n 3, σ 4 dB, heard above −90 dBm;
/// a car at 8 to 14 m/s with a GNSS fix of 5 m every second and a scan every 3 s). Three figures,
/// all inputs seeded (only the timings vary from run to run):
///
/// 1. **Accuracy**: `WifiLearner` learns from 2 hours of driving, then `WifiLocator` positions
///    the car from each scan of another hour of driving (no learning then); median and p90 of the
///    distance to the true place (targets ≤ 30 m and ≤ 80 m), how many scans got a fix, and how
///    often the truth lay within the claimed accuracy (68 % would be exact). Baseline, an oracle:
///    the true place of the loudest access point heard.
/// 2. **Moved access points**: the same, but after learning a tenth of the access points move
///    elsewhere in town, and a hotspot rides in the car all along (learning and test). Target:
///    median ≤ 40 m. Then, for tuning, figures 1 and 2 again with other weight degrees `g`,
///    accuracy scales `k` and limits on the unknown access points beside a lone known one.
/// 3. **Time per locate**: a scan of 40 access points against a table of 1,000,000; baseline, the
///    40 dictionary lookups alone. Target ≤ 50 µs.
///
///     swift run -c release locbench wifi
enum WifiBench {
  /// The errors of one test hour.
  struct Errors {
    /// The distances, metres, of the located scans.
    var located: [Double] = []
    /// The distances, metres, of the baseline's positions.
    var baseline: [Double] = []
    /// How many scans the hour had.
    var scans = 0
    /// How many located fixes had the truth within their accuracy.
    var withinAccuracy = 0
    /// The claimed accuracies, metres.
    var accuracies: [Double] = []
  }

  /// Runs the three figures.
  static func run() {
    print(
      "Wi-Fi positioning on a seeded town: 2,000 access points on a 2 km x 2 km street grid, "
        + "P0 -40 dBm, n 3, sigma 4 dB, heard above -90 dBm; a car at 8-14 m/s, GNSS 5 m each "
        + "second, a scan every 3 s")
    let town = WifiTown(seed: 0x3F1F_0001)
    let plain = accuracy(town: town, moved: nil)
    report(
      "1. learn 2 h of driving, locate each scan of 1 h more", plain, targets: (30, 80))
    let moved = accuracy(town: town, moved: 0.1)
    report(
      "2. the same, with a tenth of the access points moved after learning and a hotspot in the car",
      moved, targets: (40, nil))
    variants(town)
    timing()
  }

  /// For tuning: figures 1 and 2 again with other weight degrees `g` (learner and locator alike)
  /// and accuracy scales; the first row is the defaults.
  static func variants(_ town: WifiTown) {
    print("   variants (g: degree of the weights 1/d^g; k: accuracy scale), median / p90 / within:")
    for (g, k, lone) in [
      (2.0, 1.5, 1), (1.0, 1.5, 1), (3.0, 1.5, 1), (2.0, 1.0, 1), (2.0, 2.0, 1), (2.0, 1.5, 0),
      (2.0, 1.5, 3), (2.0, 1.5, 1_000),
    ] {
      var signal = WifiSignalModel()
      signal.weightExponent = g
      var locator = WifiLocator.Configuration()
      locator.signal = signal
      locator.accuracyScale = k
      locator.loneMaximumUnknown = lone
      let rows = [nil, 0.1].map {
        accuracy(town: town, moved: $0, signal: signal, locator: locator)
      }
      let cells = rows.map { errors in
        String(
          format: "%5.1f / %5.1f m / %4.1f %% / %4d", quantile(errors.located, 0.5),
          quantile(errors.located, 0.9),
          100 * Double(errors.withinAccuracy) / Double(max(1, errors.located.count)),
          errors.located.count)
      }
      print(
        String(format: "   g %.0f, k %.1f, lone among <= %4d unknown:  plain ", g, k, lone)
          + cells[0] + ";  moved " + cells[1])
    }
  }

  /// Figure 1 or 2: learn two hours, test one; `moved` the fraction relocated after learning (and
  /// the car's hotspot on), nil for neither.
  static func accuracy(
    town original: WifiTown, moved: Double?, signal: WifiSignalModel = WifiSignalModel(),
    locator: WifiLocator.Configuration = WifiLocator.Configuration()
  ) -> Errors {
    var town = original
    let hotspot = moved != nil
    var random = SplitMix64(seed: 0x3F1F_0002)
    var learner = WifiLearner()
    learner.configuration.signal = signal
    var table = AccessPointTable()
    let learning = town.drive(seed: 0x3F1F_0003, duration: 7_200)
    for sample in learning {
      if town.isFixTime(sample) { learner.note(town.fix(sample, &random)) }
      if town.isScanTime(sample) {
        _ = learner.learn(town.scan(sample, &random, hotspot: hotspot), into: &table)
      }
    }
    if let moved { town.relocate(fraction: moved, seed: 0x3F1F_0004) }
    let byBSSID = Dictionary(
      town.accessPoints.map { ($0.bssid, $0) }, uniquingKeysWith: { first, _ in first })
    let test = town.drive(seed: 0x3F1F_0005, duration: 3_600, start: WifiTown.epoch + 7_200)
    var errors = Errors()
    for sample in test where town.isScanTime(sample) {
      let scan = town.scan(sample, &random, hotspot: hotspot)
      errors.scans += 1
      let truth = town.coordinate(east: sample.east, north: sample.north)
      if let loudest = scan.readings.first(where: { byBSSID[$0.bssid] != nil }),
        let point = byBSSID[loudest.bssid]
      {
        errors.baseline.append(hypot(point.east - sample.east, point.north - sample.north))
      }
      guard let fix = WifiLocator.locate(scan, in: table, configuration: locator) else {
        continue
      }
      let error = Geodesic.wgs84.distance(
        latitude1: fix.latitude, longitude1: fix.longitude, latitude2: truth.latitude,
        longitude2: truth.longitude)
      errors.located.append(error)
      errors.accuracies.append(fix.horizontalAccuracy)
      if error <= fix.horizontalAccuracy { errors.withinAccuracy += 1 }
    }
    return errors
  }

  /// The `fraction` quantile of `values` (nearest rank); NaN when empty.
  static func quantile(_ values: [Double], _ fraction: Double) -> Double {
    guard !values.isEmpty else { return .nan }
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int((fraction * Double(sorted.count)).rounded(.up)) - 1)]
  }

  /// Prints one accuracy figure against its targets (metres; nil: none).
  static func report(_ title: String, _ errors: Errors, targets: (median: Double, p90: Double?)) {
    let median = quantile(errors.located, 0.5)
    let p90 = quantile(errors.located, 0.9)
    print(title)
    print(
      "  baseline (oracle): the true place of the loudest access point heard: median "
        + String(
          format: "%5.1f m, p90 %5.1f m", quantile(errors.baseline, 0.5),
          quantile(errors.baseline, 0.9)))
    print(
      "  WifiLocator: median " + String(format: "%5.1f m, p90 %5.1f m", median, p90)
        + "; fixes for \(errors.located.count) of \(errors.scans) scans ("
        + String(format: "%.1f %%", 100 * Double(errors.located.count) / Double(errors.scans))
        + "); truth within the claimed accuracy "
        + String(
          format: "%.1f %% (median accuracy %.1f m)",
          100 * Double(errors.withinAccuracy) / Double(max(1, errors.located.count)),
          quantile(errors.accuracies, 0.5)))
    print(
      "  ratio: median error " + String(format: "%.2f", median / quantile(errors.baseline, 0.5))
        + "x the oracle's; target median <= \(Int(targets.median)) m: "
        + (median <= targets.median ? "met" : "NOT met")
        + (targets.p90.map { ", p90 <= \(Int($0)) m: " + (p90 <= $0 ? "met" : "NOT met") } ?? ""))
  }

  /// Figure 3: one scan of 40 located against a table of 1,000,000 access points.
  static func timing() {
    var random = SplitMix64(seed: 0x3F1F_0006)
    let count = 1_000_000
    var records: [AccessPointRecord] = []
    records.reserveCapacity(count)
    // Records spread over a 100 km square, each from 10 observations over about 30 m.
    for _ in 0..<count {
      let bssid = random.next() & 0xFFFF_FFFF_FFFF
      let latitude = 52 + random.unit()
      let longitude = 13 + 1.5 * random.unit()
      var record = AccessPointRecord(
        bssid: bssid, latitude: latitude, longitude: longitude, weight: 1, time: WifiTown.epoch)
      for _ in 0..<9 {
        record = record.adding(
          latitude: latitude + random.uniform(-0.0003...0.0003),
          longitude: longitude + random.uniform(-0.0005...0.0005), weight: random.unit(),
          time: WifiTown.epoch)
      }
      records.append(record)
    }
    var table = AccessPointTable(records: records)
    // 1,000 scans of 40: access points of the table moved to one place each scan (a street's).
    var scans: [WifiScan] = []
    for index in 0..<1_000 {
      let latitude = 52 + random.unit()
      let longitude = 13 + 1.5 * random.unit()
      var readings: [AccessPointReading] = []
      for _ in 0..<40 {
        var record = records[Int(random.next() % UInt64(count))]
        let bssid = record.bssid
        record = AccessPointRecord(
          bssid: bssid, latitude: latitude + random.uniform(-0.0005...0.0005),
          longitude: longitude + random.uniform(-0.0008...0.0008), weight: 1,
          time: WifiTown.epoch)
        for _ in 0..<4 {
          record = record.adding(
            latitude: latitude + random.uniform(-0.0005...0.0005),
            longitude: longitude + random.uniform(-0.0008...0.0008), weight: 1,
            time: WifiTown.epoch)
        }
        table.upsert(record)
        readings.append(
          AccessPointReading(
            bssid: bssid, ssid: Array("net".utf8), signal: random.uniform(-90...(-40)).rounded(),
            frequency: 2437))
      }
      scans.append(WifiScan(time: WifiTown.epoch + Double(index), readings: readings))
    }
    let rounds = 20
    var bestLookup = Double.infinity
    var bestLocate = Double.infinity
    var sum = 0.0
    var located = 0
    for _ in 0..<5 {
      let (lookup, total) = NMEABench.time { () -> Double in
        var total = 0.0
        for _ in 0..<rounds {
          for scan in scans {
            for reading in scan.readings { total += table[bssid: reading.bssid]?.weight ?? 0 }
          }
        }
        return total
      }
      bestLookup = min(bestLookup, lookup)
      sum = total
      let (locate, fixes) = NMEABench.time { () -> Int in
        var fixes = 0
        for _ in 0..<rounds {
          for scan in scans where WifiLocator.locate(scan, in: table) != nil { fixes += 1 }
        }
        return fixes
      }
      bestLocate = min(bestLocate, locate)
      located = fixes
    }
    let per = Double(rounds * scans.count)
    let lookupMicros = bestLookup / per * 1e6
    let locateMicros = bestLocate / per * 1e6
    print("3. one scan of 40 located against a table of \(table.count) access points")
    print(
      "  baseline: 40 dictionary lookups  " + String(format: "%7.2f µs", lookupMicros)
        + "  (sum \(Int(sum)))")
    print(
      "  WifiLocator.locate  " + String(format: "%7.2f µs", locateMicros)
        + "  (\(located) of \(Int(per)) fixes)")
    print(
      "  ratio: " + String(format: "%.1f", locateMicros / lookupMicros)
        + "x the lookups' time; target <= 50 µs: " + (locateMicros <= 50 ? "met" : "NOT met"))
  }
}
