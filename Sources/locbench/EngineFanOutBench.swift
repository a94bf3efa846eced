// The engine's step for a daemon's fan-out, in `locbench replay` (engine half): one fix into an
// engine serving 500 streaming clients (no distance filter) and 50,000 regions, the shape of
// `locbench daemon`. `locationd` sends nothing before this step returns, so its time is waited
// by every client of the fix. Timed back to back (warm) and after 100 ms of sleep (a 10 Hz
// receiver's idle gap, which leaves the step's memory cold on a busy machine).
import Foundation
import LocationEngine
import LocationModel

enum EngineFanOutBench {
  static let clients = 500
  static let regions = 50_000

  static func run() {
    var engine = LocationEngine(allowed: true)
    let start = EngineInstant(monotonic: 0, wall: 1_700_000_000)
    for raw in 1...clients {
      _ = engine.handle(.addClient(ClientID(raw)), at: start)
      _ = engine.handle(.startUpdates(ClientID(raw), UpdateRequest()), at: start)
    }
    // Circles of 100 m on a grid 5 to 28 km north of the track: none is entered.
    for index in 0..<regions {
      let spec = RegionSpec(
        identifier: "region-\(index)", latitude: 52.05 + Double(index % 100) * 0.002,
        longitude: 13.0 + Double(index / 100) * 0.001, radius: 100)
      _ = engine.handle(
        .addRegion(group: "app", spec, initialState: .outside, requester: nil), at: start)
    }
    var effects: [EngineEffect] = []
    var delivered = 0
    func step(_ index: Int) -> Double {
      let now = EngineInstant(
        monotonic: Double(index) * 0.1, wall: start.wall + Double(index) * 0.1)
      let fix = Fix(
        latitude: 52.0 + Double(index) * 1e-6, longitude: 13.0, altitude: 12,
        horizontalAccuracy: 3.6, speed: 10, course: 90, time: now.wall, quality: .autonomous,
        satellitesUsed: 10, source: "nmea+tcp://127.0.0.1:40000")
      effects.removeAll(keepingCapacity: true)
      let begin = ContinuousClock.now
      engine.handle(.fix(fix), at: now, into: &effects)
      let elapsed = ContinuousClock.now - begin
      for effect in effects {
        if case .deliverLocations = effect { delivered += 1 }
      }
      return Double(elapsed.components.attoseconds) * 1e-12
        + Double(elapsed.components.seconds) * 1e6
    }
    var warm: [Double] = []
    for index in 0..<2000 { warm.append(step(index)) }
    var idle: [Double] = []
    for index in 2000..<2030 {
      usleep(100_000)
      idle.append(step(index))
    }
    func median(_ values: [Double]) -> String {
      String(format: "%.1f", LatencyBench.median(values))
    }
    print(
      "  LocationEngine.handle(.fix), \(clients) clients and \(regions) regions: median "
        + "\(median(warm)) µs back to back, \(median(idle)) µs after 100 ms idle "
        + "(\(delivered / (warm.count + idle.count)) deliveries a fix)")
  }
}
