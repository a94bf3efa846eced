import Foundation
import LocationEngine
import LocationModel

/// A walker passing an iBeacon on a straight line, heard with the log-distance path-loss model and
/// Gaussian shadowing, and ranged once a second by the engine: the truth against which the ranging
/// estimator's `accuracy` is measured (`locbench beacons`, `BeaconAccuracyTests`).
///
/// The walker goes from `halfLength` metres before the point of closest approach to `halfLength`
/// metres after it, at `speed`, passing the beacon at `closestApproach`; the true distance at time
/// `t` is `√(x(t)² + closestApproach²)`. The beacon advertises `advertisingRate` times a second,
/// each advertisement heard with `RSSI = P₁ − 10 · n · log₁₀(d) + N(0, σ)` (T. S. Rappaport,
/// *Wireless Communications*, 2nd ed., section 4.9.1, with log-normal shadowing), rounded to a
/// whole dBm as BlueZ reports it; the noise is Box–Muller on a `SplitMix64` seeded with `seed`, so
/// a walk is the same on every run.
package struct BeaconWalk: Sendable {
  /// One advertisement as heard: when (seconds from the start of the walk), from how far, and how
  /// loud.
  package struct Heard: Sendable, Equatable {
    /// Seconds since the start of the walk.
    package var time: Double
    /// The true distance to the beacon, metres.
    package var distance: Double
    /// The received signal strength, whole dBm.
    package var rssi: Int
  }

  /// One ranging delivery of the beacon, against the truth at the delivery's instant.
  package struct Delivery: Sendable, Equatable {
    /// Seconds since the start of the walk.
    package var time: Double
    /// The true distance to the beacon then, metres.
    package var distance: Double
    /// The delivered `accuracy` (the estimated distance), metres; -1 when not heard in the window.
    package var accuracy: Double
    /// The delivered proximity.
    package var proximity: BeaconProximity

    /// Creates a delivery.
    package init(time: Double, distance: Double, accuracy: Double, proximity: BeaconProximity) {
      self.time = time
      self.distance = distance
      self.accuracy = accuracy
      self.proximity = proximity
    }

    /// `|accuracy − distance| / distance`, or nil when the beacon had no estimate.
    package var relativeError: Double? {
      accuracy < 0 ? nil : abs(accuracy - distance) / distance
    }
  }

  /// The beacon's UUID.
  package static let uuid = BeaconUUID(high: 0xE2C5_6DB5_DFFB_48D2, low: 0xB060_D0F5_A710_96E0)

  /// The seed of the shadowing noise.
  package var seed: UInt64
  /// The distance at the point of closest approach, metres.
  package var closestApproach = 0.5
  /// The walking speed, metres per second.
  package var speed = 1.2
  /// How far before and after the point of closest approach the walk starts and ends, metres.
  package var halfLength = 15.0
  /// Advertisements per second.
  package var advertisingRate = 10.0
  /// The measured power the beacon advertises (its RSSI at 1 m), dBm.
  package var measuredPower = -59
  /// The path-loss exponent of the simulated world.
  package var pathLossExponent = 2.0
  /// The shadowing's standard deviation, dB.
  package var sigma = 4.0

  /// A walk with the default geometry and radio (0.5 m, 1.2 m/s, ±15 m, 10 Hz, −59 dBm, n = 2,
  /// σ = 4 dB) and noise seeded with `seed`.
  package init(seed: UInt64) { self.seed = seed }

  /// The walk's duration, seconds.
  package var duration: Double { 2 * halfLength / speed }

  /// The true distance to the beacon `time` seconds into the walk, metres.
  package func distance(at time: Double) -> Double {
    let along = -halfLength + speed * time
    return (along * along + closestApproach * closestApproach).squareRoot()
  }

  /// Every advertisement heard during the walk, in time order.
  package func advertisements() -> [Heard] {
    var random = SplitMix64(seed: seed)
    let count = Int((duration * advertisingRate).rounded(.down))
    return (1...max(1, count)).map { index in
      let time = Double(index) / advertisingRate
      let distance = distance(at: time)
      let mean = Double(measuredPower) - 10 * pathLossExponent * log10(distance)
      return Heard(
        time: time, distance: distance, rssi: Int((mean + sigma * random.gaussian()).rounded()))
    }
  }

  /// The walk through `LocationEngine`: one client ranging the beacon's UUID, every advertisement
  /// handed to the engine at its time, and a ranging tick every second; returns the beacon's
  /// deliveries (ticks where it was not delivered at all are left out).
  package func rangeThroughEngine() -> [Delivery] {
    let origin = EngineInstant(monotonic: 1000, wall: 1_767_225_600)
    var engine = LocationEngine(allowed: true)
    let client = ClientID(1)
    _ = engine.handle(.addClient(client), at: origin)
    _ = engine.handle(.startRanging(client, BeaconConstraint(uuid: Self.uuid)), at: origin)
    var deliveries: [Delivery] = []
    var nextTick = LocationEngine.beaconTickPeriod
    /// One ranging tick at `nextTick`: the beacon's deliveries are kept.
    func tick() {
      let effects = engine.handle(.timerFired(.beaconTick), at: origin.advanced(by: nextTick))
      for case .deliverBeacons(_, _, let beacons) in effects {
        for beacon in beacons {
          deliveries.append(
            Delivery(
              time: nextTick, distance: distance(at: nextTick), accuracy: beacon.accuracy,
              proximity: beacon.proximity))
        }
      }
      nextTick += LocationEngine.beaconTickPeriod
    }
    for heard in advertisements() {
      while nextTick < heard.time { tick() }
      let advertisement = BeaconAdvertisement(
        uuid: Self.uuid, major: 1, minor: 1, measuredPower: measuredPower, rssi: heard.rssi,
        address: "AA:BB:CC:DD:EE:01", time: origin.wall + heard.time)
      _ = engine.handle(.advertisement(advertisement), at: origin.advanced(by: heard.time))
    }
    while nextTick <= duration { tick() }
    return deliveries
  }

  /// The median relative error of the deliveries whose true distance lies in `range` (metres),
  /// and how many there were; nil when there was none with an estimate.
  package static func medianRelativeError(
    _ deliveries: [Delivery], within range: ClosedRange<Double>
  ) -> (median: Double, count: Int)? {
    let errors = deliveries.filter { range.contains($0.distance) }.compactMap(\.relativeError)
      .sorted()
    guard !errors.isEmpty else { return nil }
    let middle = errors.count / 2
    let median =
      errors.count % 2 == 1 ? errors[middle] : (errors[middle - 1] + errors[middle]) / 2
    return (median, errors.count)
  }
}
