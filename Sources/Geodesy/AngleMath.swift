// Exact angle arithmetic in degrees, used by the geodesic solver.
//
// Reducing angles in degrees before converting them to radians keeps multiples of 90° exact
// (sin 180° is 0, not 1.2e-16), which the solver relies on to detect meridians and the equator
// (Karney (2013), section 4, "the special cases").
import Foundation

enum AngleMath {
  /// Radians per degree.
  static let degree = Double.pi / 180

  /// A number small enough to stand in for zero in the denominators of the solver: the square
  /// root of the smallest normal double.
  static let tiny = Double.leastNormalMagnitude.squareRoot()

  /// The sum of two doubles and its rounding error: `s + t == u + v` exactly (Knuth, TAOCP vol. 2,
  /// section 4.2.2, algorithm "TwoSum").
  @inline(__always)
  static func twoSum(_ u: Double, _ v: Double) -> (sum: Double, error: Double) {
    let s = u + v
    let vv = s - u
    let uu = s - vv
    let t = (u - uu) + (v - vv)
    return (s, t)
  }

  /// Reduces an angle to the range [-180, 180]; -180 becomes 180.
  @inline(__always)
  static func normalize(_ x: Double) -> Double {
    let y = reduce(x)
    return y == -180 ? 180 : y
  }

  /// `remainder(x, 360)` up to the sign at ±180: the result is in [-180, 180]. Angles already in
  /// range (the usual case) and up to 540° away are reduced exactly without the library call
  /// (x ∓ 360 is exact there by Sterbenz's lemma).
  @inline(__always)
  static func reduce(_ x: Double) -> Double {
    if abs(x) <= 180 { return x }
    if abs(x) <= 540 { return x > 0 ? x - 360 : x + 360 }
    return remainder(x, 360)
  }

  /// The difference `y - x` reduced to [-180, 180], with its rounding error (so that the exact
  /// difference is `difference + error`).
  ///
  /// At exactly 0 or ±180 the sign is chosen so that `difference + error` lies in (-180, 180].
  @inline(__always)
  static func difference(_ x: Double, _ y: Double) -> (difference: Double, error: Double) {
    let first = twoSum(reduce(-x), reduce(y))
    let second = twoSum(reduce(first.sum), first.error)
    var d = second.sum
    let e = second.error
    if d == 0 || abs(d) == 180 {
      let sign = e == 0 ? y - x : -e
      d = sign.sign == .minus ? -abs(d) : abs(d)
    }
    return (d, e)
  }

  /// Rounds an angle so that tiny values become exact multiples of 2^-57 (and values below about
  /// 1e-19 zero): small differences between nearly identical inputs then do not turn into
  /// meaningless directions.
  @inline(__always)
  static func round(_ x: Double) -> Double {
    let z = 1.0 / 16
    var y = abs(x)
    let w = z - y
    if w > 0 { y = z - w }
    return x.sign == .minus ? -y : y
  }

  /// Latitude check: NaN outside [-90, 90].
  @inline(__always)
  static func latitudeFix(_ x: Double) -> Double {
    abs(x) > 90 ? .nan : x
  }

  /// Sine and cosine of an angle in degrees, exact at multiples of 90°.
  @inline(__always)
  static func sinCos(_ x: Double) -> (sin: Double, cos: Double) {
    guard x.isFinite else { return (.nan, .nan) }
    // For |x| < 2^52 the reduction x - 90 q is exact without fmod: 90 q is a multiple of ulp(x)
    // and the result is smaller than x.
    var r = abs(x) < 4.5e15 ? x : fmod(x, 360)
    let q = (r / 90).rounded()
    r -= 90 * q
    let radians = r * degree
    let s = sin(radians)
    let c = cos(radians)
    let quadrant = Int(q.truncatingRemainder(dividingBy: 4)) & 3
    var sinX: Double
    var cosX: Double
    switch quadrant {
    case 0:
      sinX = s
      cosX = c
    case 1:
      sinX = c
      cosX = -s
    case 2:
      sinX = -s
      cosX = -c
    default:
      sinX = -c
      cosX = s
    }
    // Turn -0 into +0 for the cosine, and give the sine of ±0 the sign of x.
    cosX += 0
    if sinX == 0 { sinX = x.sign == .minus ? -0.0 : 0.0 }
    return (sinX, cosX)
  }

  /// `atan2(y, x)` in degrees, in [-180, 180], exact for results that are multiples of 90°;
  /// atan2d(±0, -1) is ±180.
  @inline(__always)
  static func atan2Degrees(_ y: Double, _ x: Double) -> Double {
    var yy = y
    var xx = x
    var q = 0
    if abs(yy) > abs(xx) {
      swap(&xx, &yy)
      q = 2
    }
    if xx.sign == .minus {
      xx = -xx
      q += 1
    }
    let angle = atan2(yy, xx) / degree
    switch q {
    case 1:
      return (yy.sign == .minus ? -180.0 : 180.0) - angle
    case 2:
      return 90 - angle
    case 3:
      return -90 + angle
    default:
      return angle
    }
  }

  /// Scales `(x, y)` to unit length.
  @inline(__always)
  static func normalize(_ x: inout Double, _ y: inout Double) {
    let r = length(x, y)
    x /= r
    y /= r
  }

  /// `sqrt(x^2 + y^2)` rounded correctly in all but rare cases: the sum of squares is formed
  /// exactly as a double-double (with fused multiply-adds) and the square root gets one Newton
  /// correction. The solver's azimuths for lines of a few centimetres depend on these last bits.
  @inline(__always)
  static func length(_ x: Double, _ y: Double) -> Double {
    let ax = abs(x)
    let ay = abs(y)
    let big = max(ax, ay)
    // Outside this range the squares could underflow or overflow: the library's hypot is
    // accurate to within an ulp there, which is all those cases need.
    guard big < 1e150, big > 1e-140 || big == 0 else { return hypot(x, y) }
    let xx = x * x
    let ex = (-xx).addingProduct(x, x)
    let yy = y * y
    let ey = (-yy).addingProduct(y, y)
    let (sum, sumError) = twoSum(xx, yy)
    let low = sumError + ex + ey
    var h = (sum + low).squareRoot()
    guard h > 0 else { return h }
    let hh = h * h
    let ehh = (-hh).addingProduct(h, h)
    let residual = ((sum - hh) - ehh) + low
    h += residual / (2 * h)
    return h
  }
}
