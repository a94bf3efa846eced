// Latitude-longitude boxes around geodesic circles on WGS-84.
import Foundation

/// A latitude-longitude box; `minLongitude > maxLongitude` means the box crosses the antimeridian.
///
/// All values are in degrees. A box that covers all longitudes has `minLongitude == -180` and
/// `maxLongitude == 180`.
package struct GeoBoundingBox: Sendable, Equatable {
  /// Southern edge, degrees.
  package var minLatitude: Double
  /// Northern edge, degrees.
  package var maxLatitude: Double
  /// Western edge, degrees, -180...180.
  package var minLongitude: Double
  /// Eastern edge, degrees, -180...180; less than `minLongitude` when the box wraps.
  package var maxLongitude: Double

  /// Creates a box from its edges.
  ///
  /// - Parameters:
  ///   - minLatitude: Southern edge, degrees.
  ///   - maxLatitude: Northern edge, degrees.
  ///   - minLongitude: Western edge, degrees.
  ///   - maxLongitude: Eastern edge, degrees (less than `minLongitude` to wrap the antimeridian).
  package init(minLatitude: Double, maxLatitude: Double, minLongitude: Double, maxLongitude: Double)
  {
    self.minLatitude = minLatitude
    self.maxLatitude = maxLatitude
    self.minLongitude = minLongitude
    self.maxLongitude = maxLongitude
  }

  /// True when the box crosses the antimeridian.
  package var wrapsAntimeridian: Bool { minLongitude > maxLongitude }

  /// True when the box spans every longitude (it contains a pole, or is very large).
  package var coversAllLongitudes: Bool { minLongitude == -180 && maxLongitude == 180 }

  /// A box that contains every point within a geodesic distance of a centre.
  ///
  /// Our rule: the box is conservative, never tight by more than the flattening. It bounds the
  /// circle on Karney's auxiliary sphere (Karney (2013), section 2): a geodesic of length s spans
  /// an arc of at most s / b there (b the semi-minor axis), and its longitude changes no more
  /// than its auxiliary-sphere longitude. The box is therefore up to about 0.34 % wider than the
  /// circle. If the circle may reach a pole, the box runs to that pole and covers all longitudes.
  /// A negative or NaN radius counts as zero; an infinite radius covers the globe; a NaN centre
  /// gives a box of NaN edges that contains nothing.
  ///
  /// - Parameters:
  ///   - latitude: Geodetic latitude of the centre, degrees, -90...90.
  ///   - longitude: Longitude of the centre, degrees.
  ///   - radius: Radius of the circle, metres (geodesic distance on WGS-84).
  /// - Returns: A box that covers the whole circle.
  package static func around(latitude: Double, longitude: Double, radius: Double) -> GeoBoundingBox
  {
    guard latitude.isFinite, longitude.isFinite, abs(latitude) <= 90 else {
      return GeoBoundingBox(
        minLatitude: .nan, maxLatitude: .nan, minLongitude: .nan, maxLongitude: .nan)
    }
    let geodesic = Geodesic.wgs84
    let r = radius > 0 ? radius : 0
    // Angular radius on the auxiliary sphere, with a hair of margin for rounding.
    let sigma = r / geodesic.b * (1 + 4 * Double.ulpOfOne) + 1e-15
    let degree = AngleMath.degree
    // Reduced latitude of the centre: tan(beta) = (1 - f) tan(phi).
    var (sbet, cbet) = AngleMath.sinCos(latitude)
    sbet *= geodesic.f1
    AngleMath.normalize(&sbet, &cbet)
    let beta = atan2(sbet, cbet)
    let north = beta + sigma
    let south = beta - sigma
    let lon0 = AngleMath.normalize(longitude)
    func geodetic(_ reduced: Double) -> Double {
      // tan(phi) = tan(beta) / (1 - f).
      AngleMath.atan2Degrees(sin(reduced), geodesic.f1 * cos(reduced))
    }
    if north >= .pi / 2 || south <= -.pi / 2 || !sigma.isFinite {
      return GeoBoundingBox(
        minLatitude: south <= -.pi / 2 || !sigma.isFinite ? -90 : geodetic(south),
        maxLatitude: north >= .pi / 2 || !sigma.isFinite ? 90 : geodetic(north),
        minLongitude: -180, maxLongitude: 180)
    }
    // Longitude half-width of a spherical cap of radius sigma centred at beta.
    let ratio = sin(sigma) / cos(beta)
    let halfWidth = ratio >= 1 ? 180 : asin(ratio) / degree * (1 + 4 * Double.ulpOfOne)
    let minLatitude = geodetic(south)
    let maxLatitude = geodetic(north)
    if halfWidth >= 180 {
      return GeoBoundingBox(
        minLatitude: minLatitude, maxLatitude: maxLatitude, minLongitude: -180, maxLongitude: 180)
    }
    var west = lon0 - halfWidth
    var east = lon0 + halfWidth
    if west < -180 { west += 360 }
    if east > 180 { east -= 360 }
    return GeoBoundingBox(
      minLatitude: minLatitude, maxLatitude: maxLatitude, minLongitude: west, maxLongitude: east)
  }

  /// Whether a point lies in the box (edges included).
  ///
  /// - Parameters:
  ///   - latitude: Latitude, degrees.
  ///   - longitude: Longitude, degrees (any value; reduced to -180...180, where -180 and 180 are
  ///     the same meridian).
  /// - Returns: True inside or on the edge; false for NaN.
  package func contains(latitude: Double, longitude: Double) -> Bool {
    guard latitude >= minLatitude && latitude <= maxLatitude, longitude.isFinite else {
      return false
    }
    if coversAllLongitudes { return true }
    let lon = AngleMath.normalize(longitude)
    if inLongitudes(lon) { return true }
    // -180 and 180 are the same meridian.
    if lon == 180 { return inLongitudes(-180) }
    return false
  }

  private func inLongitudes(_ lon: Double) -> Bool {
    if minLongitude <= maxLongitude {
      return lon >= minLongitude && lon <= maxLongitude
    }
    return lon >= minLongitude || lon <= maxLongitude
  }
}
