import Foundation
import TestSupport
import Testing

@testable import Geodesy

@Suite struct LocalTangentPlaneTests {
  @Test(arguments: [UInt64(21), 22])
  func roundTrip(seed: UInt64) {
    var rng = SplitMix64(seed: seed)
    for _ in 0..<2_000 {
      let (lat0, lon0) = GeodesicPropertyTests.point(&rng)
      let plane = LocalTangentPlane(latitude: lat0, longitude: lon0)
      let end = Geodesic.wgs84.direct(
        latitude: lat0, longitude: lon0, azimuth: rng.uniform(-180...180),
        distance: rng.uniform(0...100_000))
      let (east, north) = plane.project(latitude: end.latitude, longitude: end.longitude)
      let back = plane.unproject(east: east, north: north)
      let miss = metres(back.latitude, back.longitude, end.latitude, end.longitude)
      #expect(miss < 1e-6, "\(lat0) \(lon0): misses by \(miss) m")
    }
  }

  @Test func axesPointEastAndNorth() {
    let plane = LocalTangentPlane(latitude: 45, longitude: 179.9999)
    // Across the antimeridian, east is still east.
    let eastward = Geodesic.wgs84.direct(
      latitude: 45, longitude: 179.9999, azimuth: 90, distance: 100)
    let (e, n) = plane.project(latitude: eastward.latitude, longitude: eastward.longitude)
    #expect(abs(e - 100) < 1e-3 && abs(n) < 1e-3)
    let northward = Geodesic.wgs84.direct(
      latitude: 45, longitude: 179.9999, azimuth: 0, distance: 100)
    let (e2, n2) = plane.project(latitude: northward.latitude, longitude: northward.longitude)
    #expect(abs(e2) < 1e-9 && abs(n2 - 100) < 1e-3)
    let origin = plane.project(latitude: 45, longitude: 179.9999)
    #expect(abs(origin.east) < 1e-9 && abs(origin.north) < 1e-9)
  }

  /// Distances in the plane match geodesic distances to within s^3 / (6 R^2) or so.
  @Test(arguments: [10.0, 1_000.0, 10_000.0])
  func distancesNearTheOrigin(distance: Double) {
    let plane = LocalTangentPlane(latitude: -33.9, longitude: 18.4)
    for azimuth in stride(from: -180.0, to: 180, by: 15) {
      let end = Geodesic.wgs84.direct(
        latitude: -33.9, longitude: 18.4, azimuth: azimuth, distance: distance)
      let (e, n) = plane.project(latitude: end.latitude, longitude: end.longitude)
      let planar = (e * e + n * n).squareRoot()
      let bound = pow(distance, 3) / (6 * 6_300_000 * 6_300_000) + 1e-9
      #expect(abs(planar - distance) <= bound)
    }
  }

  @Test func atThePoles() {
    let plane = LocalTangentPlane(latitude: 90, longitude: 0)
    let (e, n) = plane.project(latitude: 89.99, longitude: 90)
    #expect(e > 1_000 && abs(n) < 1e-6)
    let back = plane.unproject(east: e, north: n)
    #expect(abs(back.latitude - 89.99) < 1e-12 && abs(back.longitude - 90) < 1e-9)
  }

  @Test func farPointsDoNotCrash() {
    let plane = LocalTangentPlane(latitude: 10, longitude: 10)
    let far = plane.unproject(east: 1e8, north: -1e8)
    #expect(far.latitude.isFinite && far.longitude.isFinite)
    #expect(plane.unproject(east: .nan, north: 0).latitude.isNaN)
    #expect(plane.project(latitude: 100, longitude: 0).east.isNaN)
  }
}
