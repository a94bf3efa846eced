import Foundation
import Geodesy
import LocationServices
import LocationSimulation
import Testing

/// Issue 23's Wi-Fi figure on a short trace: the access-point field covers the route, and a
/// significant-change drive on a route learned under continuous updates is served by the scanner
/// with the receiver off; learned from significant change alone, nothing is (the burst ends at the
/// receiver's first fix, before any scan coincides with it).
@Suite struct PowerWifiTests {
  let trace = PowerSimulationTests.trace
  let field = WifiTown.along(PowerSimulationTests.trace, seed: 23)

  /// The Wi-Fi of drive `number` (on day `number`) on `knowledge`.
  func wifi(_ number: Int, _ knowledge: WifiKnowledge) -> PowerSimulation.Wifi {
    PowerSimulation.Wifi(
      field: field, knowledge: knowledge, seed: UInt64(number),
      wallStart: WifiTown.epoch + Double(number) * 86_400)
  }

  @Test func theFieldCoversTheRoute() {
    var time = 0.0
    while time <= trace.duration {
      let position = trace.position(at: time)
      let here = field.plane.project(latitude: position.latitude, longitude: position.longitude)
      let nearest = field.accessPoints.map { hypot($0.east - here.east, $0.north - here.north) }
        .min()
      #expect((nearest ?? .infinity) <= 60, "at \(time) s")
      time += 10
    }
  }

  @Test func aLearnedRouteIsServedByTheScanner() {
    let knowledge = WifiKnowledge(store: nil)
    _ = PowerSimulation.run(trace, mode: .continuous, wifi: wifi(1, knowledge))
    #expect(knowledge.status().known > field.accessPoints.count / 2)
    let report = PowerSimulation.run(trace, mode: .significantChange, wifi: wifi(2, knowledge))
    #expect(report.onSeconds <= 0.02 * trace.duration)
    #expect(report.wifiDeliveries > 0)
    #expect(report.medianError < 50)
  }

  @Test func significantChangeAloneLearnsNothing() {
    let knowledge = WifiKnowledge(store: nil)
    _ = PowerSimulation.run(trace, mode: .significantChange, wifi: wifi(1, knowledge))
    #expect(knowledge.status().known == 0)
  }
}
