import Geodesy
import LocationModel

/// What the arbiter knows of one configured source.
package struct SourceCandidate: Sendable, Equatable {
  /// The best horizontal accuracy it produces (metres, 68 %); `.infinity` for recordings.
  package var nominalAccuracy: Double
  /// Its power cost, lower is cheaper (0 none, 1 low, 2 high).
  package var power: Int
  /// It is in an outage it may recover from (gpsd went away).
  package var failing: Bool
  /// It has ended or failed for good.
  package var finished: Bool

  /// Creates a candidate.
  package init(nominalAccuracy: Double, power: Int, failing: Bool = false, finished: Bool = false) {
    self.nominalAccuracy = nominalAccuracy
    self.power = power
    self.failing = failing
    self.finished = finished
  }
}

/// Source arbitration (`docs/architecture.md`, "Sources"): which sources run, and which fix wins.
///
/// Selection: with an accuracy demand `D` (metres; negative is Apple's "best"), the sources are
/// ranked: for "best", by nominal accuracy, then power; otherwise the sources whose nominal accuracy
/// meets `D` come first, cheapest first (then most accurate), and the others after them, most
/// accurate first. The first source in that order runs; while it is failing (an outage it may
/// recover from), the next one runs as well, and so on: the cheapest set that meets the strongest
/// demand, with failover. Sources that ended for good are skipped; no demand runs nothing.
package enum SourceArbiter {
  /// The indices of the candidates to run.
  package static func select(_ candidates: [SourceCandidate], accuracy demand: Double?) -> Set<Int>
  {
    guard let demand else { return [] }
    let order = candidates.indices.filter { !candidates[$0].finished }.sorted { left, right in
      // Ties go to the order of configuration.
      (rank(candidates[left], demand) + [Double(left)])
        .lexicographicallyPrecedes(rank(candidates[right], demand) + [Double(right)])
    }
    var chosen: Set<Int> = []
    for index in order {
      chosen.insert(index)
      if !candidates[index].failing { break }
    }
    return chosen
  }

  private static func rank(_ candidate: SourceCandidate, _ demand: Double) -> [Double] {
    if demand < 0 { return [candidate.nominalAccuracy, Double(candidate.power)] }
    if candidate.nominalAccuracy <= demand {
      return [0, Double(candidate.power), candidate.nominalAccuracy]
    }
    return [1, candidate.nominalAccuracy, Double(candidate.power)]
  }
}

/// Which fix wins when several sources run: newer beats older; within `window` seconds of the last
/// accepted fix, a fix from another source is taken only if it is more accurate.
package struct FixArbiter: Sendable {
  /// The window in which a more accurate source keeps precedence (seconds).
  package var window: Double = 2
  /// What arbitration reads of the last fix taken (the whole fix would be copied for every fix).
  private var last: (time: Double, source: String, horizontalAccuracy: Double)?

  /// Creates an arbiter.
  package init() {}

  /// Whether to take the fix (and remember it).
  package mutating func accept(_ fix: Fix) -> Bool {
    guard let last else {
      note(fix)
      return true
    }
    guard fix.time >= last.time else { return false }
    let sameSource = fix.source == last.source
    if sameSource || fix.time > last.time + window
      || fix.horizontalAccuracy < last.horizontalAccuracy
    {
      note(fix)
      return true
    }
    return false
  }

  /// Remembers a fix taken without arbitration (one source running).
  package mutating func note(_ fix: Fix) {
    last = (fix.time, fix.source, fix.horizontalAccuracy)
  }
}
