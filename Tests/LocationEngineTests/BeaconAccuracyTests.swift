import LocationEngine
import LocationModel
import LocationSimulation
import Testing

/// The ranging estimator's accuracy on seeded walks past a beacon (`BeaconWalk`, the walks that
/// `locbench beacons` measures, fewer of them): the median relative error of `accuracy` within 5 m
/// of the beacon stays below the 30 % target.
@Suite struct BeaconAccuracyTests {
  /// The target: the median of `|accuracy − d| / d` over the deliveries within 5 m.
  static let target = 0.30

  /// Ten walks: the median relative error within 5 m is below the target.
  @Test func medianRelativeErrorWithinFiveMetresIsBelowTheTarget() throws {
    var deliveries: [BeaconWalk.Delivery] = []
    for seed in UInt64(1)...10 { deliveries += BeaconWalk(seed: seed).rangeThroughEngine() }
    let near = try #require(BeaconWalk.medianRelativeError(deliveries, within: 0...5))
    #expect(near.count >= 50)
    #expect(near.median < Self.target, "median relative error \(near.median)")
  }

  /// The walk is seeded: advertisements and deliveries repeat exactly.
  @Test func aWalkIsTheSameOnEveryRun() {
    let walk = BeaconWalk(seed: 7)
    #expect(walk.advertisements() == walk.advertisements())
    #expect(walk.rangeThroughEngine() == walk.rangeThroughEngine())
    #expect(walk.advertisements().count == 250)
    #expect(abs(walk.distance(at: walk.duration / 2) - walk.closestApproach) < 1e-9)
  }
}
