import LocationModel

#if canImport(Geodesy)
  import Geodesy
#endif

extension GPSDTPV {
  /// Converts gpsd's 95 % horizontal error `eph` to the radius of 68 % confidence.
  ///
  /// For a circular two-dimensional normal error with standard deviation s per axis, the radius
  /// holding probability p is s * sqrt(-2 ln(1 - p)) (the Rayleigh distribution). The ratio of
  /// the 68 % radius to the 95 % radius is sqrt(-2 ln 0.32) / sqrt(-2 ln 0.05)
  /// = 1.5096 / 2.4477 = 0.617 (README, "Behaviour beyond Apple's documentation", Accuracy).
  package static let horizontal95To68 = 0.617

  /// Converts gpsd's one-dimensional 95 % errors (`epv`, `eps`, `epd`) to one standard deviation
  /// (68 %): a normal error's 95 % bound is 1.96 sigma, so sigma = value / 1.96 = value * 0.5102.
  package static let oneDimensional95To68 = 0.5102

  /// gpsd's `status` as a fix quality: 2 DGPS -> `.differential`, 3 -> `.rtkFixed`,
  /// 4 -> `.rtkFloat`, 5 dead reckoning -> `.estimated`, 7 surveyed-in time mode -> `.manual`,
  /// 8 -> `.simulated`, 9 P(Y) -> `.precise`; 0, 1, 6 (GNSS with dead reckoning), a missing or an
  /// unknown status -> `.autonomous`.
  package var quality: FixQuality {
    switch status {
    case 2: return .differential
    case 3: return .rtkFixed
    case 4: return .rtkFloat
    case 5: return .estimated
    case 7: return .manual
    case 8: return .simulated
    case 9: return .precise
    default: return .autonomous
    }
  }

  /// The fix this report describes, or nil when it describes none.
  ///
  /// Our rules:
  /// - A fix needs `mode` 2 or 3 and a usable `lat` and `lon`; `mode` 0 or 1 (no fix), a missing
  ///   mode or a missing coordinate give nil.
  /// - `horizontalAccuracy` is `eph * horizontal95To68`. Without `eph` it is the conservative
  ///   default of the fix quality from `status` (`NMEADecoder.defaultAccuracy(for:)`: 30 m for
  ///   an autonomous fix, 10 m DGPS, 2 m RTK float, 0.5 m RTK fixed, 100 m dead reckoning).
  /// - Altitudes only for `mode` 3 (a two-dimensional solution has none): `altitude` is `altMSL`,
  ///   else the legacy `alt`; `ellipsoidalAltitude` is `altHAE`, else `altMSL + geoidSep`.
  ///   `verticalAccuracy` is `epv * oneDimensional95To68` when an altitude is known, else -1.
  /// - `speed` (m/s) and `course` (`track`, degrees true; 360 becomes 0) as given, -1 when
  ///   absent; `speedAccuracy` and `courseAccuracy` are `eps` and `epd` times
  ///   `oneDimensional95To68`, -1 when absent or when their value is absent.
  /// - `time` is the report's `time`; a report without one (gpsd sends one while it learns the
  ///   receiver's cycle) is stamped `receivedAt`.
  /// - Parameters:
  ///   - receivedAt: the time to use when the report has none, seconds since 1970.
  ///   - source: the `source` of the fix.
  /// - Returns: the fix, or nil.
  package func fix(receivedAt: Double, source: String = "") -> Fix? {
    guard let mode, mode >= 2, let latitude, let longitude else { return nil }
    let quality = quality
    let horizontal =
      eph.map { $0 * Self.horizontal95To68 } ?? NMEADecoder.defaultAccuracy(for: quality)
    var msl: Double?
    var hae: Double?
    if mode == 3 {
      msl = altitudeMSL ?? altitude
      hae = altitudeHAE ?? msl.flatMap { msl in geoidSeparation.map { msl + $0 } }
    }
    let vertical: Double =
      if msl != nil || hae != nil, let epv { epv * Self.oneDimensional95To68 } else { -1 }
    let course = track.map { $0 == 360 ? 0 : $0 }
    return Fix(
      latitude: latitude,
      longitude: longitude,
      altitude: msl,
      ellipsoidalAltitude: hae,
      horizontalAccuracy: horizontal,
      verticalAccuracy: vertical,
      speed: speed ?? -1,
      speedAccuracy: speed != nil ? eps.map { $0 * Self.oneDimensional95To68 } ?? -1 : -1,
      course: course ?? -1,
      courseAccuracy: course != nil ? epd.map { $0 * Self.oneDimensional95To68 } ?? -1 : -1,
      time: time ?? receivedAt,
      quality: quality,
      isSimulated: quality.isSimulated,
      source: source
    )
  }
}
