import Foundation
import TestSupport
import Testing

@testable import Geodesy

@Suite struct GeoBoundingBoxTests {
  /// Every point of the circle (sampled densely, and the circle's own extreme points found by
  /// the direct problem) is inside the box; the box is no more than 0.5 % too large.
  @Test(arguments: [UInt64(31), 32, 33])
  func coversTheCircle(seed: UInt64) {
    var rng = SplitMix64(seed: seed)
    for _ in 0..<300 {
      let (lat, lon) = GeodesicPropertyTests.point(&rng)
      let radius = [0.0, 1, 100, 10_000, 1_000_000, 5_000_000][Int(rng.next() % 6)]
      let box = GeoBoundingBox.around(latitude: lat, longitude: lon, radius: radius)
      #expect(box.contains(latitude: lat, longitude: lon))
      for step in 0..<360 {
        let edge = Geodesic.wgs84.direct(
          latitude: lat, longitude: lon, azimuth: Double(step), distance: radius)
        #expect(
          box.contains(latitude: edge.latitude, longitude: edge.longitude),
          "centre \(lat) \(lon) radius \(radius) azimuth \(step)")
      }
    }
  }

  @Test func isNearlyTight() {
    let box = GeoBoundingBox.around(latitude: 45, longitude: 7, radius: 10_000)
    let north = Geodesic.wgs84.direct(latitude: 45, longitude: 7, azimuth: 0, distance: 10_000)
    #expect(box.maxLatitude >= north.latitude)
    #expect(box.maxLatitude - 45 <= (north.latitude - 45) * 1.005)
    #expect(!box.wrapsAntimeridian && !box.coversAllLongitudes)
  }

  @Test func wrapsTheAntimeridian() {
    let box = GeoBoundingBox.around(latitude: -17, longitude: 179.99, radius: 50_000)
    #expect(box.wrapsAntimeridian)
    #expect(box.minLongitude > 0 && box.maxLongitude < 0)
    #expect(box.contains(latitude: -17, longitude: -179.9))
    #expect(box.contains(latitude: -17, longitude: 180))
    #expect(box.contains(latitude: -17, longitude: -180))
    #expect(box.contains(latitude: -17, longitude: 539.9))
    #expect(!box.contains(latitude: -17, longitude: 0))
  }

  @Test func reachesThePole() {
    let box = GeoBoundingBox.around(latitude: 89.9, longitude: 30, radius: 20_000)
    #expect(box.maxLatitude == 90 && box.coversAllLongitudes)
    #expect(box.contains(latitude: 89.95, longitude: -150))
    let south = GeoBoundingBox.around(latitude: -90, longitude: 0, radius: 1)
    #expect(south.minLatitude == -90 && south.coversAllLongitudes)
  }

  @Test func oddRadii() {
    let zero = GeoBoundingBox.around(latitude: 10, longitude: 20, radius: 0)
    #expect(zero.contains(latitude: 10, longitude: 20))
    #expect(!zero.contains(latitude: 10.001, longitude: 20))
    let negative = GeoBoundingBox.around(latitude: 10, longitude: 20, radius: -5)
    #expect(negative.contains(latitude: 10, longitude: 20))
    let nanRadius = GeoBoundingBox.around(latitude: 10, longitude: 20, radius: .nan)
    #expect(nanRadius.contains(latitude: 10, longitude: 20))
    let huge = GeoBoundingBox.around(latitude: 10, longitude: 20, radius: .infinity)
    #expect(huge.minLatitude == -90 && huge.maxLatitude == 90 && huge.coversAllLongitudes)
    let nanCentre = GeoBoundingBox.around(latitude: .nan, longitude: 20, radius: 10)
    #expect(!nanCentre.contains(latitude: 0, longitude: 20))
    #expect(!zero.contains(latitude: .nan, longitude: 20))
  }
}
