import Foundation
import TestSupport
import Testing

@testable import Geodesy

/// Seeded random properties of the geodesic solutions (SplitMix64, so every run is the same).
@Suite struct GeodesicPropertyTests {
  let geodesic = Geodesic.wgs84

  /// A random point, with extra weight on the special places: poles, equator, antimeridian.
  static func point(_ rng: inout SplitMix64) -> (Double, Double) {
    let special = rng.next() % 8
    var lat = rng.uniform(-90...90)
    var lon = rng.uniform(-180...180)
    switch special {
    case 0: lat = rng.next() % 2 == 0 ? 90 : -90
    case 1: lat = 0
    case 2: lon = rng.next() % 2 == 0 ? 180 : -180
    case 3: lat = (rng.next() % 2 == 0 ? 1 : -1) * (90 - rng.uniform(0...1e-6))
    default: break
    }
    return (lat, lon)
  }

  @Test(arguments: [UInt64(1), 2, 3])
  func distanceIsSymmetric(seed: UInt64) {
    var rng = SplitMix64(seed: seed)
    for _ in 0..<2_000 {
      let (lat1, lon1) = Self.point(&rng)
      let (lat2, lon2) = Self.point(&rng)
      let forward = geodesic.inverse(
        latitude1: lat1, longitude1: lon1, latitude2: lat2, longitude2: lon2)
      let backward = geodesic.inverse(
        latitude1: lat2, longitude1: lon2, latitude2: lat1, longitude2: lon1)
      #expect(abs(forward.distance - backward.distance) <= 1e-8, "\(lat1) \(lon1) \(lat2) \(lon2)")
      #expect(forward.distance >= 0 && forward.distance <= 20_003_931.5)
    }
  }

  @Test(arguments: [UInt64(4), 5])
  func triangleInequality(seed: UInt64) {
    var rng = SplitMix64(seed: seed)
    for _ in 0..<2_000 {
      let (lat1, lon1) = Self.point(&rng)
      let (lat2, lon2) = Self.point(&rng)
      // The third point is sometimes close to the others, so short lines are exercised.
      var (lat3, lon3) = Self.point(&rng)
      if rng.next() % 2 == 0 {
        lat3 = min(90, max(-90, lat1 + rng.uniform(-0.01...0.01)))
        lon3 = lon1 + rng.uniform(-0.01...0.01)
      }
      let d12 = geodesic.distance(
        latitude1: lat1, longitude1: lon1, latitude2: lat2, longitude2: lon2)
      let d13 = geodesic.distance(
        latitude1: lat1, longitude1: lon1, latitude2: lat3, longitude2: lon3)
      let d32 = geodesic.distance(
        latitude1: lat3, longitude1: lon3, latitude2: lat2, longitude2: lon2)
      #expect(d12 <= d13 + d32 + 1e-6)
    }
  }

  /// inverse then direct lands on the second point; direct then inverse gives back the distance
  /// and azimuth (when the line is shortest, i.e. not longer than half a meridian... and the
  /// azimuth is defined).
  @Test(arguments: [UInt64(6), 7, 8])
  func inverseDirectRoundTrip(seed: UInt64) {
    var rng = SplitMix64(seed: seed)
    for _ in 0..<2_000 {
      let (lat1, lon1) = Self.point(&rng)
      let (lat2, lon2) = Self.point(&rng)
      let inverse = geodesic.inverse(
        latitude1: lat1, longitude1: lon1, latitude2: lat2, longitude2: lon2)
      let direct = geodesic.direct(
        latitude: lat1, longitude: lon1, azimuth: inverse.azimuth1, distance: inverse.distance)
      let miss = metres(direct.latitude, direct.longitude, lat2, lon2)
      #expect(miss <= 1e-6, "\(lat1) \(lon1) \(lat2) \(lon2): misses by \(miss) m")
    }
  }

  @Test(arguments: [UInt64(9), 10])
  func directInverseRoundTrip(seed: UInt64) {
    var rng = SplitMix64(seed: seed)
    for _ in 0..<2_000 {
      let (lat1, lon1) = Self.point(&rng)
      let azimuth = rng.uniform(-180...180)
      // Short lines and lines up to nearly half the globe (beyond, the geodesic is not the
      // shortest path and the inverse rightly finds another).
      let distance =
        rng.next() % 2 == 0 ? rng.uniform(0...20_000) : rng.uniform(0...19_000_000)
      let direct = geodesic.direct(
        latitude: lat1, longitude: lon1, azimuth: azimuth, distance: distance)
      let inverse = geodesic.inverse(
        latitude1: lat1, longitude1: lon1, latitude2: direct.latitude,
        longitude2: direct.longitude)
      #expect(abs(inverse.distance - distance) <= 1e-6, "\(lat1) \(lon1) \(azimuth) \(distance)")
      if abs(lat1) < 89 && distance > 1 {
        #expect(
          angleError(inverse.azimuth1, azimuth) <= 1e-8, "\(lat1) \(lon1) \(azimuth) \(distance)")
      }
    }
  }

  /// The short-line fast path of `distance` agrees with the full solution to 0.1 µm right up to
  /// and past its limit, at all latitudes and across the antimeridian.
  @Test(arguments: [UInt64(11), 12, 13])
  func fastPathAgreesWithKarney(seed: UInt64) {
    var rng = SplitMix64(seed: seed)
    var worst = 0.0
    for _ in 0..<20_000 {
      let (lat1, lon1) = Self.point(&rng)
      let azimuth = rng.uniform(-180...180)
      let distance = rng.uniform(0...25_000)
      let end = geodesic.direct(
        latitude: lat1, longitude: lon1, azimuth: azimuth, distance: distance)
      let fast = geodesic.distance(
        latitude1: lat1, longitude1: lon1, latitude2: end.latitude, longitude2: end.longitude)
      let full = geodesic.inverse(
        latitude1: lat1, longitude1: lon1, latitude2: end.latitude, longitude2: end.longitude
      ).distance
      worst = max(worst, abs(fast - full))
      #expect(abs(fast - full) <= 1e-7, "\(lat1) \(lon1) \(azimuth) \(distance)")
    }
    print("fast path: worst difference from Karney \(worst) m")
  }

  @Test func specialCases() {
    // Identical points, poles, equator, antipodes.
    #expect(geodesic.distance(latitude1: 10, longitude1: 20, latitude2: 10, longitude2: 20) == 0)
    let poles = geodesic.inverse(latitude1: 90, longitude1: 0, latitude2: -90, longitude2: 0)
    #expect(abs(poles.distance - 20_003_931.458_625_6) < 1e-6)
    let equator = geodesic.inverse(latitude1: 0, longitude1: 0, latitude2: 0, longitude2: 90)
    #expect(abs(equator.distance - 6_378_137 * .pi / 2) < 1e-6)
    #expect(equator.azimuth1 == 90 && equator.azimuth2 == 90)
    // Antipodal points on the equator: the shortest path goes over a pole.
    let antipodal = geodesic.inverse(latitude1: 0, longitude1: 0, latitude2: 0, longitude2: 180)
    #expect(abs(antipodal.distance - 20_003_931.458_625_6) < 1e-6)
    #expect(abs(antipodal.azimuth1) == 0 || abs(antipodal.azimuth1) == 180)
    // -180 and 180 are the same meridian.
    #expect(geodesic.distance(latitude1: 30, longitude1: -180, latitude2: 30, longitude2: 180) == 0)
  }

  /// With f = 0 the solution is the great circle.
  @Test(arguments: [UInt64(14)])
  func sphereGivesGreatCircles(seed: UInt64) {
    let sphere = Geodesic(a: 6_371_000, f: 0)
    var rng = SplitMix64(seed: seed)
    for _ in 0..<2_000 {
      let (lat1, lon1) = Self.point(&rng)
      let (lat2, lon2) = Self.point(&rng)
      let degree = Double.pi / 180
      let (p1, p2, dl) = (lat1 * degree, lat2 * degree, (lon2 - lon1) * degree)
      // The central angle by the atan2 form, accurate for all separations.
      let y =
        ((cos(p2) * sin(dl)) * (cos(p2) * sin(dl))
        + (cos(p1) * sin(p2) - sin(p1) * cos(p2) * cos(dl))
          * (cos(p1) * sin(p2) - sin(p1) * cos(p2) * cos(dl)))
        .squareRoot()
      let x = sin(p1) * sin(p2) + cos(p1) * cos(p2) * cos(dl)
      let expected = 6_371_000 * atan2(y, x)
      let s = sphere.distance(latitude1: lat1, longitude1: lon1, latitude2: lat2, longitude2: lon2)
      let full = sphere.inverse(
        latitude1: lat1, longitude1: lon1, latitude2: lat2, longitude2: lon2)
      #expect(abs(s - expected) <= 1e-6, "\(lat1) \(lon1) \(lat2) \(lon2)")
      #expect(abs(full.distance - expected) <= 1e-6, "\(lat1) \(lon1) \(lat2) \(lon2)")
    }
  }

  @Test func directBackwardsAndAroundTheWorld() {
    let forward = geodesic.direct(latitude: 52, longitude: 4, azimuth: 60, distance: 1_000_000)
    let back = geodesic.direct(
      latitude: forward.latitude, longitude: forward.longitude, azimuth: forward.azimuth,
      distance: -1_000_000)
    #expect(metres(back.latitude, back.longitude, 52, 4) < 1e-6)
    // A whole meridian ellipse (four quarter meridians) comes back to the start.
    let quarter = geodesic.inverse(latitude1: 0, longitude1: 0, latitude2: 90, longitude2: 0)
    let around = geodesic.direct(
      latitude: 10, longitude: 20, azimuth: 0, distance: 4 * quarter.distance)
    #expect(metres(around.latitude, around.longitude, 10, 20) < 1e-6)
    #expect(abs(around.azimuth) < 1e-9)
    // Along the equator, longitude grows by distance / a.
    let east = geodesic.direct(latitude: 0, longitude: 170, azimuth: 90, distance: 2_000_000)
    #expect(east.latitude == 0 || abs(east.latitude) < 1e-12)
    #expect(abs(east.longitude - (170 + 2_000_000 / 6_378_137 * 180 / .pi - 360)) < 1e-9)
  }

  @Test func invalidInputGivesNaN() {
    #expect(geodesic.distance(latitude1: 91, longitude1: 0, latitude2: 0, longitude2: 0).isNaN)
    #expect(geodesic.distance(latitude1: .nan, longitude1: 0, latitude2: 0, longitude2: 0).isNaN)
    #expect(
      geodesic.inverse(latitude1: 0, longitude1: .infinity, latitude2: 0, longitude2: 0).distance
        .isNaN)
    #expect(geodesic.direct(latitude: 0, longitude: 0, azimuth: .nan, distance: 1).latitude.isNaN)
    #expect(
      geodesic.direct(latitude: 0, longitude: 0, azimuth: 0, distance: .infinity).latitude.isNaN)
  }
}
