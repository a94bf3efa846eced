// The inverse problem, Karney (2013), sections 4 and 5.
import Foundation

/// The inverse solution in the solver's own terms (azimuths as sine and cosine).
struct InverseSolution {
  var distance: Double
  var arcLength: Double
  var sinAzimuth1: Double
  var cosAzimuth1: Double
  var sinAzimuth2: Double
  var cosAzimuth2: Double
}

/// One evaluation of the longitude difference lambda12 as a function of the starting azimuth
/// alpha1 (Karney (2013), section 5, eqs. 5-10 and 23), with what the caller needs afterwards.
private struct LambdaEvaluation {
  var lambdaError: Double  // lambda12(alpha1) minus the wanted lambda12
  var sinAlpha2: Double
  var cosAlpha2: Double
  var sigma12: Double
  var sinSigma1: Double
  var cosSigma1: Double
  var sinSigma2: Double
  var cosSigma2: Double
  var eps: Double
  var derivative: Double  // d lambda12 / d alpha1, eq. 38 (NaN when not asked for)
}

/// The starting guess of Karney (2013), section 5.
private struct InverseStart {
  var sigma12: Double  // >= 0 when the short-line guess is already the answer
  var sinAlpha1: Double
  var cosAlpha1: Double
  var sinAlpha2: Double
  var cosAlpha2: Double
  var dnm: Double  // sqrt(1 + e'^2 sin^2 beta_mean), for short lines
}

/// Reduced latitude beta of a point (Karney (2013), section 2) and the derived quantities.
private struct Reduced {
  var sinBeta: Double
  var cosBeta: Double
}

extension Geodesic {
  private static let tol0 = Double.ulpOfOne
  private static let tol1 = 200 * tol0
  private static let tol2 = tol0.squareRoot()
  private static let tolb = tol0 * tol2
  private static let xthresh = 1000 * tol2
  private static let maxit1 = 20
  private static let maxit2 = maxit1 + Double.significandBitCount + 1 + 10

  /// Distance s12 / b and reduced length m12 / b from sigma1 to sigma2 (Karney (2013), eqs. 15,
  /// 38 and 40-42).
  @inline(__always)
  func lengths(
    eps: Double,
    sigma12: Double,
    _ ssig1: Double,
    _ csig1: Double,
    _ dn1: Double,
    _ ssig2: Double,
    _ csig2: Double,
    _ dn2: Double,
    reducedLength: Bool
  ) -> (distance: Double, reducedLength: Double) {
    let a1m1 = GeodesicSeries.a1m1(eps)
    let c1 = GeodesicSeries.c1(eps)
    let b1 = c1.sum(sin: ssig2, cos: csig2) - c1.sum(sin: ssig1, cos: csig1)
    let a1 = 1 + a1m1
    let s12b = a1 * (sigma12 + b1)
    guard reducedLength else { return (s12b, .nan) }
    let a2m1 = GeodesicSeries.a2m1(eps)
    let c2 = GeodesicSeries.c2(eps)
    let a2 = 1 + a2m1
    let b2 = c2.sum(sin: ssig2, cos: csig2) - c2.sum(sin: ssig1, cos: csig1)
    // J(sigma) = I1(sigma) - I2(sigma), eq. 40.
    let j12 = (a1m1 - a2m1) * sigma12 + (a1 * b1 - a2 * b2)
    // Eq. 38, with sqrt(1 + k^2 sin^2 sigma) = sqrt(1 + e'^2 sin^2 beta) = dn.
    let m12b = dn2 * (csig1 * ssig2) - dn1 * (ssig1 * csig2) - csig1 * csig2 * j12
    return (s12b, m12b)
  }

  /// Positive root k of the astroid equation k^4 + 2k^3 - (x^2 + y^2 - 1)k^2 - 2y^2 k - y^2 = 0
  /// (Karney (2013), eqs. 55-57), solved in closed form.
  private static func astroid(_ x: Double, _ y: Double) -> Double {
    let p = x * x
    let q = y * y
    let r = (p + q - 1) / 6
    guard !(q == 0 && r <= 0) else { return 0 }
    // Eq. 57: the resolvent cubic for u, taken so as to avoid cancellation.
    let s = p * q / 4
    let r2 = r * r
    let r3 = r * r2
    let disc = s * (s + 2 * r3)
    var u = r
    if disc >= 0 {
      var t3 = s + r3
      t3 += t3 < 0 ? -disc.squareRoot() : disc.squareRoot()
      let t = cbrt(t3)
      u += t + (t != 0 ? r2 / t : 0)
    } else {
      let angle = atan2((-disc).squareRoot(), -(s + r3))
      u += 2 * r * cos(angle / 3)
    }
    let v = (u * u + q).squareRoot()
    let uv = u < 0 ? q / (v - u) : u + v
    let w = (uv - q) / (2 * v)
    return uv / ((uv + w * w).squareRoot() + w)
  }

  /// The starting guess for alpha1 (Karney (2013), section 5): the spherical solution with a
  /// mean-latitude scale for short lines (eqs. 48-49), and the astroid solution for nearly
  /// antipodal points (eqs. 53-57).
  private func inverseStart(
    _ p1: Reduced,
    _ p2: Reduced,
    dn1: Double,
    dn2: Double,
    lam12: Double,
    slam12: Double,
    clam12: Double
  ) -> InverseStart {
    let sbet1 = p1.sinBeta
    let cbet1 = p1.cosBeta
    let sbet2 = p2.sinBeta
    let cbet2 = p2.cosBeta
    var result = InverseStart(
      sigma12: -1, sinAlpha1: 0, cosAlpha1: 0, sinAlpha2: .nan, cosAlpha2: .nan, dnm: .nan)
    let sbet12 = sbet2 * cbet1 - cbet2 * sbet1  // sin(beta2 - beta1)
    let cbet12 = cbet2 * cbet1 + sbet2 * sbet1
    let sbet12a = sbet2 * cbet1 + cbet2 * sbet1  // sin(beta2 + beta1)
    let shortline = cbet12 >= 0 && sbet12 < 0.5 && cbet2 * lam12 < 0.5
    var somg12: Double
    var comg12: Double
    if shortline {
      // Eq. 48: omega12 = lambda12 / (f1 w), w at the mean reduced latitude.
      var sbetm2 = (sbet1 + sbet2) * (sbet1 + sbet2)
      sbetm2 /= sbetm2 + (cbet1 + cbet2) * (cbet1 + cbet2)
      result.dnm = (1 + ep2 * sbetm2).squareRoot()
      let omg12 = lam12 / (f1 * result.dnm)
      somg12 = sin(omg12)
      comg12 = cos(omg12)
    } else {
      somg12 = slam12
      comg12 = clam12
    }
    // Eq. 49: the azimuth on the sphere.
    var salp1 = cbet2 * somg12
    var calp1 =
      comg12 >= 0
      ? sbet12 + cbet2 * sbet1 * somg12 * somg12 / (1 + comg12)
      : sbet12a - cbet2 * sbet1 * somg12 * somg12 / (1 - comg12)
    let ssig12 = AngleMath.length(salp1, calp1)
    let csig12 = sbet1 * sbet2 + cbet1 * cbet2 * comg12

    if shortline && ssig12 < etol2 {
      // Really short lines: the spherical solution is the answer (eq. 50).
      var salp2 = cbet1 * somg12
      var calp2 =
        sbet12 - cbet1 * sbet2 * (comg12 >= 0 ? somg12 * somg12 / (1 + comg12) : 1 - comg12)
      AngleMath.normalize(&salp2, &calp2)
      result.sinAlpha2 = salp2
      result.cosAlpha2 = calp2
      result.sigma12 = atan2(ssig12, csig12)
    } else if abs(n) > 0.1 || csig12 >= 0 || ssig12 >= 6 * abs(n) * .pi * cbet1 * cbet1 {
      // Not nearly antipodal: the spherical guess is good enough for Newton's method.
    } else {
      // Nearly antipodal (section 5): scale to the astroid's coordinates x and y (eq. 53).
      let lam12x = atan2(-slam12, -clam12)  // lambda12 - pi
      let k2 = sbet1 * sbet1 * ep2
      let eps = k2 / (2 * (1 + (1 + k2).squareRoot()) + k2)
      let lamscale = f * cbet1 * longitudeSeries.a3(eps) * .pi
      let betscale = lamscale * cbet1
      let x = lam12x / lamscale
      let y = sbet12a / betscale
      if y > -Self.tol1 && x > -1 - Self.xthresh {
        // Near the line y = 0, x in [-1, 0]: eq. 56 degenerates to sin(alpha1) = -x.
        salp1 = min(1, -x)
        calp1 = -(1 - salp1 * salp1).squareRoot()
      } else {
        // Eq. 55-56: alpha1 from the root of the astroid.
        let k = Self.astroid(x, y)
        let omg12a = lamscale * (-x * k / (1 + k))
        somg12 = sin(omg12a)
        comg12 = -cos(omg12a)
        salp1 = cbet2 * somg12
        calp1 = sbet12a - cbet2 * sbet1 * somg12 * somg12 / (1 - comg12)
      }
    }
    if !(salp1 <= 0) {
      AngleMath.normalize(&salp1, &calp1)
    } else {
      salp1 = 1
      calp1 = 0
    }
    result.sinAlpha1 = salp1
    result.cosAlpha1 = calp1
    return result
  }

  /// lambda12 as a function of alpha1 (Karney (2013), section 5, eqs. 5-10, 23 and 38).
  private func lambda12(
    _ p1: Reduced,
    _ p2: Reduced,
    dn1: Double,
    dn2: Double,
    salp1 salp1In: Double,
    calp1 calp1In: Double,
    slam120: Double,
    clam120: Double,
    derivative: Bool
  ) -> LambdaEvaluation {
    let sbet1 = p1.sinBeta
    let cbet1 = p1.cosBeta
    let sbet2 = p2.sinBeta
    let cbet2 = p2.cosBeta
    let salp1 = salp1In
    var calp1 = calp1In
    if sbet1 == 0 && calp1 == 0 {
      // Break the degeneracy of an equatorial line (the start is on the equator heading east).
      calp1 = -AngleMath.tiny
    }
    // Eq. 5: the azimuth at the equator crossing.
    let salp0 = salp1 * cbet1
    let calp0 = AngleMath.length(calp1, salp1 * sbet1)
    // Eqs. 11-12: sigma1 and omega1 (tan sigma1 = tan beta1 / cos alpha1, omega1 from alpha0).
    var ssig1 = sbet1
    let somg1 = salp0 * sbet1
    var csig1 = calp1 * cbet1
    let comg1 = csig1
    AngleMath.normalize(&ssig1, &csig1)
    // Eqs. 5-6 at the far end: sin alpha2 cos beta2 = sin alpha0, cos alpha2 from the identity
    // cos^2 alpha2 cos^2 beta2 = cos^2 alpha1 cos^2 beta1 + cos^2 beta2 - cos^2 beta1, written to
    // avoid cancellation.
    let salp2 = cbet2 != cbet1 ? salp0 / cbet2 : salp1
    let calp2: Double
    if cbet2 != cbet1 || abs(sbet2) != -sbet1 {
      let change =
        cbet1 < -sbet1
        ? (cbet2 - cbet1) * (cbet1 + cbet2) : (sbet1 - sbet2) * (sbet1 + sbet2)
      calp2 = ((calp1 * cbet1) * (calp1 * cbet1) + change).squareRoot() / cbet2
    } else {
      calp2 = abs(calp1)
    }
    var ssig2 = sbet2
    let somg2 = salp0 * sbet2
    var csig2 = calp2 * cbet2
    let comg2 = csig2
    AngleMath.normalize(&ssig2, &csig2)
    // sigma12 and omega12 - lambda12 (wanted), in [0, pi].
    let sig12 = atan2(max(0, csig1 * ssig2 - ssig1 * csig2), csig1 * csig2 + ssig1 * ssig2)
    let somg12 = max(0, comg1 * somg2 - somg1 * comg2)
    let comg12 = comg1 * comg2 + somg1 * somg2
    let eta = atan2(
      somg12 * clam120 - comg12 * slam120, comg12 * clam120 + somg12 * slam120)
    // Eq. 9 and 16: k^2 and epsilon.
    let k2 = calp0 * calp0 * ep2
    let eps = k2 / (2 * (1 + (1 + k2).squareRoot()) + k2)
    // Eq. 23: lambda12 = omega12 - f sin(alpha0) I3(sigma12).
    let c3 = longitudeSeries.c3(eps)
    let b312 = c3.sum(sin: ssig2, cos: csig2) - c3.sum(sin: ssig1, cos: csig1)
    let domg12 = -f * longitudeSeries.a3(eps) * salp0 * (sig12 + b312)
    var dlam12 = Double.nan
    if derivative {
      if calp2 == 0 {
        // The far point is a pole (eq. 38's limit).
        dlam12 = -2 * f1 * dn1 / sbet1
      } else {
        let m12b =
          lengths(
            eps: eps, sigma12: sig12, ssig1, csig1, dn1, ssig2, csig2, dn2,
            reducedLength: true
          ).reducedLength
        // Eq. 38: d lambda12 / d alpha1 = m12 / (a cos alpha2 cos beta2), m12 in units of b.
        dlam12 = m12b * f1 / (calp2 * cbet2)
      }
    }
    return LambdaEvaluation(
      lambdaError: eta + domg12, sinAlpha2: salp2, cosAlpha2: calp2, sigma12: sig12,
      sinSigma1: ssig1, cosSigma1: csig1, sinSigma2: ssig2, cosSigma2: csig2, eps: eps,
      derivative: dlam12)
  }

  /// The whole inverse problem (Karney (2013), sections 4 and 5).
  func solveInverse(
    _ latitude1: Double,
    _ longitude1: Double,
    _ latitude2: Double,
    _ longitude2: Double
  ) -> InverseSolution {
    guard longitude1.isFinite && longitude2.isFinite && latitude1.isFinite && latitude2.isFinite,
      abs(latitude1) <= 90, abs(latitude2) <= 90
    else {
      return InverseSolution(
        distance: .nan, arcLength: .nan, sinAzimuth1: .nan, cosAzimuth1: .nan,
        sinAzimuth2: .nan, cosAzimuth2: .nan)
    }
    // Longitude difference in [0, 180], kept exact (with 180 - lon12 to full precision for
    // nearly antipodal points).
    let (difference, differenceError) = AngleMath.difference(longitude1, longitude2)
    var lonsign: Double = difference.sign == .minus ? -1 : 1
    let lon12 = lonsign * AngleMath.round(difference)
    let lon12s = AngleMath.round((180 - lon12) - lonsign * differenceError)
    let lam12 = lon12 * AngleMath.degree
    var slam12: Double
    var clam12: Double
    if lon12 > 90 {
      (slam12, clam12) = AngleMath.sinCos(lon12s)
      clam12 = -clam12
    } else {
      (slam12, clam12) = AngleMath.sinCos(lon12)
    }

    // Canonical order (section 4): |lat1| >= |lat2|, lat1 <= 0, lon12 >= 0.
    var lat1 = AngleMath.round(latitude1)
    var lat2 = AngleMath.round(latitude2)
    let swapp: Double = abs(lat1) < abs(lat2) ? -1 : 1
    if swapp < 0 {
      lonsign = -lonsign
      swap(&lat1, &lat2)
    }
    let latsign: Double = lat1.sign == .minus ? 1 : -1
    lat1 *= latsign
    lat2 *= latsign

    // Reduced latitudes, eq. 1: tan beta = (1 - f) tan phi.
    var (sbet1, cbet1) = AngleMath.sinCos(lat1)
    sbet1 *= f1
    AngleMath.normalize(&sbet1, &cbet1)
    cbet1 = max(AngleMath.tiny, cbet1)
    var (sbet2, cbet2) = AngleMath.sinCos(lat2)
    sbet2 *= f1
    AngleMath.normalize(&sbet2, &cbet2)
    cbet2 = max(AngleMath.tiny, cbet2)
    // Make |beta1| and |beta2| compare exactly as |lat1| and |lat2| do.
    if cbet1 < -sbet1 {
      if cbet2 == cbet1 { sbet2 = sbet2.sign == .minus ? sbet1 : -sbet1 }
    } else {
      if abs(sbet2) == -sbet1 { cbet2 = cbet1 }
    }
    let p1 = Reduced(sinBeta: sbet1, cosBeta: cbet1)
    let p2 = Reduced(sinBeta: sbet2, cosBeta: cbet2)
    let dn1 = (1 + ep2 * sbet1 * sbet1).squareRoot()
    let dn2 = (1 + ep2 * sbet2 * sbet2).squareRoot()

    var sig12 = 0.0
    var s12x = 0.0
    var salp1 = 0.0
    var calp1 = 0.0
    var salp2 = 0.0
    var calp2 = 0.0
    var meridian = lat1 == -90 || slam12 == 0
    if meridian {
      // Along a meridian (or from a pole): alpha1 = lambda12, alpha2 = 0, and eq. 11 gives sigma.
      calp1 = clam12
      salp1 = slam12
      calp2 = 1
      salp2 = 0
      let ssig1 = sbet1
      let csig1 = calp1 * cbet1
      let ssig2 = sbet2
      let csig2 = calp2 * cbet2
      sig12 = atan2(max(0, csig1 * ssig2 - ssig1 * csig2), csig1 * csig2 + ssig1 * ssig2)
      // On a meridian alpha0 = 0, so k^2 = e'^2 and epsilon = n.
      var (s, m) = lengths(
        eps: n, sigma12: sig12, ssig1, csig1, dn1, ssig2, csig2, dn2, reducedLength: true)
      // The meridian is the shortest path unless it passes a conjugate point (m12 < 0), which
      // can happen only beyond sigma12 = 1.
      if sig12 < 1 || m >= 0 {
        if sig12 < 3 * AngleMath.tiny || (sig12 < Self.tol0 && (s < 0 || m < 0)) {
          sig12 = 0
          m = 0
          s = 0
        }
        s12x = s * b
      } else {
        meridian = false
      }
    }

    if !meridian && sbet1 == 0 && (f <= 0 || lon12s >= f * 180) {
      // Along the equator, which is the shortest path while lambda12 <= (1 - f) pi.
      calp1 = 0
      calp2 = 0
      salp1 = 1
      salp2 = 1
      s12x = a * lam12
      sig12 = lam12 / f1
    } else if !meridian {
      let start = inverseStart(
        p1, p2, dn1: dn1, dn2: dn2, lam12: lam12, slam12: slam12, clam12: clam12)
      salp1 = start.sinAlpha1
      calp1 = start.cosAlpha1
      if start.sigma12 >= 0 {
        // Short line solved by the starting guess.
        sig12 = start.sigma12
        salp2 = start.sinAlpha2
        calp2 = start.cosAlpha2
        s12x = sig12 * b * start.dnm
      } else {
        // Newton's method on alpha1 (section 5), safeguarded by bisection between the
        // brackets [alpha1a, alpha1b] where lambda12 is too small and too large.
        var salp1a = AngleMath.tiny
        var calp1a = 1.0
        var salp1b = AngleMath.tiny
        var calp1b = -1.0
        var tripn = false
        var tripb = false
        var numit = 0
        var evaluation: LambdaEvaluation
        while true {
          evaluation = lambda12(
            p1, p2, dn1: dn1, dn2: dn2, salp1: salp1, calp1: calp1, slam120: slam12,
            clam120: clam12, derivative: numit < Self.maxit1)
          let v = evaluation.lambdaError
          if tripb || !(abs(v) >= (tripn ? 8 : 1) * Self.tol0) || numit == Self.maxit2 {
            break
          }
          // Update the bracket.
          if v > 0 && (numit > Self.maxit1 || calp1 / salp1 > calp1b / salp1b) {
            salp1b = salp1
            calp1b = calp1
          } else if v < 0 && (numit > Self.maxit1 || calp1 / salp1 < calp1a / salp1a) {
            salp1a = salp1
            calp1a = calp1
          }
          numit += 1
          let dv = evaluation.derivative
          if numit <= Self.maxit1 && dv > 0 {
            let dalp1 = -v / dv
            if abs(dalp1) < .pi {
              let sdalp1 = sin(dalp1)
              let cdalp1 = cos(dalp1)
              let nsalp1 = salp1 * cdalp1 + calp1 * sdalp1
              if nsalp1 > 0 {
                calp1 = calp1 * cdalp1 - salp1 * sdalp1
                salp1 = nsalp1
                AngleMath.normalize(&salp1, &calp1)
                // Newton converges quadratically; allow a little slack near the end.
                tripn = abs(v) <= 16 * Self.tol0
                continue
              }
            }
          }
          // Bisection when Newton's step leaves [0, pi] or the derivative is unusable.
          salp1 = (salp1a + salp1b) / 2
          calp1 = (calp1a + calp1b) / 2
          AngleMath.normalize(&salp1, &calp1)
          tripn = false
          tripb =
            abs(salp1a - salp1) + (calp1a - calp1) < Self.tolb
            || abs(salp1 - salp1b) + (calp1 - calp1b) < Self.tolb
        }
        sig12 = evaluation.sigma12
        salp2 = evaluation.sinAlpha2
        calp2 = evaluation.cosAlpha2
        let s = lengths(
          eps: evaluation.eps, sigma12: sig12, evaluation.sinSigma1, evaluation.cosSigma1, dn1,
          evaluation.sinSigma2, evaluation.cosSigma2, dn2, reducedLength: false
        ).distance
        s12x = s * b
      }
    }

    // Undo the canonical ordering.
    if swapp < 0 {
      swap(&salp1, &salp2)
      swap(&calp1, &calp2)
    }
    salp1 *= swapp * lonsign
    calp1 *= swapp * latsign
    salp2 *= swapp * lonsign
    calp2 *= swapp * latsign
    return InverseSolution(
      distance: 0 + s12x, arcLength: sig12 / AngleMath.degree, sinAzimuth1: salp1,
      cosAzimuth1: calp1, sinAzimuth2: salp2, cosAzimuth2: calp2)
  }
}
