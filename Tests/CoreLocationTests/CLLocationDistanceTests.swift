import CoreLocation
import Foundation
import TestSupport
import Testing

/// `distance(from:)` against GeographicLib's exact WGS 84 geodesic distances.
///
/// The tolerance (0.6 % of the distance, plus 1 mm) holds both for the spherical placeholder that
/// `Geodesy` ships today (its worst error over the reference file is 0.56 %) and for Karney's
/// ellipsoidal algorithm that replaces it (15 nm), so the tests pass before and after the switch.
/// Geodesy's own tests check the millimetre accuracy.
@Suite struct CLLocationDistanceTests {
  static let relativeTolerance = 0.006

  struct Vector: Sendable, CustomTestStringConvertible {
    var lat1: Double
    var lon1: Double
    var lat2: Double
    var lon2: Double
    var s12: Double
    var kind: String
    var testDescription: String { "\(kind) \(s12) m" }
  }

  /// `<root>/Tests/Fixtures/geodesic/vectors.csv`: `lat1,lon1,lat2,lon2,s12,azi1,azi2,class`.
  static func referenceVectors() throws -> [Vector] {
    let text = try String(
      contentsOfFile: Paths.fixture("geodesic", "vectors.csv"), encoding: .utf8)
    var vectors: [Vector] = []
    for (index, line) in text.split(separator: "\n").enumerated() where index > 0 {
      let fields = line.split(separator: ",").map(String.init)
      guard fields.count == 8,
        let lat1 = Double(fields[0]), let lon1 = Double(fields[1]),
        let lat2 = Double(fields[2]), let lon2 = Double(fields[3]),
        let s12 = Double(fields[4])
      else {
        Issue.record("vectors.csv line \(index + 1) is malformed")
        continue
      }
      vectors.append(
        Vector(lat1: lat1, lon1: lon1, lat2: lat2, lon2: lon2, s12: s12, kind: fields[7]))
    }
    return vectors
  }

  static func distance(_ vector: Vector) -> CLLocationDistance {
    let a = CLLocation(latitude: vector.lat1, longitude: vector.lon1)
    let b = CLLocation(latitude: vector.lat2, longitude: vector.lon2)
    return a.distance(from: b)
  }

  @Test func referenceFileSample() throws {
    let vectors = try Self.referenceVectors()
    try #require(vectors.count == 20_000)
    // Every 50th line: 400 lines covering every class of the file.
    for vector in stride(from: 0, to: vectors.count, by: 50).map({ vectors[$0] }) {
      let error = abs(Self.distance(vector) - vector.s12)
      #expect(
        error <= vector.s12 * Self.relativeTolerance + 0.001,
        "\(vector.kind) (\(vector.lat1), \(vector.lon1)) -> (\(vector.lat2), \(vector.lon2))")
    }
  }

  @Test(arguments: [
    // From vectors.csv (GeographicLib): a medium line near the equator, a long transpacific line.
    Vector(
      lat1: -2.9624770717937206, lon1: 169.65478688466845, lat2: -2.892754576882888,
      lon2: 169.53876739945716, s12: 15_026.997600668, kind: "medium"),
    Vector(
      lat1: 41.930336739791684, lon1: -30.247466383342726, lat2: -28.49472678632381,
      lon2: -165.63762318779075, s12: 15_751_179.259532727, kind: "long"),
    Vector(
      lat1: 9.554527412291291, lon1: 179.56582815601078, lat2: 9.67776495258427,
      lon2: -179.71672211815644, s12: 79_922.200823213, kind: "antimeridian"),
  ])
  func knownDistance(vector: Vector) {
    let error = abs(Self.distance(vector) - vector.s12)
    #expect(error <= vector.s12 * Self.relativeTolerance)
  }

  @Test func samePointIsZeroAndDistanceIsSymmetric() {
    let a = CLLocation(latitude: 52.2297, longitude: 21.0122)
    let b = CLLocation(latitude: 41.8919, longitude: 12.5113)
    #expect(a.distance(from: a) == 0)
    #expect(abs(a.distance(from: b) - b.distance(from: a)) < 0.001)
  }

  @Test func altitudeIsIgnored() {
    let time = Date()
    let low = CLLocation(
      coordinate: CLLocationCoordinate2D(latitude: 46, longitude: 7), altitude: 0,
      horizontalAccuracy: 5, verticalAccuracy: 5, timestamp: time)
    let high = CLLocation(
      coordinate: CLLocationCoordinate2D(latitude: 46, longitude: 7), altitude: 4000,
      horizontalAccuracy: 5, verticalAccuracy: 5, timestamp: time)
    #expect(low.distance(from: high) == 0)
  }

  @Test func deprecatedGetDistanceFromMatches() {
    let a = CLLocation(latitude: 0, longitude: 0)
    let b = CLLocation(latitude: 0, longitude: 1)
    #expect(deprecated.distance(from: a, to: b) == a.distance(from: b))
  }

  @Test func invalidCoordinatesDoNotCrash() {
    let a = CLLocation(latitude: .nan, longitude: 0)
    let b = CLLocation(latitude: 0, longitude: 0)
    _ = a.distance(from: b)
  }
}
