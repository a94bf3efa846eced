import Geodesy
import LocationModel
import Testing

@testable import LocationEngine

@Suite struct SignificantChangeTests {
  /// A fix `metres` north of 45° N 7° E, placed exactly with the direct geodesic problem.
  static func fix(north metres: Double, at time: Double, accuracy: Double = 5) -> Fix {
    let point = Geodesic.wgs84.direct(latitude: 45, longitude: 7, azimuth: 0, distance: metres)
    return Fix(
      latitude: point.latitude, longitude: point.longitude, horizontalAccuracy: accuracy,
      time: time)
  }

  @Test func firstFixIsDeliveredAtOnce() {
    var rule = SignificantChange()
    let result1 = rule.receive(Self.fix(north: 0, at: 0), at: 0)
    #expect(result1)
    #expect(rule.earliestNextDelivery == 300)
  }

  @Test(arguments: [
    (499.0, 301.0, false),
    (501, 299, false),
    (501, 301, true),
    (499, 10_000, false),
    (500, 300, true),
    (5_000, 60, false),
  ])
  func fiveHundredMetresAndFiveMinutes(metres: Double, seconds: Double, delivered: Bool) {
    var rule = SignificantChange()
    _ = rule.receive(Self.fix(north: 0, at: 0), at: 0)
    let result2 = rule.receive(Self.fix(north: metres, at: seconds), at: seconds)
    #expect(result2 == delivered)
  }

  @Test func distanceIsFromTheLastDeliveredFix() {
    var rule = SignificantChange()
    _ = rule.receive(Self.fix(north: 0, at: 0), at: 0)
    // 400 m at 301 s: not delivered, so the reference stays at 0 m.
    let result3 = rule.receive(Self.fix(north: 400, at: 301), at: 301)
    #expect(!result3)
    // 800 m is 800 m from the reference (only 400 m from the last fix seen).
    let result4 = rule.receive(Self.fix(north: 800, at: 400), at: 400)
    #expect(result4)
    // Back at 301 m five minutes later: 499 m from the new reference.
    let result5 = rule.receive(Self.fix(north: 301, at: 700), at: 700)
    #expect(!result5)
    let result6 = rule.receive(Self.fix(north: 299, at: 701), at: 701)
    #expect(result6)
  }

  @Test func invalidFixesAreNeverDelivered() {
    var rule = SignificantChange()
    let bad = Fix(latitude: 45, longitude: 7, horizontalAccuracy: -1, time: 0)
    let result7 = rule.receive(bad, at: 0)
    #expect(!result7)
    #expect(rule.lastDelivered == nil)
  }

  @Test func resetSendsANewInitialEvent() {
    var rule = SignificantChange()
    _ = rule.receive(Self.fix(north: 0, at: 0), at: 0)
    rule.reset()
    let result8 = rule.receive(Self.fix(north: 10, at: 5), at: 5)
    #expect(result8)
  }
}
