import Geodesy
import LocationModel
import Testing

@testable import LocationEngine

@Suite struct StationaryDetectorTests {
  func fix(north metres: Double, at time: Double, accuracy: Double = 5) -> Fix {
    Fix(latitude: 45 + metres / 111_132, longitude: 7, horizontalAccuracy: accuracy, time: time)
  }

  @Test(arguments: [
    (ActivityType.other, 50.0, 300.0),
    (.fitness, 25, 600),
    (.otherNavigation, 50, 1800),
  ])
  func stationaryAfterTheDwellWithinTheRadius(
    activity: ActivityType, radius: Double, dwell: Double
  ) {
    var detector = StationaryDetector(activity: activity)
    #expect(detector.radius == radius && detector.dwell == dwell)
    var time = 0.0
    while time < dwell {
      let observed1 = detector.observe(
        fix(north: (time / 10).truncatingRemainder(dividingBy: 2) * 10, at: time))
      #expect(!observed1)
      time += 10
    }
    let observed2 = detector.observe(fix(north: 0, at: dwell))
    #expect(observed2)
    // Moving beyond radius + accuracy ends it at once.
    let observed3 = detector.observe(fix(north: radius + 6, at: dwell + 1))
    #expect(!observed3)
  }

  @Test(arguments: [ActivityType.automotiveNavigation, .airborne])
  func navigationNeverPauses(activity: ActivityType) {
    var detector = StationaryDetector(activity: activity)
    for minute in 0..<120 {
      let observed4 = detector.observe(fix(north: 0, at: Double(minute) * 60))
      #expect(!observed4)
    }
  }

  @Test func poorAccuracyWidensTheRadius() {
    var detector = StationaryDetector(radius: 50, dwell: 60)
    _ = detector.observe(fix(north: 0, at: 0))
    // 90 m away, but with 50 m accuracy: still within 50 + 50.
    let observed5 = detector.observe(fix(north: 90, at: 60, accuracy: 50))
    #expect(observed5)
  }

  @Test func invalidFixesAreNeverStationary() {
    var detector = StationaryDetector(radius: 50, dwell: 0)
    let observed6 = detector.observe(fix(north: 0, at: 0, accuracy: -1))
    #expect(!observed6)
  }
}
