import Foundation
import Testing

@testable import CoreLocation

@Suite struct CLHeadingTests {
  static func heading() -> CLHeading {
    CLHeading(
      magneticHeading: 45, trueHeading: 47.125, headingAccuracy: 5, x: 12, y: -3.5, z: -40.25,
      timestamp: Date(timeIntervalSince1970: 1_700_000_000))
  }

  @Test func values() {
    let heading = Self.heading()
    #expect(heading.magneticHeading == 45)
    #expect(heading.trueHeading == 47.125)
    #expect(heading.headingAccuracy == 5)
    #expect(heading.x == 12)
    #expect(heading.y == -3.5)
    #expect(heading.z == -40.25)
    #expect(heading.timestamp == Date(timeIntervalSince1970: 1_700_000_000))
  }

  @Test func plainInitializerIsZero() {
    let heading = CLHeading()
    #expect(heading.magneticHeading == 0)
    #expect(heading.trueHeading == 0)
    #expect(heading.headingAccuracy == 0)
  }

  @Test func description() {
    let text = Self.heading().description
    #expect(
      text.hasPrefix(
        "magneticHeading 45.00 trueHeading 47.12 accuracy 5.00 x 12.000 y -3.500 z -40.250 @ "))
  }

  @Test func copyAndSecureCoding() throws {
    let heading = Self.heading()
    #expect(heading.copy() as? CLHeading === heading)
    #expect(CLHeading.supportsSecureCoding)
    let data = try NSKeyedArchiver.archivedData(
      withRootObject: heading, requiringSecureCoding: true)
    let decoded = try #require(
      try NSKeyedUnarchiver.unarchivedObject(ofClass: CLHeading.self, from: data))
    #expect(decoded.magneticHeading == 45)
    #expect(decoded.trueHeading == 47.125)
    #expect(decoded.headingAccuracy == 5)
    #expect(decoded.x == 12)
    #expect(decoded.y == -3.5)
    #expect(decoded.z == -40.25)
    #expect(decoded.timestamp == heading.timestamp)
  }
}
