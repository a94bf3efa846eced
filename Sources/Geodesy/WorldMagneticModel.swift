// Spherical-harmonic synthesis of the World Magnetic Model, after A. Chulliat et al., "The US/UK
// World Magnetic Model for 2025-2030: Technical Report", NOAA National Centers for Environmental
// Information (2024), section 1.2 ("Model equations"), which the earlier reports for WMM2010,
// WMM2015 and WMM2020 share. Equation numbers in comments refer to that section.
import Foundation

/// One five-year World Magnetic Model: Gauss coefficients of degree and order 12 at an epoch and
/// their secular variation (the figures are in WMMCoefficients.swift).
struct WorldMagneticModel: Sendable {
  /// The model's name as its coefficient file gives it, e.g. "WMM-2025".
  let name: String
  /// The model's epoch, a decimal year.
  let epoch: Double
  /// g, h (nT) and their yearly change, indexed by n (n + 1) / 2 + m for n = 0...12.
  let g: [Double]
  let h: [Double]
  let gDot: [Double]
  let hDot: [Double]
  /// Constants of the Legendre recurrence for each (n, m), same index: sqrt((n-1)^2 - m^2) and
  /// 1 / sqrt(n^2 - m^2).
  let recurrenceK2: [Double]
  let recurrenceK3: [Double]

  /// Degree and order of the expansion.
  static let maxDegree = 12
  /// Geomagnetic reference radius, metres (the report, table 1).
  static let referenceRadius = 6_371_200.0
  /// WGS-84 semi-major axis and flattening (the report, table 1).
  static let ellipsoidA = 6_378_137.0
  static let ellipsoidF = 1 / 298.257_223_563

  /// Builds a model from the rows of its coefficient file: n, m, g, h, dg/dt, dh/dt.
  init(name: String, epoch: Double, rows: [Double]) {
    self.name = name
    self.epoch = epoch
    let count = (Self.maxDegree + 1) * (Self.maxDegree + 2) / 2
    var g = [Double](repeating: 0, count: count)
    var h = g
    var gDot = g
    var hDot = g
    var row = 0
    while row + 5 < rows.count {
      let n = Int(rows[row])
      let m = Int(rows[row + 1])
      if n >= 1 && n <= Self.maxDegree && m >= 0 && m <= n {
        let index = n * (n + 1) / 2 + m
        g[index] = rows[row + 2]
        h[index] = rows[row + 3]
        gDot[index] = rows[row + 4]
        hDot[index] = rows[row + 5]
      }
      row += 6
    }
    self.g = g
    self.h = h
    self.gDot = gDot
    self.hDot = hDot
    var k2 = [Double](repeating: 0, count: count)
    var k3 = k2
    for n in 1...Self.maxDegree {
      for m in 0..<n {
        let nn = Double(n)
        let mm = Double(m)
        k2[n * (n + 1) / 2 + m] = ((nn - 1) * (nn - 1) - mm * mm).squareRoot()
        k3[n * (n + 1) / 2 + m] = 1 / (nn * nn - mm * mm).squareRoot()
      }
    }
    recurrenceK2 = k2
    recurrenceK3 = k3
  }

  /// The field at a geodetic position and date (no validity checks: the caller makes them).
  func field(latitude: Double, longitude: Double, height: Double, decimalYear: Double)
    -> MagneticField
  {
    let degree = Double.pi / 180
    let e2 = Self.ellipsoidF * (2 - Self.ellipsoidF)
    // Eq. 7 (report section 1.2): geodetic to geocentric spherical coordinates.
    let phi = latitude * degree
    let sinPhi = sin(phi)
    let cosPhi = cos(phi)
    let rc = Self.ellipsoidA / (1 - e2 * sinPhi * sinPhi).squareRoot()
    let p = (rc + height) * cosPhi
    let z = (rc * (1 - e2) + height) * sinPhi
    let r = (p * p + z * z).squareRoot()
    // Colatitude theta of the geocentric latitude phi': cos(theta) = sin(phi').
    let t = z / r
    let s = p / r
    let lambda = longitude * degree
    let sinLambda = sin(lambda)
    let cosLambda = cos(lambda)
    let dt = decimalYear - epoch

    // Eqs. 10-12 (and 19 for the secular variation), with the Schmidt semi-normalized associated
    // Legendre functions written P_n^m = sin^m(theta) Q_n^m(cos theta) so that P / sin(theta),
    // needed for Y', stays finite at the poles. For fixed m, Q obeys the usual three-term
    // recurrence in n; Q' is its derivative in cos(theta).
    var x = 0.0
    var y = 0.0
    var zz = 0.0
    var xDot = 0.0
    var yDot = 0.0
    var zDot = 0.0
    let ratio = Self.referenceRadius / r
    let maxDegree = Self.maxDegree
    withUnsafeTemporaryAllocation(of: Double.self, capacity: maxDegree + 1) { powers in
      // (a / r)^(n + 2).
      var power = ratio * ratio
      for n in 0...maxDegree {
        power *= ratio
        powers[n] = power / ratio
      }
      g.withUnsafeBufferPointer { g in
        h.withUnsafeBufferPointer { h in
          gDot.withUnsafeBufferPointer { gDot in
            hDot.withUnsafeBufferPointer { hDot in
              recurrenceK2.withUnsafeBufferPointer { recurrenceK2 in
                recurrenceK3.withUnsafeBufferPointer { recurrenceK3 in
                  var qmm = 1.0  // Q_m^m
                  var sinPowerM1 = 0.0  // sin^(m-1)(theta), for m >= 1
                  var cosM = 1.0  // cos(m lambda)
                  var sinM = 0.0  // sin(m lambda)
                  for m in 0...maxDegree {
                    if m == 1 {
                      qmm = 1
                      sinPowerM1 = 1
                      cosM = cosLambda
                      sinM = sinLambda
                    } else if m >= 2 {
                      qmm *= (Double(2 * m - 1) / Double(2 * m)).squareRoot()
                      sinPowerM1 *= s
                      let nextCos = cosM * cosLambda - sinM * sinLambda
                      sinM = sinM * cosLambda + cosM * sinLambda
                      cosM = nextCos
                    }
                    let mm = Double(m)
                    var q2 = 0.0  // Q_(n-2)^m
                    var dq2 = 0.0
                    var q1 = 0.0  // Q_(n-1)^m
                    var dq1 = 0.0
                    for n in max(m, 1)...maxDegree {
                      var q: Double
                      var dq: Double
                      if n == m {
                        q = qmm
                        dq = 0
                      } else {
                        let k1 = Double(2 * n - 1)
                        let k2 = recurrenceK2[n * (n + 1) / 2 + m]
                        let k3 = recurrenceK3[n * (n + 1) / 2 + m]
                        let previous = n == m + 1 ? qmm : q1
                        let dPrevious = n == m + 1 ? 0 : dq1
                        q = (k1 * t * previous - k2 * q2) * k3
                        dq = (k1 * (previous + t * dPrevious) - k2 * dq2) * k3
                        q2 = previous
                        dq2 = dPrevious
                      }
                      q1 = q
                      dq1 = dq
                      // P, dP/dtheta and P / sin(theta).
                      let pnm: Double
                      let dpnm: Double
                      let pOverS: Double
                      if m == 0 {
                        pnm = q
                        dpnm = -s * dq
                        pOverS = 0
                      } else {
                        pOverS = sinPowerM1 * q
                        pnm = pOverS * s
                        dpnm = sinPowerM1 * (mm * t * q - s * s * dq)
                      }
                      let index = n * (n + 1) / 2 + m
                      let gnm = g[index] + dt * gDot[index]
                      let hnm = h[index] + dt * hDot[index]
                      let scale = powers[n]
                      let cosTerm = gnm * cosM + hnm * sinM
                      let sinTerm = gnm * sinM - hnm * cosM
                      let cosTermDot = gDot[index] * cosM + hDot[index] * sinM
                      let sinTermDot = gDot[index] * sinM - hDot[index] * cosM
                      x += scale * cosTerm * dpnm
                      y += scale * mm * sinTerm * pOverS
                      zz -= scale * Double(n + 1) * cosTerm * pnm
                      xDot += scale * cosTermDot * dpnm
                      yDot += scale * mm * sinTermDot * pOverS
                      zDot -= scale * Double(n + 1) * cosTermDot * pnm
                    }
                  }
                }
              }
            }
          }
        }
      }
    }

    // Eq. 17: rotate from geocentric to geodetic axes by phi' - phi.
    let sinPhiPrime = t
    let cosPhiPrime = s
    let sinDelta = sinPhiPrime * cosPhi - cosPhiPrime * sinPhi
    let cosDelta = cosPhiPrime * cosPhi + sinPhiPrime * sinPhi
    let north = x * cosDelta - zz * sinDelta
    let east = y
    let down = x * sinDelta + zz * cosDelta
    let northDot = xDot * cosDelta - zDot * sinDelta
    let eastDot = yDot
    let downDot = xDot * sinDelta + zDot * cosDelta

    // Eqs. 13 and 19: the derived elements and their secular variation.
    let horizontal = (north * north + east * east).squareRoot()
    let total = (horizontal * horizontal + down * down).squareRoot()
    let horizontalDot = (north * northDot + east * eastDot) / horizontal
    let totalDot = (north * northDot + east * eastDot + down * downDot) / total
    return MagneticField(
      declination: atan2(east, north) / degree,
      inclination: atan2(down, horizontal) / degree,
      horizontalIntensity: horizontal,
      totalIntensity: total,
      north: north,
      east: east,
      down: down,
      declinationChange: (north * eastDot - east * northDot) / (horizontal * horizontal) / degree,
      inclinationChange: (horizontal * downDot - down * horizontalDot) / (total * total) / degree,
      horizontalIntensityChange: horizontalDot,
      totalIntensityChange: totalDot,
      northChange: northDot,
      eastChange: eastDot,
      downChange: downDot,
      modelName: name
    )
  }
}
