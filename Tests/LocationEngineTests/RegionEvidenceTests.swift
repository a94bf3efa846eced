import Testing

@testable import LocationEngine

@Suite struct RegionEvidenceTests {
  struct Row: Sendable, CustomTestStringConvertible {
    var name: String
    var distance: Double
    var radius: Double
    var accuracy: Double
    var hysteresis: Double
    var expected: RegionEvidence
    var testDescription: String { name }
  }

  static let rows: [Row] = [
    // a > h: the margin is the accuracy (20).
    Row(
      name: "a>h exactly r-a", distance: 80, radius: 100, accuracy: 20, hysteresis: 5,
      expected: .inside),
    Row(
      name: "a>h just inside", distance: 79.999, radius: 100, accuracy: 20, hysteresis: 5,
      expected: .inside),
    Row(
      name: "a>h just past r-a", distance: 80.001, radius: 100, accuracy: 20, hysteresis: 5,
      expected: .none),
    Row(
      name: "a>h on the circle", distance: 100, radius: 100, accuracy: 20, hysteresis: 5,
      expected: .none),
    Row(
      name: "a>h just before r+a", distance: 119.999, radius: 100, accuracy: 20, hysteresis: 5,
      expected: .none),
    Row(
      name: "a>h exactly r+a", distance: 120, radius: 100, accuracy: 20, hysteresis: 5,
      expected: .outside),
    Row(
      name: "a>h just outside", distance: 120.001, radius: 100, accuracy: 20, hysteresis: 5,
      expected: .outside),
    // h > a: the margin is the hysteresis (30).
    Row(
      name: "h>a exactly r-h", distance: 70, radius: 100, accuracy: 5, hysteresis: 30,
      expected: .inside),
    Row(
      name: "h>a just past r-h", distance: 70.001, radius: 100, accuracy: 5, hysteresis: 30,
      expected: .none),
    Row(
      name: "h>a just before r+h", distance: 129.999, radius: 100, accuracy: 5, hysteresis: 30,
      expected: .none),
    Row(
      name: "h>a exactly r+h", distance: 130, radius: 100, accuracy: 5, hysteresis: 30,
      expected: .outside),
    // Accuracy larger than the radius: no evidence of inside is possible.
    Row(
      name: "a>r at the centre", distance: 0, radius: 100, accuracy: 150, hysteresis: 5,
      expected: .none),
    Row(
      name: "a>r far away", distance: 250, radius: 100, accuracy: 150, hysteresis: 5,
      expected: .outside),
    // Zero accuracy and hysteresis: on the circle counts as inside.
    Row(
      name: "m=0 on the circle", distance: 100, radius: 100, accuracy: 0, hysteresis: 0,
      expected: .inside),
    Row(
      name: "m=0 just outside", distance: 100.000_001, radius: 100, accuracy: 0, hysteresis: 0,
      expected: .outside),
    // Invalid accuracy: never evidence.
    Row(
      name: "negative accuracy centre", distance: 0, radius: 100, accuracy: -1, hysteresis: 5,
      expected: .none),
    Row(
      name: "negative accuracy far", distance: 1e6, radius: 100, accuracy: -1, hysteresis: 5,
      expected: .none),
    Row(
      name: "NaN accuracy", distance: 0, radius: 100, accuracy: .nan, hysteresis: 5, expected: .none
    ),
    Row(
      name: "infinite accuracy", distance: 0, radius: 100, accuracy: .infinity, hysteresis: 5,
      expected: .none),
    Row(
      name: "NaN distance", distance: .nan, radius: 100, accuracy: 5, hysteresis: 5, expected: .none
    ),
  ]

  @Test(arguments: rows)
  func rule(_ row: Row) {
    let evidence = RegionEvidence.of(
      distance: row.distance, radius: row.radius, accuracy: row.accuracy,
      hysteresis: row.hysteresis)
    #expect(evidence == row.expected)
  }
}
