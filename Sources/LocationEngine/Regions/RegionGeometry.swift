/// Geometry for the region index: trigonometry in degrees, unit vectors, bounds on the WGS-84
/// geodesic distance, and conservative bounding boxes of geodesic circles.
///
/// The bounds. In geodetic coordinates the WGS-84 line element is
/// `ds² = M(φ)² dφ² + (N(φ) cos φ)² dλ²`, with the meridional radius of curvature `M` between
/// `a(1 - e²)` (equator) and `a / √(1 - e²)` (poles) and the prime-vertical radius `N` between `a`
/// and `a / √(1 - e²)`. Mapping `(φ, λ)` onto the unit sphere gives `dσ² = dφ² + cos²φ dλ²`, so every
/// curve satisfies `M_min dσ <= ds <= M_max dσ`, hence for the geodesic distance `d` and the
/// great-circle angle `θ` between the same geodetic coordinates on the unit sphere:
/// `M_min θ <= d <= M_max θ` (to within 0.5 %). The haversine placeholder in `Geodesy` (radius
/// 6,371,008.8 m) lies inside the same bounds. The index and the filters use only these bounds; the
/// decision itself always uses the exact distance.
enum RegionGeometry {
  /// `a (1 - e²)` for WGS-84 (6,335,439.33 m), rounded down: a lower bound on the radii of curvature.
  static let minimumCurvatureRadius: Double = 6_335_439
  /// `a / √(1 - e²)` for WGS-84 (6,399,593.63 m), rounded up: an upper bound on the radii of curvature.
  static let maximumCurvatureRadius: Double = 6_399_594
  /// Degrees to radians.
  static let radiansPerDegree: Double = .pi / 180

  /// Sine and cosine of an angle in degrees.
  ///
  /// The argument is reduced exactly in degrees (IEEE remainder by 360 when outside -180...180,
  /// then by the nearest quadrant, exact by Sterbenz's lemma), the approach of GeographicLib's `Math::sincosd` (Karney 2013); the reduced
  /// angle, at most 45°, goes through the Taylor series of sine (to t^17) and cosine (to t^18),
  /// whose truncation errors are below 1e-16.
  /// - Parameter degrees: A finite angle in degrees.
  /// - Returns: The sine and the cosine.
  @inline(__always)
  static func sinCos(degrees: Double) -> (sin: Double, cos: Double) {
    var reduced = abs(degrees) <= 180 ? degrees : degrees.remainder(dividingBy: 360)
    // The nearest quadrant (halves away from zero); truncation avoids a call into libm.
    let scaled = reduced / 90
    let quadrant = Double(Int(scaled + (scaled < 0 ? -0.5 : 0.5)))
    reduced -= 90 * quadrant
    let t = reduced * radiansPerDegree
    let t2 = t * t
    // Horner forms of the Taylor series: sin t = t - t³/3! + ..., cos t = 1 - t²/2! + ...
    var s = 1.0 / 355_687_428_096_000  // 1/17!
    s = s * t2 - 1.0 / 1_307_674_368_000  // 1/15!
    s = s * t2 + 1.0 / 6_227_020_800  // 1/13!
    s = s * t2 - 1.0 / 39_916_800  // 1/11!
    s = s * t2 + 1.0 / 362_880  // 1/9!
    s = s * t2 - 1.0 / 5040
    s = s * t2 + 1.0 / 120
    s = s * t2 - 1.0 / 6
    s = (s * t2) * t + t
    var c = 1.0 / 6_402_373_705_728_000  // 1/18!
    c = c * t2 - 1.0 / 20_922_789_888_000  // 1/16!
    c = c * t2 + 1.0 / 87_178_291_200  // 1/14!
    c = c * t2 - 1.0 / 479_001_600  // 1/12!
    c = c * t2 + 1.0 / 3_628_800  // 1/10!
    c = c * t2 - 1.0 / 40_320
    c = c * t2 + 1.0 / 720
    c = c * t2 - 1.0 / 24
    c = c * t2 + 0.5
    c = 1 - c * t2
    switch Int(quadrant) & 3 {
    case 0: return (s, c)
    case 1: return (c, -s)
    case 2: return (-s, -c)
    default: return (-c, s)  // a quadrant number
    }
  }

  /// The point on the unit sphere whose latitude and longitude are the given geodetic ones.
  /// - Parameters:
  ///   - latitude: Degrees.
  ///   - longitude: Degrees.
  /// - Returns: `(cos φ cos λ, cos φ sin λ, sin φ)`.
  @inline(__always)
  static func unitVector(latitude: Double, longitude: Double) -> (x: Double, y: Double, z: Double) {
    let phi = sinCos(degrees: latitude)
    let lambda = sinCos(degrees: longitude)
    return (phi.cos * lambda.cos, phi.cos * lambda.sin, phi.sin)
  }

  /// A conservative latitude-longitude box around a geodesic circle.
  struct Box: Equatable {
    /// Southern edge, degrees, >= -90.
    var south: Double
    /// Northern edge, degrees, <= 90.
    var north: Double
    /// Western edge, degrees; below -180 when the box crosses the antimeridian.
    var west: Double
    /// Eastern edge, degrees; above 180 when the box crosses the antimeridian.
    var east: Double
    /// True when the box spans every longitude (the circle contains a pole, or is very wide).
    var allLongitudes: Bool
  }

  /// A box that contains every point whose geodesic distance from the centre is at most `radius`.
  ///
  /// The circle lies inside the spherical cap of angular radius `σ = radius / M_min` (see the type's
  /// comment), plus 1 m for rounding. The cap spans latitudes `φ0 ± σ`; if that reaches a pole the
  /// cap contains it and spans all longitudes; otherwise its half-width in longitude is
  /// `asin(sin σ / cos φ0)` (the great circles through the pole tangent to the cap), which is
  /// bounded above with `sin σ <= σ` and `asin x <= min(πx/2, x/√(1-x²))`.
  /// - Parameters:
  ///   - latitude: Centre latitude, degrees, -90...90.
  ///   - longitude: Centre longitude, degrees, -180...180.
  ///   - radius: Radius in metres, finite and > 0.
  /// - Returns: The box.
  static func boundingBox(latitude: Double, longitude: Double, radius: Double) -> Box {
    let sigma = (radius + 1) / minimumCurvatureRadius
    let sigmaDegrees = sigma / radiansPerDegree
    let south = latitude - sigmaDegrees
    let north = latitude + sigmaDegrees
    var box = Box(
      south: max(-90, south), north: min(90, north), west: -180, east: 180, allLongitudes: true)
    if north >= 90 || south <= -90 || sigmaDegrees >= 90 { return box }
    let cosine = sinCos(degrees: latitude).cos - 1e-15
    guard cosine > 0 else { return box }
    let x = sigma / cosine
    guard x < 1 else { return box }
    let halfWidth = min(x * .pi / 2, x / (1 - x * x).squareRoot()) / radiansPerDegree
    let delta = halfWidth * (1 + 1e-12) + 1e-12
    guard delta < 180 else { return box }
    box.west = longitude - delta
    box.east = longitude + delta
    box.allLongitudes = false
    return box
  }
}
