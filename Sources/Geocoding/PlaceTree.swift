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
struct PlaceTree: Sendable {
  let places: ByteRegion
  let count: Int

  init(places: ByteRegion) {
    self.places = places
    count = places.count / GazetteerFormat.placeSize
  }

  /// The unit vector of a latitude and longitude in degrees.
  static func unitVector(latitude: Double, longitude: Double) -> SIMD3<Double> {
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
  /// - Parameters:
  ///   - target: A unit vector.
  ///   - region: The land region the place must lie in, or `nil` for any place.
  /// - Returns: The place's index and its chord distance squared, or `nil` when no place
  ///   qualifies.
  func nearest(to target: SIMD3<Double>, inRegion region: Int?) -> (index: Int, chord2: Double)? {
    var best: (index: Int, chord2: Double)? = nil
    search(low: 0, high: count, depth: 0, target: target, region: region, best: &best)
    return best
  }

  private func search(
    low: Int, high: Int, depth: Int, target: SIMD3<Double>, region: Int?,
    best: inout (index: Int, chord2: Double)?
  ) {
    guard low < high, depth < 64 else { return }
    let middle = (low + high) / 2
    let point = SIMD3(coordinate(middle, 0), coordinate(middle, 1), coordinate(middle, 2))
    if region == nil || self.region(middle) == region {
      let delta = point - target
      let chord2 = (delta * delta).sum()
      if best == nil || chord2 < best?.chord2 ?? .infinity {
        best = (middle, chord2)
      }
    }
    let axis = depth % 3
    let difference = target[axis] - point[axis]
    let (near, far) =
      difference < 0 ? ((low, middle), (middle + 1, high)) : ((middle + 1, high), (low, middle))
    search(low: near.0, high: near.1, depth: depth + 1, target: target, region: region, best: &best)
    if best == nil || difference * difference < best?.chord2 ?? .infinity {
      search(low: far.0, high: far.1, depth: depth + 1, target: target, region: region, best: &best)
    }
  }

  /// The great-circle distance in metres on a sphere of the mean Earth radius for a chord of
  /// length squared `chord2` between unit vectors.
  static func metres(chord2: Double) -> Double {
    2 * 6_371_008.8 * asin(min(1, chord2.squareRoot() / 2))
  }
}
