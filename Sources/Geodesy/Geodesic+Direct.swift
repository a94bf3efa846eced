// The direct problem, Karney (2013), section 3.
import Foundation

extension Geodesic {
  /// Destination and final azimuth from a start, an azimuth and a distance (Karney (2013),
  /// section 3, eqs. 5-7, 11-12, 15, 20-21 and 23).
  func solveDirect(
    _ latitude: Double,
    _ longitude: Double,
    _ azimuth: Double,
    _ distance: Double
  ) -> GeodesicDirect {
    guard latitude.isFinite, longitude.isFinite, azimuth.isFinite, distance.isFinite,
      abs(latitude) <= 90
    else {
      return GeodesicDirect(latitude: .nan, longitude: .nan, azimuth: .nan)
    }
    let (salp1, calp1) = AngleMath.sinCos(AngleMath.round(AngleMath.normalize(azimuth)))
    var (sbet1, cbet1) = AngleMath.sinCos(AngleMath.round(latitude))
    sbet1 *= f1
    AngleMath.normalize(&sbet1, &cbet1)
    cbet1 = max(AngleMath.tiny, cbet1)

    // Eq. 5: alpha0, the azimuth at the equator crossing.
    let salp0 = salp1 * cbet1
    let calp0 = AngleMath.length(calp1, salp1 * sbet1)
    // Eqs. 11-12: sigma1 and omega1; a start at a pole heading "north" is sigma1 = 90 degrees.
    var ssig1 = sbet1
    let somg1 = salp0 * sbet1
    var csig1 = sbet1 != 0 || calp1 != 0 ? cbet1 * calp1 : 1
    let comg1 = csig1
    AngleMath.normalize(&ssig1, &csig1)

    // Eqs. 9 and 16.
    let k2 = calp0 * calp0 * ep2
    let eps = k2 / (2 * (1 + (1 + k2).squareRoot()) + k2)
    // Eq. 15: s/b = A1 (sigma + B1(sigma)); tau1 = sigma1 + B1(sigma1).
    let a1 = 1 + GeodesicSeries.a1m1(eps)
    let c1 = GeodesicSeries.c1(eps)
    let b11 = c1.sum(sin: ssig1, cos: csig1)
    let sb11 = sin(b11)
    let cb11 = cos(b11)
    let stau1 = ssig1 * cb11 + csig1 * sb11
    let ctau1 = csig1 * cb11 - ssig1 * sb11
    // Eq. 20-21: sigma2 = tau2 + sum C'_1l sin(2 l tau2).
    let c1p = GeodesicSeries.c1Prime(eps)
    let tau12 = distance / (b * a1)
    let stau12 = sin(tau12)
    let ctau12 = cos(tau12)
    let b12 = -c1p.sum(sin: stau1 * ctau12 + ctau1 * stau12, cos: ctau1 * ctau12 - stau1 * stau12)
    let sig12 = tau12 - (b12 - b11)
    let ssig12 = sin(sig12)
    let csig12 = cos(sig12)

    // The far end on the auxiliary sphere (eqs. 5-7).
    let ssig2 = ssig1 * csig12 + csig1 * ssig12
    let csig2 = csig1 * csig12 - ssig1 * ssig12
    let sbet2 = calp0 * ssig2
    var cbet2 = (salp0 * salp0 + (calp0 * csig2) * (calp0 * csig2)).squareRoot()
    if cbet2 == 0 { cbet2 = AngleMath.tiny }  // the far end is a pole
    let salp2 = salp0
    let calp2 = calp0 * csig2
    let somg2 = salp0 * ssig2
    let comg2 = csig2
    let omg12 = atan2(somg2 * comg1 - comg2 * somg1, comg2 * comg1 + somg2 * somg1)
    // Eq. 23: lambda12 = omega12 - f sin(alpha0) I3(sigma).
    let c3 = longitudeSeries.c3(eps)
    let b31 = c3.sum(sin: ssig1, cos: csig1)
    let b32 = c3.sum(sin: ssig2, cos: csig2)
    let lam12 = omg12 - f * longitudeSeries.a3(eps) * salp0 * (sig12 + (b32 - b31))
    let lon12 = lam12 / AngleMath.degree
    let longitude2 = AngleMath.normalize(
      AngleMath.normalize(longitude) + AngleMath.normalize(lon12))
    // Eq. 1 back to geodetic latitude: tan phi = tan beta / (1 - f).
    let latitude2 = AngleMath.atan2Degrees(sbet2, f1 * cbet2)
    let azimuth2 = AngleMath.atan2Degrees(salp2, calp2)
    return GeodesicDirect(latitude: latitude2, longitude: longitude2, azimuth: azimuth2)
  }
}
