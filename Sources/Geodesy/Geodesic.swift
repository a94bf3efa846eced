// Geodesics on an ellipsoid of revolution, after C. F. F. Karney, "Algorithms for geodesics",
// J. Geodesy 87 (2013) 43-55 (doi:10.1007/s00190-012-0578-z). Equation numbers in comments refer to
// that paper.
import Foundation

/// Geodesics on an ellipsoid of revolution (Karney's algorithms, accurate to about 15 nm on WGS-84).
///
/// Angles are in degrees, distances in metres. Latitudes outside [-90, 90] or non-finite inputs
/// give NaN results, never a crash. The series expansions are those of Karney (2013) to sixth
/// order, accurate to round-off for flattenings |f| <= 0.01; only oblate and spherical
/// ellipsoids (f >= 0) are supported.
package struct Geodesic: Sendable {
  /// Semi-major axis in metres.
  package let a: Double
  /// Flattening.
  package let f: Double

  // Derived constants (Karney (2013), section 2).
  let f1: Double  // 1 - f
  let e2: Double  // first eccentricity squared
  let ep2: Double  // second eccentricity squared
  let n: Double  // third flattening
  let b: Double  // semi-minor axis
  let etol2: Double  // below this sigma12 the short-line start is the answer
  let longitudeSeries: LongitudeSeries
  // For the short-line fast path (Geodesic+ShortDistance.swift).
  let oneMinusE2: Double
  let shortLineLimit: Double

  /// WGS-84 (NIMA TR8350.2): a = 6378137 m, f = 1/298.257223563.
  package static let wgs84 = Geodesic(a: 6_378_137, f: 1 / 298.257_223_563)

  /// Creates a geodesic calculator for an ellipsoid.
  ///
  /// - Parameters:
  ///   - a: The equatorial radius in metres (positive).
  ///   - f: The flattening, 0 <= f <= 0.01 for full accuracy (WGS-84: 1/298.257223563).
  package init(a: Double, f: Double) {
    self.a = a
    self.f = f
    f1 = 1 - f
    e2 = f * (2 - f)
    ep2 = e2 / (f1 * f1)
    n = f / (2 - f)
    b = a * f1
    let tol2 = Double.ulpOfOne.squareRoot()
    etol2 = 0.1 * tol2 / (max(0.001, abs(f)) * min(1, 1 - f / 2) / 2).squareRoot()
    longitudeSeries = LongitudeSeries(n: n)
    oneMinusE2 = 1 - e2
    shortLineLimit = Self.shortLineChordLimit * a / 6_378_137
  }

  /// The geodesic distance in metres between two points.
  ///
  /// Lines shorter than about 20 km take a fast path (the chord between the points, corrected by
  /// the normal curvature at the midpoint) that agrees with Karney's solution to better than
  /// 0.1 µm; longer lines use the full solution of ``inverse(latitude1:longitude1:latitude2:longitude2:)``.
  ///
  /// - Parameters:
  ///   - latitude1: Latitude of the first point, degrees.
  ///   - longitude1: Longitude of the first point, degrees.
  ///   - latitude2: Latitude of the second point, degrees.
  ///   - longitude2: Longitude of the second point, degrees.
  /// - Returns: The length of the shortest geodesic in metres; NaN for invalid input.
  package func distance(
    latitude1: Double,
    longitude1: Double,
    latitude2: Double,
    longitude2: Double
  ) -> Double {
    if let short = shortDistance(latitude1, longitude1, latitude2, longitude2) {
      return short
    }
    return solveInverse(latitude1, longitude1, latitude2, longitude2).distance
  }

  /// Solves the inverse problem: the shortest geodesic between two points.
  ///
  /// Robust everywhere: identical points, the poles, the antimeridian, near-antipodal points (by
  /// Newton's method from the astroid starting guess, Karney (2013), section 5) and lines along the
  /// equator. When the azimuths are undefined (identical points, a point at a pole) they follow
  /// GeographicLib's conventions.
  ///
  /// - Parameters:
  ///   - latitude1: Latitude of the first point, degrees.
  ///   - longitude1: Longitude of the first point, degrees.
  ///   - latitude2: Latitude of the second point, degrees.
  ///   - longitude2: Longitude of the second point, degrees.
  /// - Returns: The distance in metres and the azimuths at both ends (degrees clockwise from
  ///   north, -180...180); NaN for invalid input.
  package func inverse(
    latitude1: Double,
    longitude1: Double,
    latitude2: Double,
    longitude2: Double
  ) -> GeodesicInverse {
    let solution = solveInverse(latitude1, longitude1, latitude2, longitude2)
    return GeodesicInverse(
      distance: solution.distance,
      azimuth1: AngleMath.atan2Degrees(solution.sinAzimuth1, solution.cosAzimuth1),
      azimuth2: AngleMath.atan2Degrees(solution.sinAzimuth2, solution.cosAzimuth2),
      arcLength: solution.arcLength
    )
  }

  /// Solves the direct problem: where a geodesic from a point, leaving at an azimuth, is after a
  /// distance.
  ///
  /// - Parameters:
  ///   - latitude: Latitude of the start, degrees (-90...90).
  ///   - longitude: Longitude of the start, degrees.
  ///   - azimuth: Azimuth at the start, degrees clockwise from north.
  ///   - distance: Distance along the geodesic in metres (may be negative, to go backwards).
  /// - Returns: The destination (longitude reduced to -180...180) and the azimuth of the geodesic
  ///   there (-180...180); NaN for invalid input.
  package func direct(
    latitude: Double,
    longitude: Double,
    azimuth: Double,
    distance: Double
  ) -> GeodesicDirect {
    solveDirect(latitude, longitude, azimuth, distance)
  }
}

/// The answer to the inverse geodesic problem.
package struct GeodesicInverse: Sendable, Equatable {
  /// Length of the shortest geodesic in metres.
  package var distance: Double
  /// Azimuth at the first point, degrees clockwise from north, -180...180.
  package var azimuth1: Double
  /// Azimuth at the second point (the direction of travel there), degrees, -180...180.
  package var azimuth2: Double
  /// Arc length on the auxiliary sphere, degrees (Karney (2013), sigma12).
  package var arcLength: Double

  /// Creates an answer from its parts.
  ///
  /// - Parameters:
  ///   - distance: Metres.
  ///   - azimuth1: Degrees at the first point.
  ///   - azimuth2: Degrees at the second point.
  ///   - arcLength: Degrees on the auxiliary sphere.
  package init(distance: Double, azimuth1: Double, azimuth2: Double, arcLength: Double) {
    self.distance = distance
    self.azimuth1 = azimuth1
    self.azimuth2 = azimuth2
    self.arcLength = arcLength
  }
}

/// The answer to the direct geodesic problem.
package struct GeodesicDirect: Sendable, Equatable {
  /// Latitude of the destination, degrees.
  package var latitude: Double
  /// Longitude of the destination, degrees, -180...180.
  package var longitude: Double
  /// Azimuth of the geodesic at the destination (direction of travel), degrees, -180...180.
  package var azimuth: Double

  /// Creates an answer from its parts.
  ///
  /// - Parameters:
  ///   - latitude: Degrees.
  ///   - longitude: Degrees.
  ///   - azimuth: Degrees at the destination.
  package init(latitude: Double, longitude: Double, azimuth: Double) {
    self.latitude = latitude
    self.longitude = longitude
    self.azimuth = azimuth
  }
}
