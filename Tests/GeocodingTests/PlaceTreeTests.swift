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
