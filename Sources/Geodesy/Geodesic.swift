// TEMPORARY interface so that dependants build; replaced by the Karney implementation (issue 3).
import Foundation

/// Geodesics on an ellipsoid of revolution.
public struct Geodesic: Sendable {
  /// Semi-major axis in metres.
  public let a: Double
  /// Flattening.
  public let f: Double

  /// WGS-84 (NIMA TR8350.2): a = 6378137 m, f = 1/298.257223563.
  public static let wgs84 = Geodesic(a: 6_378_137, f: 1 / 298.257_223_563)

  /// Creates a geodesic calculator for an ellipsoid.
  public init(a: Double, f: Double) {
    self.a = a
    self.f = f
  }

  /// Distance in metres between two points (degrees).
  public func distance(latitude1: Double, longitude1: Double, latitude2: Double, longitude2: Double) -> Double {
    let p1 = latitude1 * .pi / 180
    let p2 = latitude2 * .pi / 180
    let dp = p2 - p1
    let dl = (longitude2 - longitude1) * .pi / 180
    let h = sin(dp / 2) * sin(dp / 2) + cos(p1) * cos(p2) * sin(dl / 2) * sin(dl / 2)
    return 2 * 6_371_008.8 * asin(min(1, sqrt(h)))
  }
}
