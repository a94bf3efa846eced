import Foundation
import LocationModel

/// Records made from an imported estimate (a row of an Ichnaea-format CSV export) rather than
/// from the device's own observations.
extension AccessPointRecord {
  /// A record whose ``position`` is the given latitude and longitude and whose ``spread`` is the
  /// given radius (the largest a sphere of radius ``sphereRadius`` allows, `R`, at most).
  ///
  /// The spread is `R · √(2 · (1 − |Σ w·u| / Σ w))` (``spread``). With the weight
  /// `W = Σ w = max(samples, 1)` and the unit vector `u` of the position, the sums are
  /// `Σ w·u = W · (1 − (r/R)² / 2) · u`: then `|Σ w·u| / W = 1 − (r/R)² / 2`, and the spread is
  /// `R · √((r/R)²) = r`. As if the `samples` observations had been spread around the position
  /// with a root-mean-square distance of `r`; new observations then move the estimate as much as
  /// that many of the device's own would. Without a radius the spread is 0 (one point).
  ///
  /// - Parameters:
  ///   - bssid: the access point, the low 48 bits.
  ///   - latitude: degrees, -90...90.
  ///   - longitude: degrees, -180...180.
  ///   - radius: metres; nil or negative is 0.
  ///   - samples: the observations the estimate rests on; nil or less than 1 is 1. Also the
  ///     record's ``observations``.
  ///   - time: its first and last seen time, seconds since 1970 (the row's, or the import's).
  package static func imported(
    bssid: UInt64, latitude: Double, longitude: Double, radius: Double?, samples: Int?,
    time: Double
  ) -> AccessPointRecord {
    let count = max(samples ?? 1, 1)
    let weight = Double(count)
    let ratio = min(max(radius ?? 0, 0), sphereRadius) / sphereRadius
    let length = weight * (1 - ratio * ratio / 2)
    let u = unitVector(latitude: latitude, longitude: longitude)
    return AccessPointRecord(
      bssid: bssid, weight: weight, x: length * u.x, y: length * u.y, z: length * u.z,
      observations: count, firstSeen: time, lastSeen: time)
  }
}
