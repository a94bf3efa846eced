import Geodesy
import LocationModel

/// Visit detection (`startMonitoringVisits()`) as a value-type state machine fed one fix at a
/// time, with time taken from the fixes.
///
/// The method is time-based clustering, after Kang, Welbourne, Stewart and Borriello, "Extracting
/// places from traces of locations" (WMASH 2004): fixes join the current cluster while they lie
/// within a distance of its centre; a cluster that lasts at least a minimum time is a place, and
/// a fix that lies outside is held as *pending* until more evidence shows whether the device left
/// (the paper's tolerance of outliers). Our parameters and choices (Apple publishes none):
///
/// - **Usable fixes.** A fix counts when its coordinate is valid, its horizontal accuracy is at
///   most ``maximumFixAccuracy`` (100 m: a worse fix cannot tell a move out of the radius), and
///   its time is later than the last fix used. Others are ignored: they neither extend a stay nor
///   end it.
/// - **Cluster.** The centre is the mean of its fixes weighted by `1 / max(σ, 5 m)²` (σ: a fix's
///   68 % accuracy), on the tangent plane at its first fix. A fix within ``radius`` (150 m) of the
///   centre joins the cluster and discards the pending fixes (a GPS jump that came back). A fix
///   beyond the radius is *outside*; but for a cluster that is already a visit, only beyond
///   `radius + σ` (outside whatever its error, as the region rule has it), and one between is no
///   evidence either way (two reflections in a row do not end a visit).
/// - **Stay.** A cluster whose fixes span at least ``minimumStay`` (10 minutes, from its first fix
///   to its last) is a visit; the arrival event (no departure) is reported at the first fix that
///   makes it so, with the arrival at the cluster's *first* fix. A stop shorter than that (a
///   traffic light, a queue, a drop-off) is no visit, nor is a slow walk with a wait at a crossing
///   (the centre follows the fixes, so a cluster can stretch over 300 m of path: at 1.1 m/s that is
///   4.5 minutes, which 5 minutes would not have covered with a wait).
/// - **Departure.** Fixes outside end the cluster once they span at least
///   ``departureConfirmation`` (60 s) with no fix inside between them. A visit's departure is
///   reported then, dated at its *last* fix inside the radius; a new cluster starts from the
///   newest pending fixes that lie within the radius of their own centre (and may itself be a
///   visit at once, after a gap in the data).
/// - **Gaps.** A gap in the fixes does not end a cluster: a stay whose fixes resume inside the
///   radius goes on (a device indoors without a fix), and its span counts the gap.
/// - **Unknown arrival.** The first cluster after ``reset()`` (monitoring started) began before
///   anything was seen: its arrival is unknown. It is reported once, at its departure, with no
///   arrival (`CLVisit.arrivalDate` is `Date.distantPast`, as Apple documents for a visit whose
///   arrival the app did not see).
/// - **Place and accuracy.** A visit's coordinate is its cluster's centre then; its
///   `horizontalAccuracy` is `√(s² + σ̄²)`, where `s` is the weighted root-mean-square distance of
///   the fixes from the centre (how far the stay spread) and `σ̄²` the fixes' weighted mean
///   variance (how good each fix was).
package struct VisitDetector: Sendable, Equatable {
  /// The distance from a cluster's centre within which a fix belongs to it, metres.
  package static let radius = 150.0
  /// The least time a cluster's fixes must span to be a visit, seconds.
  package static let minimumStay = 600.0
  /// The least time the fixes outside a cluster must span to end it, seconds.
  package static let departureConfirmation = 60.0
  /// The worst horizontal accuracy of a fix the detector uses, metres.
  package static let maximumFixAccuracy = 100.0
  /// The accuracy below which a fix weighs no more, metres.
  static let accuracyFloor = 5.0

  /// What the detector is doing, for the power schedule.
  package enum Phase: Sendable, Equatable {
    /// No usable fix yet.
    case searching
    /// A cluster shorter than the minimum stay (moving, or a stay not yet long enough).
    case gathering
    /// A visit is under way.
    case staying
  }

  /// One cluster's sums on the tangent plane at its origin (its first fix).
  struct Cluster: Sendable, Equatable {
    var originLatitude: Double
    var originLongitude: Double
    /// Σ w, Σ w·east, Σ w·north, Σ w·(east² + north²), Σ 1 (weights `1 / σ²`).
    var weight = 0.0
    var east = 0.0
    var north = 0.0
    var squares = 0.0
    var count = 0
    /// The times of its first and last fixes, seconds since 1970.
    var first: Double
    var last: Double
    /// Whether the device was seen arriving (false for the first cluster after a reset).
    var arrivalKnown: Bool
    /// Whether it was recognised as a visit (its arrival event made).
    var isVisit = false

    init(origin fix: Fix, arrivalKnown: Bool) {
      originLatitude = fix.latitude
      originLongitude = fix.longitude
      first = fix.time
      last = fix.time
      self.arrivalKnown = arrivalKnown
      add(fix)
    }

    var plane: LocalTangentPlane {
      LocalTangentPlane(latitude: originLatitude, longitude: originLongitude)
    }

    var duration: Double { last - first }

    /// The centre on the plane, metres.
    var centre: (east: Double, north: Double) { (east / weight, north / weight) }

    mutating func add(_ fix: Fix) {
      let point = plane.project(latitude: fix.latitude, longitude: fix.longitude)
      let sigma = max(fix.horizontalAccuracy, VisitDetector.accuracyFloor)
      let w = 1 / (sigma * sigma)
      weight += w
      east += w * point.east
      north += w * point.north
      squares += w * (point.east * point.east + point.north * point.north)
      count += 1
      first = min(first, fix.time)
      last = max(last, fix.time)
    }

    /// The distance of a fix from the centre, metres.
    func distance(to fix: Fix) -> Double {
      let point = plane.project(latitude: fix.latitude, longitude: fix.longitude)
      let centre = centre
      let de = point.east - centre.east
      let dn = point.north - centre.north
      let d = (de * de + dn * dn).squareRoot()
      return d.isNaN ? .infinity : d
    }

    /// The place as a visit with the given times.
    func visit(arrival: Double?, departure: Double?) -> Visit {
      let centre = centre
      let point = plane.unproject(east: centre.east, north: centre.north)
      let spread = max(
        squares / weight - (centre.east * centre.east + centre.north * centre.north), 0)
      let meanVariance = Double(count) / weight
      return Visit(
        latitude: point.latitude, longitude: point.longitude,
        horizontalAccuracy: (spread + meanVariance).squareRoot(), arrival: arrival,
        departure: departure)
    }
  }

  private(set) var cluster: Cluster?
  /// Usable fixes outside the cluster since its last fix inside, oldest first.
  private(set) var pending: [Fix] = []
  private var lastTime: Double?

  /// Creates a detector that has seen nothing.
  package init() {}

  /// What the detector is doing.
  package var phase: Phase {
    guard let cluster else { return .searching }
    return cluster.isVisit ? .staying : .gathering
  }

  /// Whether fixes outside the current cluster wait for confirmation of a departure.
  package var departurePending: Bool { !pending.isEmpty }

  /// Whether a fix is one the detector uses (valid, accurate enough).
  package static func isUsable(_ fix: Fix) -> Bool {
    fix.hasValidCoordinate && fix.time.isFinite && fix.horizontalAccuracy <= maximumFixAccuracy
  }

  /// Forgets everything (monitoring stopped or started again); the next cluster's arrival is
  /// unknown.
  package mutating func reset() {
    cluster = nil
    pending = []
    lastTime = nil
  }

  /// Takes one fix.
  /// - Parameter fix: A fix from any source; its `time` is the clock of the rule.
  /// - Returns: The visit events it completes, oldest first: none, an arrival, a departure, or a
  ///   departure and the next place's arrival (after a gap).
  package mutating func receive(_ fix: Fix) -> [Visit] {
    guard Self.isUsable(fix), lastTime.map({ fix.time > $0 }) ?? true else { return [] }
    lastTime = fix.time
    guard var current = cluster else {
      cluster = Cluster(origin: fix, arrivalKnown: false)
      return []
    }
    let distance = current.distance(to: fix)
    if distance <= Self.radius {
      current.add(fix)
      pending.removeAll()
      var events: [Visit] = []
      recognise(&current, into: &events)
      cluster = current
      return events
    }
    // A visit is left only by fixes outside whatever their error: one whose accuracy circle
    // crosses the radius is no evidence either way. A cluster not yet a visit is left by any fix
    // beyond the radius (else a device that stops just beyond it would never start a new one).
    if current.isVisit, distance <= Self.radius + fix.horizontalAccuracy { return [] }
    pending.append(fix)
    guard fix.time - pending[0].time >= Self.departureConfirmation else { return [] }
    var events: [Visit] = []
    if current.isVisit {
      events.append(
        current.visit(arrival: current.arrivalKnown ? current.first : nil, departure: current.last))
    }
    var next = Cluster(origin: fix, arrivalKnown: true)
    // The newest pending fixes that gather round their own centre: where the device is now.
    for older in pending.dropLast().reversed() {
      guard next.distance(to: older) <= Self.radius else { break }
      next.add(older)
    }
    pending.removeAll()
    recognise(&next, into: &events)
    cluster = next
    return events
  }

  /// Makes the arrival event of a cluster that just became long enough.
  private func recognise(_ cluster: inout Cluster, into events: inout [Visit]) {
    guard !cluster.isVisit, cluster.duration >= Self.minimumStay else { return }
    cluster.isVisit = true
    if cluster.arrivalKnown {
      events.append(cluster.visit(arrival: cluster.first, departure: nil))
    }
  }
}
