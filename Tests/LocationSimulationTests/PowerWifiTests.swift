import Foundation
import Geodesy
import LocationServices
import LocationSimulation
import Testing

/// Issue 23's Wi-Fi figure on a short trace: the access-point field covers the route, and a
/// significant-change drive on a route learned under continuous updates is served by the scanner
/// with the receiver off; significant change alone learns from its bursts (the learning hold).
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

  /// The learning hold: each burst keeps the receiver on for one scan, so significant change
  /// alone learns the route drive by drive and the receiver runs less on the next drive.
  @Test func significantChangeAloneLearnsFromItsBursts() {
    let knowledge = WifiKnowledge(store: nil)
    let first = PowerSimulation.run(trace, mode: .significantChange, wifi: wifi(1, knowledge))
    let learned = knowledge.status().known
    #expect(learned > 0)
    let second = PowerSimulation.run(trace, mode: .significantChange, wifi: wifi(2, knowledge))
    #expect(knowledge.status().known >= learned)
    #expect(second.wifiDeliveries > 0)
    #expect(second.onSeconds <= first.onSeconds)
  }
}
