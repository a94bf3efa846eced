import Foundation
import LocationEngine
import LocationModel
import LocationSimulation

/// `locbench beacons`, figure 3: the accuracy of ranging on seeded simulated walks past a beacon
/// (`BeaconWalk`: closest approach 0.5 m, 1.2 m/s, from 15 m before to 15 m after, 10 advertisements
/// a second, P₁ −59 dBm, n 2, shadowing σ 4 dB), ranged once a second by `LocationEngine`.
///
/// Prints the median of `|accuracy − d| / d` over the deliveries whose true distance `d` is at most
/// 5 m (target ≤ 30 %), and over those from 5 to 15 m for information. Then, for comparison, the
/// same figures for a few alternative estimators prototyped here on the same advertisements (a
/// longer window, the median RSSI instead of the mean): the first row of that table is the
/// engine's rule recomputed, a check that the prototype matches the engine.
enum BeaconAccuracyBench {
  /// A windowed RSSI statistic, prototyped outside the engine.
  struct Estimator {
    /// How it is named in the table.
    var name: String
    /// The window, seconds.
    var window: Double
    /// Whether the window's median RSSI is used instead of its mean.
    var median: Bool
  }

  /// The estimators compared with the engine's.
  static let estimators = [
    Estimator(name: "mean over 1 s (the engine's rule)", window: 1, median: false),
    Estimator(name: "mean over 2 s", window: 2, median: false),
    Estimator(name: "mean over 3 s", window: 3, median: false),
    Estimator(name: "median over 1 s", window: 1, median: true),
    Estimator(name: "median over 2 s", window: 2, median: true),
  ]

  /// Runs figure 3 on `walks` walks (seeds 1 to `walks`).
  static func run(walks: Int = 100) {
    let seeds = 1...UInt64(walks)
    var engine: [BeaconWalk.Delivery] = []
    var prototypes = Array(repeating: [BeaconWalk.Delivery](), count: estimators.count)
    for seed in seeds {
      let walk = BeaconWalk(seed: seed)
      engine += walk.rangeThroughEngine()
      let heard = walk.advertisements()
      for (index, estimator) in estimators.enumerated() {
        prototypes[index] += deliveries(of: walk, heard, estimator)
      }
    }
    let walk = BeaconWalk(seed: 1)
    print(
      "3. accuracy on \(walks) seeded walks past a beacon: closest approach "
        + "\(walk.closestApproach) m, \(walk.speed) m/s, ±\(Int(walk.halfLength)) m, "
        + "\(Int(walk.advertisingRate)) Hz, P1m \(walk.measuredPower) dBm, n "
        + "\(walk.pathLossExponent), σ \(walk.sigma) dB; ranged once a second")
    let near = BeaconWalk.medianRelativeError(engine, within: 0...5)
    let far = BeaconWalk.medianRelativeError(engine, within: 5.000_001...15)
    print(
      "  LocationEngine: median |accuracy - d| / d within 5 m: " + percent(near?.median)
        + " (\(near?.count ?? 0) deliveries); 5-15 m: " + percent(far?.median)
        + " (\(far?.count ?? 0))")
    print(
      "  target <= 30 % within 5 m: "
        + ((near?.median ?? .infinity) <= 0.30 ? "met" : "NOT met"))
    print("  estimators prototyped in the bench on the same advertisements:")
    print(
      "    " + VisitsBench.pad("estimator", 36) + VisitsBench.pad("<= 5 m", 10, right: true)
        + VisitsBench.pad("5-15 m", 10, right: true))
    for (index, estimator) in estimators.enumerated() {
      let near = BeaconWalk.medianRelativeError(prototypes[index], within: 0...5)
      let far = BeaconWalk.medianRelativeError(prototypes[index], within: 5.000_001...15)
      print(
        "    " + VisitsBench.pad(estimator.name, 36)
          + VisitsBench.pad(percent(near?.median), 10, right: true)
          + VisitsBench.pad(percent(far?.median), 10, right: true))
    }
  }

  /// The deliveries an estimator makes on one walk: once a second, the statistic of the RSSIs
  /// heard in the window ending then, turned into a distance with the engine's path-loss model.
  static func deliveries(
    of walk: BeaconWalk, _ heard: [BeaconWalk.Heard], _ estimator: Estimator
  ) -> [BeaconWalk.Delivery] {
    let model = BeaconRanging.Model()
    var result: [BeaconWalk.Delivery] = []
    var tick = 1.0
    while tick <= walk.duration {
      let start = tick - estimator.window
      let rssis = heard.filter { $0.time >= start && $0.time <= tick }.map { Double($0.rssi) }
        .sorted()
      if !rssis.isEmpty {
        let middle = rssis.count / 2
        let value =
          estimator.median
          ? (rssis.count % 2 == 1 ? rssis[middle] : (rssis[middle - 1] + rssis[middle]) / 2)
          : rssis.reduce(0, +) / Double(rssis.count)
        let distance = model.distance(rssi: value, measuredPower: walk.measuredPower)
        result.append(
          BeaconWalk.Delivery(
            time: tick, distance: walk.distance(at: tick), accuracy: distance,
            proximity: model.proximity(distance: distance)))
      }
      tick += 1
    }
    return result
  }

  /// A fraction as a percentage with one decimal, or `-`.
  static func percent(_ value: Double?) -> String {
    value.map { String(format: "%.1f %%", $0 * 100) } ?? "-"
  }
}
