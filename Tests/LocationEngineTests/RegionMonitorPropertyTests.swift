import Foundation
import LocationModel
import TestSupport
import Testing

@testable import LocationEngine

/// The index-driven monitor against the brute-force `ReferenceMonitor`: identical events for every
/// fix and every change, on seeded random regions and tracks near the poles, across the
/// antimeridian and in ordinary places, with radii from 1 m to 100 km.
@Suite struct RegionMonitorPropertyTests {
  enum Place: Sendable, CaseIterable {
    case northPole, southPole, antimeridian, anywhere
  }

  struct Scenario: Sendable, CustomTestStringConvertible {
    var seed: UInt64
    var place: Place
    var regions: Int
    var testDescription: String { "seed \(seed) \(place) \(regions) regions" }
  }

  static let scenarios: [Scenario] = [
    Scenario(seed: 1, place: .northPole, regions: 1500),
    Scenario(seed: 2, place: .southPole, regions: 400),
    Scenario(seed: 3, place: .antimeridian, regions: 1500),
    Scenario(seed: 4, place: .anywhere, regions: 300),
    Scenario(seed: 5, place: .antimeridian, regions: 200),
    Scenario(seed: 6, place: .northPole, regions: 300),
  ]

  static func start(_ place: Place, _ rng: inout SplitMix64) -> (
    latitude: Double, longitude: Double
  ) {
    switch place {
    case .northPole:
      return (
        Double.random(in: 89.95...90, using: &rng), Double.random(in: -180...180, using: &rng)
      )
    case .southPole:
      return (
        Double.random(in: -90 ... -89.95, using: &rng), Double.random(in: -180...180, using: &rng)
      )
    case .antimeridian: return (Double.random(in: -60...60, using: &rng), 179.99)
    case .anywhere:
      return (Double.random(in: -70...70, using: &rng), Double.random(in: -180...180, using: &rng))
    }
  }

  static func randomAccuracy(_ rng: inout SplitMix64) -> Double {
    switch Int.random(in: 0..<20, using: &rng) {
    case 0: return -1
    case 1: return .nan
    case 2: return 0
    case 3: return 5000
    default: return Double.random(in: 1...60, using: &rng)
    }
  }

  static func randomSpec(
    _ identifier: String, near track: [(latitude: Double, longitude: Double)],
    _ rng: inout SplitMix64
  ) -> RegionSpec {
    let anchor = track[Int.random(in: 0..<track.count, using: &rng)]
    let radius: Double
    switch Int.random(in: 0..<10, using: &rng) {
    case 0: radius = exp(Double.random(in: log(10_000.0)...log(100_000.0), using: &rng))
    case 1: radius = Double.random(in: 1...20, using: &rng)
    default: radius = exp(Double.random(in: log(20.0)...log(3000.0), using: &rng))
    }
    let centre = destination(
      latitude: anchor.latitude, longitude: anchor.longitude,
      distance: Double.random(in: 0...(radius * 1.5), using: &rng),
      bearing: Double.random(in: 0..<360, using: &rng))
    // Now and then exactly on a pole or on the antimeridian.
    var latitude = centre.latitude
    var longitude = centre.longitude
    switch Int.random(in: 0..<40, using: &rng) {
    case 0: latitude = latitude > 0 ? 90 : -90
    case 1: longitude = 180
    case 2: longitude = -180
    default: break
    }
    return RegionSpec(
      identifier: identifier, latitude: latitude, longitude: longitude, radius: radius,
      hysteresis: [0, 5, 5, 20][Int.random(in: 0..<4, using: &rng)],
      notifyOnEntry: Bool.random(using: &rng), notifyOnExit: Bool.random(using: &rng))
  }

  static func track(_ place: Place, count: Int, _ rng: inout SplitMix64) -> [(
    latitude: Double, longitude: Double
  )] {
    var position = start(place, &rng)
    var result = [position]
    var bearing = Double.random(in: 0..<360, using: &rng)
    while result.count < count {
      bearing += Double.random(in: -60...60, using: &rng)
      let step =
        Bool.random(using: &rng)
        ? Double.random(in: 0...300, using: &rng) : Double.random(in: 0...3000, using: &rng)
      position = destination(
        latitude: position.latitude, longitude: position.longitude, distance: step, bearing: bearing
      )
      switch Int.random(in: 0..<60, using: &rng) {
      case 0: position.longitude = 180
      case 1: position.longitude = -180
      case 2 where place == .northPole: position.latitude = 90
      case 3 where place == .southPole: position.latitude = -90
      default: break
      }
      result.append(position)
    }
    return result
  }

  @Test(arguments: scenarios)
  func indexAgreesWithBruteForce(_ scenario: Scenario) throws {
    var rng = SplitMix64(seed: scenario.seed)
    let path = Self.track(scenario.place, count: 400, &rng)
    var monitor = RegionMonitor()
    var reference = ReferenceMonitor()
    var nextName = 0
    func newName() -> String {
      nextName += 1
      return "r\(nextName)"
    }
    for _ in 0..<scenario.regions {
      let spec = Self.randomSpec(newName(), near: path, &rng)
      let state: RegionState = [.unknown, .unknown, .inside, .outside][
        Int.random(in: 0..<4, using: &rng)]
      let added = reference.add(spec, initialState: state)
      let expected = try #require(added)
      #expect(try monitor.add(spec, initialState: state) == expected)
    }
    if scenario.seed.isMultiple(of: 2) { monitor.buildIndex() }
    var compared = 0
    var changes = 0
    for (step, point) in path.enumerated() {
      // Sometimes change the set of regions between fixes.
      switch Int.random(in: 0..<10, using: &rng) {
      case 0:
        let spec = Self.randomSpec(newName(), near: path, &rng)
        let added = reference.add(spec, initialState: .unknown)
        let expected = try #require(added)
        #expect(try monitor.add(spec) == expected)
      case 1:
        if let name = reference.order.randomElement(using: &rng) {
          var spec = Self.randomSpec(name, near: path, &rng)
          spec.identifier = name
          let state: RegionState = [.unknown, .inside, .outside][Int.random(in: 0..<3, using: &rng)]
          let added = reference.add(spec, initialState: state)
          let expected = try #require(added)
          #expect(try monitor.add(spec, initialState: state) == expected)
        }
      case 2:
        if let name = reference.order.randomElement(using: &rng) {
          #expect(monitor.remove(identifier: name) == reference.remove(name))
        }
      default: break
      }
      if step == 200 && scenario.regions > 1000 {
        // Remove most regions: forces a compaction.
        for name in reference.order.shuffled(using: &rng).prefix(reference.order.count - 100) {
          #expect(monitor.remove(identifier: name) == reference.remove(name))
        }
      }
      let accuracy = Self.randomAccuracy(&rng)
      let expected = reference.evaluate(
        latitude: point.latitude, longitude: point.longitude, accuracy: accuracy)
      let actual = monitor.evaluate(
        latitude: point.latitude, longitude: point.longitude, accuracy: accuracy)
      #expect(
        actual == expected, "fix \(step) at \(point.latitude),\(point.longitude) ±\(accuracy)")
      if actual != expected { break }
      compared += 1
      changes += expected.count
    }
    #expect(monitor.specs == reference.specs)
    #expect(monitor.states == reference.states)
    #expect(monitor.count == reference.order.count)
    #expect(compared == path.count)
    #expect(changes > 50)  // the scenario really exercises transitions
  }
}
