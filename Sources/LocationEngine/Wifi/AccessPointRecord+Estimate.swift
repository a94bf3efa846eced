import Foundation
import LocationModel

/// The estimate an `AccessPointRecord`'s sums hold: its position, its spread, and how an
/// observation is added.
///
/// The sums are those of the record's documentation: `Σ w`, and `Σ w · u` over the unit vectors
/// `u = (cos φ cos λ, cos φ sin λ, sin φ)` of the observations' geodetic latitude `φ` and longitude
/// `λ` taken as spherical coordinates. Their normalised sum is the weighted centroid on the sphere;
/// distances on that sphere of radius ``sphereRadius`` differ from geodesic ones on WGS-84 by less
/// than 0.6 %, which the metres an access point spans do not notice.
extension AccessPointRecord {
  /// The radius of the sphere of the estimates, metres (the Earth's mean radius).
  package static let sphereRadius = 6_371_000.0

  /// A record of one observation: an access point first heard at `latitude`, `longitude` at
  /// `time` (seconds since 1970), weighted `weight`.
  package init(bssid: UInt64, latitude: Double, longitude: Double, weight: Double, time: Double) {
    let u = Self.unitVector(latitude: latitude, longitude: longitude)
    self.init(
      bssid: bssid, weight: weight, x: weight * u.x, y: weight * u.y, z: weight * u.z,
      observations: 1, firstSeen: time, lastSeen: time)
  }

  /// The unit vector of a latitude and longitude (degrees) on the sphere.
  package static func unitVector(latitude: Double, longitude: Double) -> (
    x: Double, y: Double, z: Double
  ) {
    let phi = latitude * .pi / 180
    let lambda = longitude * .pi / 180
    let c = cos(phi)
    return (c * cos(lambda), c * sin(lambda), sin(phi))
  }

  /// The latitude and longitude (degrees) of a non-zero vector's direction.
  package static func coordinate(x: Double, y: Double, z: Double) -> (
    latitude: Double, longitude: Double
  ) {
    let latitude = atan2(z, (x * x + y * y).squareRoot()) * 180 / .pi
    let longitude = atan2(y, x) * 180 / .pi
    return (latitude, longitude)
  }

  /// The weighted centroid of the observations: latitude and longitude, degrees; NaN when the
  /// record holds no weight.
  package var position: (latitude: Double, longitude: Double) {
    guard weight > 0, x != 0 || y != 0 || z != 0 else { return (.nan, .nan) }
    return Self.coordinate(x: x, y: y, z: z)
  }

  /// The unit vector of ``position`` (zero when the record holds no weight).
  package var direction: (x: Double, y: Double, z: Double) {
    let norm = (x * x + y * y + z * z).squareRoot()
    guard norm > 0 else { return (0, 0, 0) }
    return (x / norm, y / norm, z / norm)
  }

  /// The spread of the observations, metres: `R · √(2 · (1 − |Σ w·u| / Σ w))`, the weighted
  /// root-mean-square distance of the observations from their centroid (exact on the sphere for
  /// chord distances: `Σ w · |u − c|² / Σ w = 2 · (1 − |Σ w·u| / Σ w)` with `c` the unit centroid).
  /// Zero for one observation; 0 when the record holds no weight.
  package var spread: Double {
    guard weight > 0 else { return 0 }
    let norm = (x * x + y * y + z * z).squareRoot()
    let gap = max(0, 1 - norm / weight)
    return Self.sphereRadius * (2 * gap).squareRoot()
  }

  /// The distance, metres, from ``position`` to a latitude and longitude: the chord on the sphere
  /// of radius ``sphereRadius`` (within millimetres of the arc at the kilometres that matter here).
  package func distance(latitude: Double, longitude: Double) -> Double {
    let c = direction
    let u = Self.unitVector(latitude: latitude, longitude: longitude)
    let dx = u.x - c.x
    let dy = u.y - c.y
    let dz = u.z - c.z
    return Self.sphereRadius * (dx * dx + dy * dy + dz * dz).squareRoot()
  }

  /// This record with one more observation at `latitude`, `longitude` (degrees), weighted `weight`,
  /// made at `time` (seconds since 1970): the sums grow by `w` and `w · u`, the count by one, and
  /// the first and last times widen to include `time`.
  package func adding(latitude: Double, longitude: Double, weight w: Double, time: Double)
    -> AccessPointRecord
  {
    let u = Self.unitVector(latitude: latitude, longitude: longitude)
    var record = self
    record.weight += w
    record.x += w * u.x
    record.y += w * u.y
    record.z += w * u.z
    record.observations += 1
    record.firstSeen = observations == 0 ? time : min(firstSeen, time)
    record.lastSeen = observations == 0 ? time : max(lastSeen, time)
    return record
  }
}
