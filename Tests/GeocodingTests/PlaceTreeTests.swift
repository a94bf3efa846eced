import Foundation
import Testing

@testable import Geocoding

/// The k-d tree search (copied top levels, places on splitting planes read late, buckets scanned
/// whole) against a scan of every place: the same nearest distance, with and without a region.
@Suite struct PlaceTreeTests {
  @Test func nearestAgreesWithAScanOfEveryPlace() throws {
    let gazetteer = try #require(shippedGazetteer)
    let tree = gazetteer.tree
    var state: UInt64 = 7
    func uniform() -> Double {
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return Double(state >> 11) / Double(1 << 53)
    }
    for trial in 0..<80 {
      // Half the points near places, half anywhere (far from any place, at sea, at the poles).
      var latitude = uniform() * 180 - 90
      var longitude = uniform() * 360 - 180
      if trial % 2 == 0 {
        let place = gazetteer.placeCoordinate(Int(uniform() * Double(gazetteer.placeCount)))
        latitude = max(-90, min(90, place.latitude + (uniform() - 0.5) * 0.02))
        longitude = max(-180, min(180, place.longitude + (uniform() - 0.5) * 0.02))
      }
      let target = PlaceTree.unitVector(latitude: latitude, longitude: longitude)
      let region = gazetteer.land.region(latitude: latitude, longitude: longitude)
      for wanted in [nil, region == 0 ? nil : region] {
        var best = Double.infinity
        for index in 0..<tree.count where wanted == nil || tree.region(index) == wanted {
          let dx = tree.coordinate(index, 0) - target.x
          let dy = tree.coordinate(index, 1) - target.y
          let dz = tree.coordinate(index, 2) - target.z
          best = min(best, dx * dx + dy * dy + dz * dz)
        }
        let found = tree.nearest(to: target, inRegion: wanted)
        #expect(found?.chord2 == (best.isFinite ? best : nil), "at \(latitude), \(longitude)")
        if let found, wanted != nil { #expect(tree.region(found.index) == wanted) }
        // A first leaf that is another point's is searched like any other range: the same answer.
        let elsewhere = tree.firstLeaf(
          of: PlaceTree.unitVector(latitude: -latitude, longitude: longitude / 2))
        let other = tree.nearest(to: target, inRegion: wanted, leaf: elsewhere)
        #expect(other?.chord2 == found?.chord2, "another leaf, at \(latitude), \(longitude)")
        // `early` is called at most once, with a place of the first leaf that qualifies.
        let leaf = tree.firstLeaf(of: target)
        var early: [Int] = []
        _ = tree.nearest(to: target, inRegion: wanted, leaf: leaf, early: { early.append($0) })
        #expect(early.count <= 1)
        for index in early {
          #expect(leaf.contains(index))
          #expect(wanted == nil || tree.region(index) == wanted)
        }
      }
    }
  }
}

/// The clearance that lets a reverse lookup skip the outlines (`Gazetteer.clearanceMetres`):
/// every point within a place's clearance lies in the place's land region, as the outlines say.
@Suite struct PlaceClearanceTests {
  /// The point `metres` from (`latitude`, `longitude`) on a sphere of the mean radius, towards
  /// `bearing` radians (the direct problem on the sphere, by the spherical law of cosines).
  static func destination(
    latitude: Double, longitude: Double, metres: Double, bearing: Double
  ) -> (latitude: Double, longitude: Double) {
    let delta = metres / 6_371_008.8
    let phi = latitude * .pi / 180
    let lambda = longitude * .pi / 180
    let phi2 = asin(sin(phi) * cos(delta) + cos(phi) * sin(delta) * cos(bearing))
    var lambda2 =
      lambda + atan2(sin(bearing) * sin(delta) * cos(phi), cos(delta) - sin(phi) * sin(phi2))
    if lambda2 > .pi { lambda2 -= 2 * .pi }
    if lambda2 < -.pi { lambda2 += 2 * .pi }
    return (phi2 * 180 / .pi, lambda2 * 180 / .pi)
  }

  @Test func pointsWithinAPlacesClearanceLieInItsRegion() throws {
    let gazetteer = try #require(shippedGazetteer)
    let tree = gazetteer.tree
    var checked = 0
    var cleared = 0
    // Every 11th place (the whole file takes minutes in a debug build), eight points on a circle
    // just inside its clearance, and the place itself.
    for place in stride(from: 0, to: tree.count, by: 11) {
      let code = tree.clearanceCode(place)
      guard code > 0 else { continue }
      cleared += 1
      let region = tree.region(place)
      let centre = gazetteer.placeCoordinate(place)
      let radius = Gazetteer.clearanceMetres(code: code) * 0.999
      #expect(
        gazetteer.land.region(latitude: centre.latitude, longitude: centre.longitude) == region)
      for step in 0..<8 {
        let point = Self.destination(
          latitude: centre.latitude, longitude: centre.longitude, metres: radius,
          bearing: Double(step) * .pi / 4)
        let found = gazetteer.land.region(latitude: point.latitude, longitude: point.longitude)
        #expect(found == region, "place \(place) code \(code) towards \(step * 45)°")
        checked += 1
      }
    }
    // Most places are far enough inside their country for the shortcut to matter.
    #expect(cleared * 11 > tree.count * 8 / 10)
    #expect(checked > 0)
  }

  @Test func theShortcutAnswersAsTheOutlinesDo() throws {
    let gazetteer = try #require(shippedGazetteer)
    var state: UInt64 = 11
    func uniform() -> Double {
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return Double(state >> 11) / Double(1 << 53)
    }
    var cleared = 0
    for _ in 0..<3_000 {
      let place = gazetteer.placeCoordinate(Int(uniform() * Double(gazetteer.placeCount)))
      let point = Self.destination(
        latitude: place.latitude, longitude: place.longitude, metres: 3_000 * uniform(),
        bearing: 2 * .pi * uniform())
      let target = PlaceTree.unitVector(latitude: point.latitude, longitude: point.longitude)
      let nearest = try #require(gazetteer.tree.nearest(to: target, inRegion: nil))
      guard gazetteer.withinClearance(nearest) != nil else { continue }
      cleared += 1
      let region = gazetteer.land.region(latitude: point.latitude, longitude: point.longitude)
      #expect(region == gazetteer.tree.region(nearest.index))
      #expect(gazetteer.tree.nearest(to: target, inRegion: region)?.index == nearest.index)
    }
    // Most of these points take the shortcut, so the comparison is not vacuous.
    #expect(cleared > 3_000 / 2)
  }
}
