import Foundation
import Geodesy
import TestSupport
import Testing

@testable import LocationEngine

@Suite struct RegionGeometryTests {
  @Test func sinCosInDegreesMatchesTheLibrary() {
    var rng = SplitMix64(seed: 7)
    for _ in 0..<10_000 {
      let x = Double.random(in: -720...720, using: &rng)
      let (s, c) = RegionGeometry.sinCos(degrees: x)
      #expect(abs(s - sin(x * .pi / 180)) < 5e-15)
      #expect(abs(c - cos(x * .pi / 180)) < 5e-15)
    }
    for x in [0.0, 90, 180, -90, 270, 45, -180] {
      let (s, c) = RegionGeometry.sinCos(degrees: x)
      #expect(abs(s * s + c * c - 1) < 5e-15)
    }
    #expect(RegionGeometry.sinCos(degrees: 90) == (1, 0))
    #expect(RegionGeometry.sinCos(degrees: 180).cos == -1)
  }

  /// Every point within the radius falls in one of the cells the region is filed in, including
  /// near the poles, across the antimeridian and for huge radii.
  @Test(arguments: [1, 2, 3, 4] as [UInt64])
  func filedCellsCoverTheCircle(seed: UInt64) throws {
    var rng = SplitMix64(seed: seed)
    for trial in 0..<300 {
      let latitude: Double
      let longitude: Double
      switch trial % 5 {
      case 0: latitude = Double.random(in: 89.5...90, using: &rng)
      case 1: latitude = Double.random(in: -90 ... -89.5, using: &rng)
      default: latitude = Double.random(in: -90...90, using: &rng)
      }
      switch trial % 3 {
      case 0: longitude = [180.0, -180.0, 179.9999, -179.9999][Int.random(in: 0..<4, using: &rng)]
      default: longitude = Double.random(in: -180...180, using: &rng)
      }
      let radius = exp(Double.random(in: log(1.0)...log(3_000_000.0), using: &rng))
      let box = RegionGeometry.boundingBox(latitude: latitude, longitude: longitude, radius: radius)
      var cells = Set<UInt64>()
      let level = RegionGrid.forEachCell(of: box) { cells.insert($0) }
      #expect(cells.count <= RegionGrid.cellsPerRegion)
      for _ in 0..<50 {
        let p = destination(
          latitude: latitude, longitude: longitude,
          distance: Double.random(in: 0...(radius * 1.02), using: &rng),
          bearing: Double.random(in: 0..<360, using: &rng))
        let d = Geodesic.wgs84.distance(
          latitude1: p.latitude, longitude1: p.longitude, latitude2: latitude, longitude2: longitude
        )
        guard d <= radius else { continue }
        let key = RegionGrid.key(latitude: p.latitude, longitude: p.longitude, level: level)
        #expect(cells.contains(key), "centre \(latitude),\(longitude) r \(radius) point \(p)")
      }
    }
  }

  @Test func distanceBoundsHoldForTheEllipsoid() {
    // M_min θ <= d <= M_max θ for the distance in use.
    var rng = SplitMix64(seed: 11)
    for _ in 0..<2000 {
      let a = (Double.random(in: -90...90, using: &rng), Double.random(in: -180...180, using: &rng))
      let b = (Double.random(in: -90...90, using: &rng), Double.random(in: -180...180, using: &rng))
      let u = RegionGeometry.unitVector(latitude: a.0, longitude: a.1)
      let v = RegionGeometry.unitVector(latitude: b.0, longitude: b.1)
      let cross = (
        u.y * v.z - u.z * v.y, u.z * v.x - u.x * v.z, u.x * v.y - u.y * v.x
      )
      let sinTheta = (cross.0 * cross.0 + cross.1 * cross.1 + cross.2 * cross.2).squareRoot()
      let theta = atan2(sinTheta, u.x * v.x + u.y * v.y + u.z * v.z)
      let d = Geodesic.wgs84.distance(
        latitude1: a.0, longitude1: a.1, latitude2: b.0, longitude2: b.1)
      #expect(d >= RegionGeometry.minimumCurvatureRadius * theta - 1e-6)
      #expect(d <= RegionGeometry.maximumCurvatureRadius * theta + 1e-6)
    }
  }
}
