// The series expansions of Karney, "Algorithms for geodesics", J. Geodesy 87 (2013) 43-55, to
// sixth order in the small parameter epsilon (and third order in the third flattening n), which
// is accurate to round-off for |f| <= 0.01.

/// Six coefficients c1...c6 of a Fourier sine series sum(c_l sin(2 l sigma)).
struct SineSeries {
  var c1: Double
  var c2: Double
  var c3: Double
  var c4: Double
  var c5: Double
  var c6: Double

  /// Sums the series at an angle given by its sine and cosine, by Clenshaw's recurrence
  /// (Clenshaw, Math. Tables Aids Comput. 9 (1955); Karney (2013), eq. 59).
  @inline(__always)
  func sum(sin sx: Double, cos cx: Double) -> Double {
    // b_l = c_l + 2 cos(2 sigma) b_(l+1) - b_(l+2); the sum is b_1 sin(2 sigma).
    let ar = 2 * (cx - sx) * (cx + sx)
    let b6 = c6
    let b5 = ar * b6 + c5
    let b4 = ar * b5 - b6 + c4
    let b3 = ar * b4 - b5 + c3
    let b2 = ar * b3 - b4 + c2
    let b1 = ar * b2 - b3 + c1
    return 2 * sx * cx * b1
  }
}

enum GeodesicSeries {
  /// A1 - 1, Karney (2013), eq. 17: A1 = (1 + eps^2/4 + eps^4/64 + eps^6/256) / (1 - eps).
  @inline(__always)
  static func a1m1(_ eps: Double) -> Double {
    let e2 = eps * eps
    let t = e2 * (e2 * (e2 + 4) + 64) * (1.0 / 256)
    return (t + eps) / (1 - eps)
  }

  /// C_1l, Karney (2013), eq. 18.
  @inline(__always)
  static func c1(_ eps: Double) -> SineSeries {
    let e2 = eps * eps
    var d = eps
    let c1 = d * (e2 * (6 - e2) - 16) * (1.0 / 32)
    d *= eps
    let c2 = d * (e2 * (64 - 9 * e2) - 128) * (1.0 / 2048)
    d *= eps
    let c3 = d * (9 * e2 - 16) * (1.0 / 768)
    d *= eps
    let c4 = d * (3 * e2 - 5) * (1.0 / 512)
    d *= eps
    let c5 = -7 * d * (1.0 / 1280)
    d *= eps
    let c6 = -7 * d * (1.0 / 2048)
    return SineSeries(c1: c1, c2: c2, c3: c3, c4: c4, c5: c5, c6: c6)
  }

  /// C'_1l, the reversion of eq. 18 that gives sigma from tau, Karney (2013), eq. 21.
  @inline(__always)
  static func c1Prime(_ eps: Double) -> SineSeries {
    let e2 = eps * eps
    var d = eps
    let c1 = d * (e2 * (205 * e2 - 432) + 768) * (1.0 / 1536)
    d *= eps
    let c2 = d * (e2 * (4005 * e2 - 4736) + 3840) * (1.0 / 12288)
    d *= eps
    let c3 = d * (116 - 225 * e2) * (1.0 / 384)
    d *= eps
    let c4 = d * (2695 - 7173 * e2) * (1.0 / 7680)
    d *= eps
    let c5 = 3467 * d * (1.0 / 7680)
    d *= eps
    let c6 = 38081 * d * (1.0 / 61440)
    return SineSeries(c1: c1, c2: c2, c3: c3, c4: c4, c5: c5, c6: c6)
  }

  /// A2 - 1, Karney (2013), eq. 42: A2 = (1 - eps)(1 + eps^2/4 + 9 eps^4/64 + 25 eps^6/256),
  /// written as (1 - 3 eps^2/4 - 7 eps^4/64 - 11 eps^6/256) / (1 + eps), equal to that order.
  @inline(__always)
  static func a2m1(_ eps: Double) -> Double {
    let e2 = eps * eps
    let t = e2 * (e2 * (-11 * e2 - 28) - 192) * (1.0 / 256)
    return (t - eps) / (1 + eps)
  }

  /// C_2l, Karney (2013), eq. 43.
  @inline(__always)
  static func c2(_ eps: Double) -> SineSeries {
    let e2 = eps * eps
    var d = eps
    let c1 = d * (e2 * (e2 + 2) + 16) * (1.0 / 32)
    d *= eps
    let c2 = d * (e2 * (35 * e2 + 64) + 384) * (1.0 / 2048)
    d *= eps
    let c3 = d * (15 * e2 + 80) * (1.0 / 768)
    d *= eps
    let c4 = d * (7 * e2 + 35) * (1.0 / 512)
    d *= eps
    let c5 = 63 * d * (1.0 / 1280)
    d *= eps
    let c6 = 77 * d * (1.0 / 2048)
    return SineSeries(c1: c1, c2: c2, c3: c3, c4: c4, c5: c5, c6: c6)
  }
}

/// The longitude series A3 and C_3l (Karney (2013), eqs. 24 and 25), whose coefficients are
/// polynomials in the third flattening n, evaluated once per ellipsoid.
struct LongitudeSeries: Sendable {
  // A3 = 1 + a1 eps + a2 eps^2 + ... + a5 eps^5.
  let a1: Double
  let a2: Double
  let a3: Double
  let a4: Double
  let a5: Double
  // C_3l = sum_j c_lj eps^j for j = l...5.
  let c11: Double
  let c12: Double
  let c13: Double
  let c14: Double
  let c15: Double
  let c22: Double
  let c23: Double
  let c24: Double
  let c25: Double
  let c33: Double
  let c34: Double
  let c35: Double
  let c44: Double
  let c45: Double
  let c55: Double

  init(n: Double) {
    let n2 = n * n
    // Karney (2013), eq. 24.
    a1 = -(1 - n) / 2
    a2 = -(2 + n - 3 * n2) / 8
    a3 = -(1 + 3 * n + n2) / 16
    a4 = -(3 + 2 * n) / 64
    a5 = -3.0 / 128
    // Karney (2013), eq. 25.
    c11 = (1 - n) / 4
    c12 = (1 - n2) / 8
    c13 = (3 + 3 * n - n2) / 64
    c14 = (5 + 2 * n) / 128
    c15 = 3.0 / 128
    c22 = (2 - 3 * n + n2) / 32
    c23 = (3 - 2 * n - 3 * n2) / 64
    c24 = (3 + n) / 128
    c25 = 5.0 / 256
    c33 = (5 - 9 * n + 5 * n2) / 192
    c34 = (9 - 10 * n) / 384
    c35 = 7.0 / 512
    c44 = (7 - 14 * n) / 512
    c45 = 7.0 / 512
    c55 = 21.0 / 2560
  }

  /// A3 at eps.
  @inline(__always)
  func a3(_ eps: Double) -> Double {
    1 + eps * (a1 + eps * (a2 + eps * (a3 + eps * (a4 + eps * a5))))
  }

  /// C_3l at eps (C_36 is zero at this order).
  @inline(__always)
  func c3(_ eps: Double) -> SineSeries {
    var d = eps
    let s1 = d * (c11 + eps * (c12 + eps * (c13 + eps * (c14 + eps * c15))))
    d *= eps
    let s2 = d * (c22 + eps * (c23 + eps * (c24 + eps * c25)))
    d *= eps
    let s3 = d * (c33 + eps * (c34 + eps * c35))
    d *= eps
    let s4 = d * (c44 + eps * c45)
    d *= eps
    let s5 = d * c55
    return SineSeries(c1: s1, c2: s2, c3: s3, c4: s4, c5: s5, c6: 0)
  }
}
