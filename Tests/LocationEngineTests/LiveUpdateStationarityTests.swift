import LocationModel
import Testing

@testable import LocationEngine

@Suite struct LiveUpdateStationarityTests {
  static func fix(_ latitude: Double, _ time: Double) -> Fix {
    Fix(latitude: latitude, longitude: 5, horizontalAccuracy: 5, time: time)
  }

  /// `other`: 50 m for 5 minutes. One update says stationary, the rest are held back until the
  /// device moves out of the radius.
  @Test func oneStationaryUpdateThenNothingUntilMoving() {
    var rule = LiveUpdateStationarity(activity: .other)
    var decisions: [LiveUpdateStationarity.Decision] = []
    for second in stride(from: 0.0, through: 400, by: 50) {
      decisions.append(rule.receive(Self.fix(52, second)))
    }
    #expect(decisions.prefix(6).allSatisfy { $0 == .deliver(isStationary: false) })
    #expect(decisions[6] == .deliver(isStationary: true))
    #expect(decisions[7...].allSatisfy { $0 == .holdBack })
    #expect(rule.receive(Self.fix(52.01, 450)) == .deliver(isStationary: false))
  }

  @Test func navigationInACarIsNeverStationary() {
    var rule = LiveUpdateStationarity(activity: .automotiveNavigation)
    for second in stride(from: 0.0, through: 3_600, by: 60) {
      #expect(rule.receive(Self.fix(52, second)) == .deliver(isStationary: false))
    }
  }
}
