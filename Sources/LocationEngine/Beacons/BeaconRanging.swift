import Foundation
import LocationModel

/// Beacon ranging (`startRangingBeacons(satisfying:)`): which beacons each client ranges, what was
/// heard of them, and the deliveries of each ranging tick. A value type: pure, no clock of its own.
///
/// The rule (ours: Apple publishes the shape of a delivery, not the estimator):
/// - **Window.** A beacon's received signal strength is smoothed over the last ``Model/window``
///   (1 s): the mean, in dBm, of the advertisements heard in it. A beacon heard before but not in
///   the window is reported with `unknown` proximity, accuracy -1 and RSSI 0; one not heard for
///   ``Model/forgetAfter`` (10 s) is no longer reported.
/// - **Distance.** The log-distance path-loss model (T. S. Rappaport, *Wireless Communications:
///   Principles and Practice*, 2nd ed., section 4.9.1):
///   `RSSI(d) = P₁ − 10 · n · log₁₀(d / 1 m)`, with `P₁` the measured power the beacon advertises
///   (its RSSI at 1 m) and the path-loss exponent `n` = ``Model/pathLossExponent`` (2, free
///   space), so `d = 10^((P₁ − RSSI) / (10 · n))`. The estimate is `accuracy`, Apple's "one sigma
///   horizontal accuracy in metres": an RSSI-derived distance's error grows in proportion to the
///   distance, so the estimate itself is the figure that tells near beacons from far ones.
/// - **Proximity.** `immediate` below ``Model/immediateLimit`` (0.5 m), `near` below
///   ``Model/nearLimit`` (4 m), `far` beyond.
/// - **Order.** Apple's: closest first (`immediate`, `near`, `far` by increasing accuracy), then
///   the `unknown` ones; ties by major, then minor.
/// - **Cadence.** One delivery per ranged constraint per tick; the engine ticks every second while
///   any client ranges, and a constraint with nothing in range gets an empty delivery, as on Apple
///   platforms.
package struct BeaconRanging: Sendable {
  /// The estimator's parameters.
  package struct Model: Sendable, Equatable {
    /// The smoothing window, seconds.
    package var window: Double = 1
    /// How long a beacon not heard is still reported (as `unknown`), seconds.
    package var forgetAfter: Double = 10
    /// The path-loss exponent `n` (2: free space; 2.5 to 4 indoors with obstacles).
    package var pathLossExponent: Double = 2
    /// Below this distance (metres) a beacon is `immediate`.
    package var immediateLimit: Double = 0.5
    /// Below this distance (metres) a beacon is `near`.
    package var nearLimit: Double = 4

    /// The default parameters.
    package init() {}

    /// The distance (metres) the model gives for a mean RSSI and a measured power.
    package func distance(rssi: Double, measuredPower: Int) -> Double {
      pow(10, (Double(measuredPower) - rssi) / (10 * pathLossExponent))
    }

    /// The proximity of a beacon at `distance` metres.
    package func proximity(distance: Double) -> BeaconProximity {
      if distance < immediateLimit { return .immediate }
      if distance < nearLimit { return .near }
      return .far
    }
  }

  /// A beacon's identity.
  struct Key: Hashable, Sendable {
    var uuid: BeaconUUID
    var major: UInt16
    var minor: UInt16
  }

  /// What was heard of one beacon: the last samples (a ring), its measured power, its last time.
  struct Heard: Sendable {
    static let capacity = 32
    var times: [Double] = []
    var rssis: [Int16] = []
    var next = 0
    var measuredPower: Int
    var last: Double

    mutating func add(rssi: Int, at now: Double) {
      if times.count < Self.capacity {
        times.append(now)
        rssis.append(Int16(clamping: rssi))
      } else {
        times[next] = now
        rssis[next] = Int16(clamping: rssi)
        next = (next + 1) % Self.capacity
      }
      last = now
    }

    /// The mean RSSI of the samples at or after `start`, or nil when there is none.
    func mean(since start: Double) -> Double? {
      var sum = 0
      var count = 0
      for index in times.indices where times[index] >= start {
        sum += Int(rssis[index])
        count += 1
      }
      return count == 0 ? nil : Double(sum) / Double(count)
    }
  }

  /// The estimator's parameters.
  package var model: Model
  /// The constraints each client ranges.
  private(set) var constraints: [ClientID: Set<BeaconConstraint>] = [:]
  private var heard: [Key: Heard] = [:]
  /// The UUIDs some constraint names: advertisements of others are not kept.
  private var wantedUUIDs: [BeaconUUID: Int] = [:]

  /// Ranging nothing.
  package init(model: Model = Model()) { self.model = model }

  /// Whether some client ranges.
  package var isRanging: Bool { !constraints.isEmpty }

  /// The constraints a client ranges, in order.
  package func constraints(of client: ClientID) -> [BeaconConstraint] {
    (constraints[client] ?? []).sorted()
  }

  /// Starts ranging a constraint for a client; false when it already ranged it.
  @discardableResult
  package mutating func start(_ client: ClientID, _ constraint: BeaconConstraint) -> Bool {
    guard constraints[client, default: []].insert(constraint).inserted else { return false }
    wantedUUIDs[constraint.uuid, default: 0] += 1
    return true
  }

  /// Stops ranging a constraint for a client.
  package mutating func stop(_ client: ClientID, _ constraint: BeaconConstraint) {
    guard constraints[client]?.remove(constraint) != nil else { return }
    if constraints[client]?.isEmpty == true { constraints[client] = nil }
    release(constraint.uuid)
  }

  /// Stops everything a client ranges; returns what it ranged.
  @discardableResult
  package mutating func remove(_ client: ClientID) -> [BeaconConstraint] {
    guard let removed = constraints.removeValue(forKey: client) else { return [] }
    for constraint in removed { release(constraint.uuid) }
    return removed.sorted()
  }

  private mutating func release(_ uuid: BeaconUUID) {
    wantedUUIDs[uuid, default: 1] -= 1
    if wantedUUIDs[uuid] == 0 {
      wantedUUIDs[uuid] = nil
      heard = heard.filter { $0.key.uuid != uuid }
    }
  }

  /// Records an advertisement heard at monotonic time `now`; one of a UUID nobody ranges is
  /// dropped.
  package mutating func observe(_ advertisement: BeaconAdvertisement, at now: Double) {
    guard wantedUUIDs[advertisement.uuid] != nil else { return }
    let key = Key(uuid: advertisement.uuid, major: advertisement.major, minor: advertisement.minor)
    heard[key, default: Heard(measuredPower: advertisement.measuredPower, last: now)].add(
      rssi: advertisement.rssi, at: now)
    heard[key]?.measuredPower = advertisement.measuredPower
  }

  /// The deliveries of one tick at monotonic time `now` (wall-clock `wall` for the timestamps):
  /// per client and constraint, in order, the beacons that satisfy it, closest first. Beacons not
  /// heard for ``Model/forgetAfter`` are forgotten first.
  package mutating func tick(at now: Double, wall: Double) -> [(
    ClientID, BeaconConstraint, [RangedBeacon]
  )] {
    heard = heard.filter { now - $0.value.last < model.forgetAfter }
    let ranged = heard.map { key, heard in beacon(key, heard, now: now, wall: wall) }
    var deliveries: [(ClientID, BeaconConstraint, [RangedBeacon])] = []
    for client in constraints.keys.sorted() {
      for constraint in constraints(of: client) {
        let beacons = ranged.filter {
          constraint.matches(uuid: $0.uuid, major: $0.major, minor: $0.minor)
        }
        deliveries.append((client, constraint, beacons.sorted(by: Self.closerFirst)))
      }
    }
    return deliveries
  }

  /// One beacon's delivery now.
  func beacon(_ key: Key, _ heard: Heard, now: Double, wall: Double) -> RangedBeacon {
    guard let mean = heard.mean(since: now - model.window) else {
      return RangedBeacon(
        uuid: key.uuid, major: key.major, minor: key.minor, proximity: .unknown, accuracy: -1,
        rssi: 0, time: wall)
    }
    let distance = model.distance(rssi: mean, measuredPower: heard.measuredPower)
    return RangedBeacon(
      uuid: key.uuid, major: key.major, minor: key.minor,
      proximity: model.proximity(distance: distance), accuracy: distance,
      rssi: Int(mean.rounded()), time: wall)
  }

  /// Apple's order: known proximities by increasing accuracy, then unknown ones; ties by major and
  /// minor.
  static func closerFirst(_ lhs: RangedBeacon, _ rhs: RangedBeacon) -> Bool {
    let leftKnown = lhs.proximity != .unknown
    let rightKnown = rhs.proximity != .unknown
    if leftKnown != rightKnown { return leftKnown }
    if leftKnown, lhs.accuracy != rhs.accuracy { return lhs.accuracy < rhs.accuracy }
    return (lhs.major, lhs.minor) < (rhs.major, rhs.minor)
  }
}
