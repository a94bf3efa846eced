#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Nearest-place search over the places of a gazetteer file, which are stored as an implicit
/// k-d tree (Bentley, "Multidimensional binary search trees used for associative searching",
/// CACM 1975): the node of the index range `[low, high)` is at `(low + high) / 2`, split on axis
/// `depth % 3`, with smaller coordinates to its left. Points are unit vectors, so the straight-line
/// (chord) distance orders places exactly as the great-circle distance does, with no special case
/// at the poles or the antimeridian. Nothing is built at run time.
package struct PlaceTree: Sendable {
  let places: ByteRegion
  let count: Int

  init(places: ByteRegion) {
    self.places = places
    count = places.count / GazetteerFormat.placeSize
  }

  /// The unit vector of a latitude and longitude in degrees.
  package static func unitVector(latitude: Double, longitude: Double) -> SIMD3<Double> {
    let phi = latitude * .pi / 180
    let lambda = longitude * .pi / 180
    return SIMD3(cos(phi) * cos(lambda), cos(phi) * sin(lambda), sin(phi))
  }

  @inline(__always)
  func coordinate(_ index: Int, _ axis: Int) -> Double {
    Double(places.f32(index * GazetteerFormat.placeSize + axis * 4))
  }

  @inline(__always)
  func region(_ index: Int) -> Int {
    Int(places.u16(index * GazetteerFormat.placeSize + 28))
  }

  /// The nearest place to `target`, optionally only among the places of one land region.
  ///
  /// Depth-first, nearer side first, with an explicit stack; a far side is visited only when the
  /// splitting plane is nearer than the best place so far.
  ///
  /// - Parameters:
  ///   - target: A unit vector.
  ///   - region: The land region the place must lie in, or `nil` for any place.
  /// - Returns: The place's index and its chord distance squared, or `nil` when no place
  ///   qualifies.
  package func nearest(to target: SIMD3<Double>, inRegion region: Int?)
    -> (index: Int, chord2: Double)?
  {
    var bestIndex = -1
    var bestDistance = Double.infinity
    // Ranges still to visit: low, high, depth, and the squared distance to their splitting plane
    // (a lower bound of the distance to any point in them). The tree is at most ~40 levels deep,
    // and each level pushes at most one range.
    var lows = InlineArray<64, Int32>(repeating: 0)
    var highs = InlineArray<64, Int32>(repeating: 0)
    var depths = InlineArray<64, Int8>(repeating: 0)
    var bounds = InlineArray<64, Double>(repeating: 0)
    var top = 0
    lows[0] = 0
    highs[0] = Int32(clamping: count)
    depths[0] = 0
    bounds[0] = 0
    top = 1
    let wanted = region ?? -1
    while top > 0 {
      top -= 1
      guard bounds[top] < bestDistance else { continue }
      var low = Int(lows[top])
      var high = Int(highs[top])
      var depth = Int(depths[top])
      while low < high {
        let middle = (low + high) >> 1
        let record = middle * GazetteerFormat.placeSize
        let x = Double(places.f32(record))
        let y = Double(places.f32(record + 4))
        let z = Double(places.f32(record + 8))
        if wanted < 0 || Int(places.u16(record + 28)) == wanted {
          let dx = x - target.x
          let dy = y - target.y
          let dz = z - target.z
          let distance = dx * dx + dy * dy + dz * dz
          if distance < bestDistance {
            bestDistance = distance
            bestIndex = middle
          }
        }
        let axis = depth % 3
        let difference = axis == 0 ? target.x - x : axis == 1 ? target.y - y : target.z - z
        let bound = difference * difference
        depth += 1
        if difference < 0 {
          if bound < bestDistance, middle + 1 < high, top < 64 {
            lows[top] = Int32(middle + 1)
            highs[top] = Int32(high)
            depths[top] = Int8(clamping: depth)
            bounds[top] = bound
            top += 1
          }
          high = middle
        } else {
          if bound < bestDistance, low < middle, top < 64 {
            lows[top] = Int32(low)
            highs[top] = Int32(middle)
            depths[top] = Int8(clamping: depth)
            bounds[top] = bound
            top += 1
          }
          low = middle + 1
        }
        guard depth < 100 else { break }  // a corrupt count could not loop forever anyway
      }
    }
    return bestIndex < 0 ? nil : (bestIndex, bestDistance)
  }

  /// The great-circle distance in metres on a sphere of the mean Earth radius for a chord of
  /// length squared `chord2` between unit vectors.
  static func metres(chord2: Double) -> Double {
    2 * 6_371_008.8 * asin(min(1, chord2.squareRoot() / 2))
  }
}
