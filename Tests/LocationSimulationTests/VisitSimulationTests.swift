import LocationServices
import Testing

@testable import LocationSimulation

/// `locbench visits` on a few seeded days: the targets as bounds, on the manual clock
/// (simulated seconds, never wall time).
@Suite struct VisitSimulationTests {
  /// A day is the same for a seed, with its stays, stops and outages where the rules put them.
  @Test(arguments: [1, 2, 3] as [UInt64])
  func daysAreSeededAndShaped(seed: UInt64) throws {
    let day = SyntheticDay(seed: seed)
    let again = SyntheticDay(seed: seed)
    #expect(day.stays == again.stays)
    #expect(day.stops == again.stops)
    #expect(day.outages == again.outages)
    #expect(day.stays.count >= 5 && day.stays.count <= 7)
    #expect(day.stays.first?.arrival == nil)
    #expect(day.stays.last?.departure == nil)
    for stay in day.stays.dropFirst().dropLast() {
      let length = try #require(stay.departure) - (try #require(stay.arrival))
      #expect(length >= 900 && length <= 10_800)
    }
    for stop in day.stops { #expect(stop.end - stop.start <= 240) }
  }

  /// Both arrivals and departures found with precision and recall of at least 95 %, each within 5
  /// minutes, with the receiver duty-cycled; no visit at a stop.
  @Test(arguments: [1, 2, 3, 4] as [UInt64])
  func visitsAreFoundOnSeededDays(seed: UInt64) {
    let report = VisitSimulation.run(SyntheticDay(seed: seed))
    #expect(report.arrivals.recall >= 0.95)
    #expect(report.arrivals.precision >= 0.95)
    #expect(report.departures.recall >= 0.95)
    #expect(report.departures.precision >= 0.95)
    #expect(report.falseAtStops == 0)
    #expect((report.arrivals.errors + report.departures.errors).allSatisfy { $0 <= 300 })
    // Duty-cycled: on for a few seconds a minute at most.
    #expect(report.onFraction < 0.12)
  }

  /// With another client keeping the receiver on, the detector sees every fix: still no miss.
  @Test func continuousFixesGiveTheSameVisits() {
    let report = VisitSimulation.run(SyntheticDay(seed: 5), mode: .continuous)
    #expect(report.arrivals.recall >= 0.95 && report.arrivals.precision >= 0.95)
    #expect(report.departures.recall >= 0.95 && report.departures.precision >= 0.95)
    #expect(report.onFraction > 0.99)
  }

  /// The power row of visit monitoring: a fraction of continuous on-time.
  @Test func visitMonitoringDutyCyclesTheReceiver() {
    let report = PowerSimulation.run(PowerSimulation.stationaryDay, mode: .visits)
    #expect(report.onFraction < 0.05)
    #expect(report.starts > 50)
  }
}
