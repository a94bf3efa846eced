import Foundation
import TestSupport
import Testing

@testable import Geodesy

/// One line of `geodesic/vectors.csv`: a GeographicLib answer to the inverse problem.
struct GeodesicVector: Sendable {
  var lat1: Double
  var lon1: Double
  var lat2: Double
  var lon2: Double
  var s12: Double
  var azi1: Double
  var azi2: Double
  var kind: String
  var line: Int

  /// True when the azimuths are undefined: identical points or a point at a pole.
  var azimuthsUndefined: Bool {
    kind == "identical" || abs(lat1) == 90 || abs(lat2) == 90
  }

  static let all: [GeodesicVector] = {
    guard let text = try? Paths.fixtureText("geodesic", "vectors.csv") else { return [] }
    var vectors: [GeodesicVector] = []
    for (index, line) in text.split(separator: "\n").enumerated() where index > 0 {
      let fields = line.split(separator: ",")
      guard fields.count == 8,
        let lat1 = Double(fields[0]), let lon1 = Double(fields[1]),
        let lat2 = Double(fields[2]), let lon2 = Double(fields[3]),
        let s12 = Double(fields[4]), let azi1 = Double(fields[5]), let azi2 = Double(fields[6])
      else { continue }
      vectors.append(
        GeodesicVector(
          lat1: lat1, lon1: lon1, lat2: lat2, lon2: lon2, s12: s12, azi1: azi1, azi2: azi2,
          kind: String(fields[7]), line: index + 1))
    }
    return vectors
  }()

  static let kinds = [
    "short", "medium", "long", "near_antipodal", "near_pole", "antimeridian", "identical",
  ]
}

/// The difference of two angles in degrees, reduced to [0, 180].
func angleError(_ x: Double, _ y: Double) -> Double {
  abs(remainder(x - y, 360))
}

@Suite struct GeodesicVectorTests {
  let geodesic = Geodesic.wgs84

  @Test func vectorsAreAllThere() {
    #expect(GeodesicVector.all.count == 20_000)
    #expect(Set(GeodesicVector.all.map(\.kind)) == Set(GeodesicVector.kinds))
  }

  @Test(arguments: GeodesicVector.kinds)
  func inverseMatchesGeographicLib(kind: String) {
    let vectors = GeodesicVector.all.filter { $0.kind == kind }
    #expect(!vectors.isEmpty)
    var worstDistance = 0.0
    var worstAzimuth = 0.0
    for v in vectors {
      let r = geodesic.inverse(
        latitude1: v.lat1, longitude1: v.lon1, latitude2: v.lat2, longitude2: v.lon2)
      let ds = abs(r.distance - v.s12)
      worstDistance = max(worstDistance, ds)
      #expect(ds <= 1e-6, "vectors.csv:\(v.line) distance off by \(ds) m")
      if !v.azimuthsUndefined {
        let da = max(angleError(r.azimuth1, v.azi1), angleError(r.azimuth2, v.azi2))
        worstAzimuth = max(worstAzimuth, da)
        #expect(da <= 1e-9, "vectors.csv:\(v.line) azimuth off by \(da)°")
      }
      #expect((-180...180).contains(r.azimuth1) && (-180...180).contains(r.azimuth2))
    }
    print("inverse \(kind): worst distance \(worstDistance) m, worst azimuth \(worstAzimuth)°")
  }

  @Test(arguments: GeodesicVector.kinds)
  func distanceMatchesGeographicLib(kind: String) {
    var worst = 0.0
    for v in GeodesicVector.all where v.kind == kind {
      let s = geodesic.distance(
        latitude1: v.lat1, longitude1: v.lon1, latitude2: v.lat2, longitude2: v.lon2)
      let ds = abs(s - v.s12)
      worst = max(worst, ds)
      #expect(ds <= 1e-6, "vectors.csv:\(v.line) distance off by \(ds) m")
    }
    print("distance \(kind): worst \(worst) m")
  }

  @Test(arguments: GeodesicVector.kinds)
  func directRoundTrip(kind: String) {
    var worst = 0.0
    var worstAzimuth = 0.0
    for v in GeodesicVector.all where v.kind == kind {
      let d = geodesic.direct(
        latitude: v.lat1, longitude: v.lon1, azimuth: v.azi1, distance: v.s12)
      let miss = metres(d.latitude, d.longitude, v.lat2, v.lon2)
      worst = max(worst, miss)
      #expect(miss <= 1e-6, "vectors.csv:\(v.line) direct misses by \(miss) m")
      if !v.azimuthsUndefined {
        let da = angleError(d.azimuth, v.azi2)
        worstAzimuth = max(worstAzimuth, da)
        #expect(da <= 1e-9, "vectors.csv:\(v.line) final azimuth off by \(da)°")
      }
    }
    print("direct \(kind): worst miss \(worst) m, worst final azimuth \(worstAzimuth)°")
  }
}

/// A local estimate of the distance between two nearby points, metres (enough to measure
/// micrometre misses; longitude differences shrink with the cosine of the latitude).
func metres(_ lat1: Double, _ lon1: Double, _ lat2: Double, _ lon2: Double) -> Double {
  let degree = Double.pi / 180
  let north = (lat2 - lat1) * degree * 6_378_137
  let east = remainder(lon2 - lon1, 360) * degree * 6_378_137 * cos(lat1 * degree)
  return (north * north + east * east).squareRoot()
}
