import Geodesy
import LocationModel
import Testing

@testable import LocationEngine

@Suite struct SourceArbiterTests {
  // Configured: a static file (1 km, free), GeoClue (100 m, low power), gpsd (5 m, high power).
  static let candidates = [
    SourceCandidate(nominalAccuracy: 1000, power: 0),
    SourceCandidate(nominalAccuracy: 100, power: 1),
    SourceCandidate(nominalAccuracy: 5, power: 2),
  ]

  @Test(arguments: [
    (demand: -1.0, chosen: [2]),  // best: the most accurate
    (demand: 10.0, chosen: [2]),  // only gpsd meets 10 m
    (demand: 100.0, chosen: [1]),  // GeoClue meets 100 m and is cheaper than gpsd
    (demand: 1000.0, chosen: [0]),  // a kilometre never starts the GPS-class source
    (demand: 3000.0, chosen: [0]),
    (demand: 1.0, chosen: [2]),  // nothing meets 1 m: the most accurate
  ])
  func cheapestSetMeetingTheDemand(demand: Double, chosen: [Int]) {
    #expect(SourceArbiter.select(Self.candidates, accuracy: demand) == Set(chosen))
  }

  @Test func noDemandRunsNothing() {
    #expect(SourceArbiter.select(Self.candidates, accuracy: nil).isEmpty)
  }

  @Test func failingSourceKeepsRunningWithTheNextAsBackup() {
    var candidates = Self.candidates
    candidates[2].failing = true
    #expect(SourceArbiter.select(candidates, accuracy: -1) == [2, 1])
    candidates[1].failing = true
    #expect(SourceArbiter.select(candidates, accuracy: -1) == [2, 1, 0])
  }

  @Test func finishedSourcesAreSkipped() {
    var candidates = Self.candidates
    candidates[2].finished = true
    #expect(SourceArbiter.select(candidates, accuracy: -1) == [1])
    for index in candidates.indices { candidates[index].finished = true }
    #expect(SourceArbiter.select(candidates, accuracy: -1).isEmpty)
  }

  @Test func tiesGoToConfigurationOrder() {
    let twins = [
      SourceCandidate(nominalAccuracy: 5, power: 2), SourceCandidate(nominalAccuracy: 5, power: 2),
    ]
    #expect(SourceArbiter.select(twins, accuracy: -1) == [0])
  }

  func fix(_ source: String, time: Double, accuracy: Double) -> Fix {
    Fix(latitude: 1, longitude: 1, horizontalAccuracy: accuracy, time: time, source: source)
  }

  @Test func newerBeatsOlderAndAccuracyWinsWithinTheWindow() {
    var arbiter = FixArbiter()
    let decisions = [
      fix("gps", time: 10, accuracy: 5),
      fix("gps", time: 9, accuracy: 1),  // older
      fix("wifi", time: 11, accuracy: 50),  // less accurate, within 2 s
      fix("gps", time: 11, accuracy: 5),  // same source, newer
      fix("wifi", time: 13.5, accuracy: 50),  // gps silent for more than 2 s
      fix("gps", time: 13.6, accuracy: 5),  // more accurate
    ].map { arbiter.accept($0) }
    #expect(decisions == [true, false, false, true, true, true])
  }
}
