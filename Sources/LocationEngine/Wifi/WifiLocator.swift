import LocationModel

/// Positions a device from one Wi-Fi scan and the learned access points: a pure function, no
/// state, no clock.
///
/// The rule (ours):
/// 1. **Candidates.** The readings that do not opt out (`_nomap`) whose BSSID the table knows,
///    not `mobile`, with a spread of at most ``Configuration/maximumSpread`` (300 m: no fixed
///    access point is heard over a wider area; a wider record mixes places, e.g. one that moved
///    once). Each is weighted `1 / d^g` from its signal (``WifiSignalModel``).
/// 2. **Consensus** (the maximum-consensus idea of RANSAC, M. A. Fischler and R. C. Bolles,
///    "Random sample consensus", CACM 1981, tried exhaustively since a scan holds at most tens of
///    access points): every candidate is a hypothesis; its support is how many candidates lie
///    within ``Configuration/consistencyDistance`` (200 m, about twice the range at which a
///    reading is still heard) of it. The one with the most support (ties: the louder) is kept with
///    its supporters; the others are dropped as moved (or as misplaced in the table). When two or
///    more candidates all disagree (no candidate has a supporter) there is no fix: nothing tells
///    which of them moved.
/// 3. **Enough evidence.** Two or more candidates kept; or one that has at least
///    ``Configuration/loneMinimumObservations`` (3) observations spread over at least
///    ``Configuration/loneMinimumSpread`` (10 m), i.e. whose spread was measured and so says how
///    far from it the device may be (a single observation's spread of 0 says nothing); and only
///    when the scan hears at most ``Configuration/loneMaximumUnknown`` (1) other access points the
///    table does not know (`_nomap` ones aside): one known access point among many unknown ones is
///    more likely a newcomer from elsewhere (moved house) than a neighbour, and nothing in the
///    scan could tell (on `locbench wifi`'s town with a tenth moved, lone fixes without this
///    condition were mostly such newcomers, kilometres off).
/// 4. **Position: weighted centroid** (J. Blumenthal, R. Grossmann, F. Golatowski and
///    D. Timmermann, "Weighted centroid localization in ZigBee-based sensor networks", IEEE WISP
///    2007) of the kept estimates, weights `1 / d^g` with `d` from the log-distance model (`g` 2,
///    see ``WifiSignalModel``): the loudest access points are the nearest, so they pull hardest,
///    and averaging the estimates of the others absorbs the shadowing of each one.
/// 5. **Accuracy** (68 %), from the data only: with `W = Σ w`, the spreads `sᵢ` of the kept access
///    points (how far from its estimate the device is when it hears one) and their distances
///    `dᵢ` from the result (how much they disagree), the root-mean-square error of the weighted
///    mean of independent errors of size `√(sᵢ² + dᵢ²)` is `r = √(Σ wᵢ² · (sᵢ² + dᵢ²)) / W`;
///    the accuracy is `max(floor, k · r)` with `k` ``Configuration/accuracyScale`` (the 68 % radius
///    of a circular normal error of RMS radius `r` is `√(ln(1/0.32)) · r` ≈ 1.07 `r`; `k` is
///    larger because the access points' errors are not independent, calibrated by `locbench
///    wifi`) and the floor ``Configuration/accuracyFloor`` (20 m): Wi-Fi never claims better.
///
/// The fix: `quality` `.network`, `source` the scan's (or `wifi`), `time` the scan's, altitude,
/// speed and course unknown.
package enum WifiLocator {
  /// The locator's constants.
  package struct Configuration: Sendable, Equatable {
    /// The weights of the readings.
    package var signal = WifiSignalModel()
    /// Two access points whose estimates are farther apart (metres) do not support each other.
    package var consistencyDistance: Double = 200
    /// Access points whose spread is wider (metres) are not used.
    package var maximumSpread: Double = 300
    /// A lone access point needs this many observations.
    package var loneMinimumObservations = 3
    /// A lone access point needs a spread of at least this many metres.
    package var loneMinimumSpread: Double = 10
    /// A lone access point is used only if the scan hears at most this many unknown ones.
    package var loneMaximumUnknown = 1
    /// The multiple of the RMS error `r` given as the 68 % accuracy.
    package var accuracyScale: Double = 1.5
    /// The smallest accuracy claimed, metres.
    package var accuracyFloor: Double = 20

    /// The default constants.
    package init() {}
  }

  /// One access point of the scan that the table knows, in the local plane.
  struct Candidate {
    /// The unit vector of its estimate.
    var x: Double, y: Double, z: Double
    /// Metres east and north of the local origin.
    var east = 0.0, north = 0.0
    /// Its spread, metres.
    var spread: Double
    /// Its observations.
    var observations: Int
    /// The weight of its reading.
    var weight: Double
  }

  /// The device's position from `scan`, or nil when the scan does not hear enough known access
  /// points that agree (see the rule above).
  package static func locate(
    _ scan: WifiScan, in table: AccessPointTable, configuration: Configuration = Configuration()
  ) -> Fix? {
    var (candidates, unknown) = gather(scan, table, configuration)
    guard
      let loudest = candidates.indices.max(by: { candidates[$0].weight < candidates[$1].weight })
    else { return nil }
    // The plane tangent to the sphere at the loudest estimate: east E and north N unit vectors.
    let origin = candidates[loudest]
    let plane = Plane(x: origin.x, y: origin.y, z: origin.z)
    for index in candidates.indices {
      (candidates[index].east, candidates[index].north) = plane.project(
        candidates[index].x, candidates[index].y, candidates[index].z)
    }
    guard let kept = consensus(candidates, configuration) else { return nil }
    if kept.count == 1 {
      let lone = kept[0]
      guard lone.observations >= configuration.loneMinimumObservations,
        lone.spread >= configuration.loneMinimumSpread,
        unknown <= configuration.loneMaximumUnknown
      else { return nil }
    }
    var total = 0.0
    var east = 0.0
    var north = 0.0
    for candidate in kept {
      total += candidate.weight
      east += candidate.weight * candidate.east
      north += candidate.weight * candidate.north
    }
    east /= total
    north /= total
    var squares = 0.0
    for candidate in kept {
      let de = candidate.east - east
      let dn = candidate.north - north
      let error = candidate.spread * candidate.spread + de * de + dn * dn
      squares += candidate.weight * candidate.weight * error
    }
    let rms = squares.squareRoot() / total
    let accuracy = max(configuration.accuracyFloor, configuration.accuracyScale * rms)
    let place = plane.unproject(east: east, north: north)
    return Fix(
      latitude: place.latitude, longitude: place.longitude, horizontalAccuracy: accuracy,
      time: scan.time, quality: .network, source: scan.source.isEmpty ? "wifi" : scan.source)
  }

  /// The usable access points of a scan (step 1), each once, and how many of its readings the
  /// table does not know (`_nomap` ones aside).
  static func gather(_ scan: WifiScan, _ table: AccessPointTable, _ configuration: Configuration)
    -> (candidates: [Candidate], unknown: Int)
  {
    var unknown = 0
    var candidates: [Candidate] = []
    var bssids: [UInt64] = []
    candidates.reserveCapacity(scan.readings.count)
    bssids.reserveCapacity(scan.readings.count)
    for reading in scan.readings where !reading.optsOut {
      guard let record = table[bssid: reading.bssid] else {
        unknown += 1
        continue
      }
      guard !record.mobile, record.weight > 0 else { continue }
      let spread = record.spread
      guard spread <= configuration.maximumSpread, !bssids.contains(reading.bssid) else { continue }
      let weight = configuration.signal.weight(signal: reading.signal)
      guard weight > 0 else { continue }
      let direction = record.direction
      bssids.append(reading.bssid)
      candidates.append(
        Candidate(
          x: direction.x, y: direction.y, z: direction.z, spread: spread,
          observations: record.observations, weight: weight))
    }
    return (candidates, unknown)
  }

  /// The candidates that agree with the best-supported one (step 2), or nil when two or more
  /// all disagree.
  static func consensus(_ candidates: [Candidate], _ configuration: Configuration) -> [Candidate]? {
    let limit = configuration.consistencyDistance * configuration.consistencyDistance
    /// Whether two candidates lie within the consistency distance of each other.
    func agree(_ a: Candidate, _ b: Candidate) -> Bool {
      let de = a.east - b.east
      let dn = a.north - b.north
      return de * de + dn * dn <= limit
    }
    var best = 0
    var bestSupport = 0
    for (index, candidate) in candidates.enumerated() {
      var support = 0
      for other in candidates where agree(candidate, other) { support += 1 }
      if support > bestSupport
        || (support == bestSupport && candidate.weight > candidates[best].weight)
      {
        best = index
        bestSupport = support
      }
    }
    if candidates.count >= 2 && bestSupport < 2 { return nil }
    let anchor = candidates[best]
    return candidates.filter { agree(anchor, $0) }
  }

  /// The plane tangent to the sphere of the estimates at a unit vector, in metres.
  struct Plane {
    /// The origin's unit vector.
    var x: Double, y: Double, z: Double
    /// The east unit vector `(−sin λ, cos λ, 0)`.
    var ex: Double, ey: Double
    /// The north unit vector `(−sin φ cos λ, −sin φ sin λ, cos φ)`.
    var nx: Double, ny: Double, nz: Double

    /// The plane at the unit vector `(x, y, z)` (at a pole, east is taken along the y axis).
    init(x: Double, y: Double, z: Double) {
      self.x = x
      self.y = y
      self.z = z
      let horizontal = (x * x + y * y).squareRoot()
      let (cosLambda, sinLambda) = horizontal > 0 ? (x / horizontal, y / horizontal) : (1, 0)
      ex = -sinLambda
      ey = cosLambda
      nx = -z * cosLambda
      ny = -z * sinLambda
      nz = horizontal
    }

    /// East and north metres of a unit vector (its components along E and N, times R).
    func project(_ ux: Double, _ uy: Double, _ uz: Double) -> (east: Double, north: Double) {
      let radius = AccessPointRecord.sphereRadius
      return (radius * (ux * ex + uy * ey), radius * (ux * nx + uy * ny + uz * nz))
    }

    /// The latitude and longitude (degrees) of the point `east`, `north` metres from the origin.
    func unproject(east: Double, north: Double) -> (latitude: Double, longitude: Double) {
      let e = east / AccessPointRecord.sphereRadius
      let n = north / AccessPointRecord.sphereRadius
      return AccessPointRecord.coordinate(
        x: x + e * ex + n * nx, y: y + e * ey + n * ny, z: z + n * nz)
    }
  }
}
