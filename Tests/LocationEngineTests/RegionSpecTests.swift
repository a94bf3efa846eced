import LocationModel
import Testing

@testable import LocationEngine

@Suite struct RegionSpecTests {
  struct Row: Sendable, CustomTestStringConvertible {
    var name: String
    var spec: RegionSpec
    var expected: RegionSpecError.Code?
    var testDescription: String { name }
  }

  static func spec(
    identifier: String = "home", latitude: Double = 48.1, longitude: Double = 11.5,
    radius: Double = 100, hysteresis: Double = 5
  ) -> RegionSpec {
    RegionSpec(
      identifier: identifier, latitude: latitude, longitude: longitude, radius: radius,
      hysteresis: hysteresis)
  }

  static let rows: [Row] = [
    Row(name: "valid", spec: spec(), expected: nil),
    Row(name: "valid at the pole", spec: spec(latitude: 90, longitude: 180), expected: nil),
    Row(name: "valid at the maximum", spec: spec(radius: 1000), expected: nil),
    Row(name: "empty identifier", spec: spec(identifier: ""), expected: .emptyIdentifier),
    Row(
      name: "identifier of 1024 bytes",
      spec: spec(identifier: String(repeating: "é", count: 512)), expected: nil),
    Row(
      name: "identifier of 1025 bytes",
      spec: spec(identifier: "x" + String(repeating: "é", count: 512)),
      expected: .identifierTooLong),
    Row(name: "latitude NaN", spec: spec(latitude: .nan), expected: .invalidCentre),
    Row(name: "latitude 91", spec: spec(latitude: 91), expected: .invalidCentre),
    Row(name: "longitude -180.5", spec: spec(longitude: -180.5), expected: .invalidCentre),
    Row(name: "longitude infinite", spec: spec(longitude: .infinity), expected: .invalidCentre),
    Row(name: "radius zero", spec: spec(radius: 0), expected: .radiusNotPositive),
    Row(name: "radius negative", spec: spec(radius: -5), expected: .radiusNotPositive),
    Row(name: "radius NaN", spec: spec(radius: .nan), expected: .radiusNotFinite),
    Row(name: "radius infinite", spec: spec(radius: .infinity), expected: .radiusNotFinite),
    Row(name: "radius above maximum", spec: spec(radius: 1000.5), expected: .radiusTooLarge),
    Row(name: "hysteresis negative", spec: spec(hysteresis: -1), expected: .invalidHysteresis),
    Row(name: "hysteresis NaN", spec: spec(hysteresis: .nan), expected: .invalidHysteresis),
  ]

  @Test(arguments: rows)
  func validation(_ row: Row) {
    let error = row.spec.validate(maximumRadius: 1000)
    #expect(error?.code == row.expected)
    if let error {
      #expect(!error.message.isEmpty)
      #expect(!error.description.contains("48.1"))
    }
  }

  @Test func monitorRejectsInvalidAndStaysUnchanged() throws {
    var monitor = RegionMonitor(maximumRadius: 1000)
    try monitor.add(Self.spec())
    #expect(throws: RegionSpecError.self) { try monitor.add(Self.spec(radius: 2000)) }
    #expect(throws: RegionSpecError.self) {
      try monitor.add(Self.spec(identifier: "x", latitude: .nan))
    }
    #expect(monitor.count == 1)
    #expect(monitor.spec(of: "home")?.radius == 100)
  }

  @Test func defaults() {
    let spec = RegionSpec(identifier: "a", latitude: 0, longitude: 0, radius: 10)
    #expect(spec.hysteresis == 5)
    #expect(spec.notifyOnEntry)
    #expect(spec.notifyOnExit)
  }
}
