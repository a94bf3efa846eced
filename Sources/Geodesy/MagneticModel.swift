// The World Magnetic Model (NOAA/NCEI and BGS) for 2010.0 to 2030.0: WMM2010, WMM2015v2, WMM2020
// and WMM2025, each used for its own five years (Chulliat et al., "The US/UK World Magnetic Model
// for 2025-2030", NOAA technical report, 2024, gives the equations; see WorldMagneticModel.swift).
import Foundation

/// The World Magnetic Model: declination, inclination and the field's components for a place and
/// date.
///
/// The model is chosen by the date: WMM2010 for [2010.0, 2015.0), WMM2015v2 for [2015.0, 2020.0),
/// WMM2020 for [2020.0, 2025.0) and WMM2025 for [2025.0, 2030.0]. Outside 2010.0...2030.0 the model
/// has no answer and ``field(latitude:longitude:height:decimalYear:)`` throws.
package enum MagneticModel {
  /// The dates, as decimal years, that the embedded models cover.
  package static let validRange: ClosedRange<Double> = 2010.0...2030.0

  /// Heights above the WGS-84 ellipsoid, metres, that the model is specified for (-1 km to
  /// 850 km, the WMM technical report, section 1.1).
  package static let heightRange: ClosedRange<Double> = -1_000.0...850_000.0

  private static let models: [WorldMagneticModel] = [
    WorldMagneticModel.wmm2010,
    WorldMagneticModel.wmm2015v2,
    WorldMagneticModel.wmm2020,
    WorldMagneticModel.wmm2025,
  ]

  /// The name of the model used for a date, e.g. "WMM-2025", or nil outside ``validRange``.
  ///
  /// - Parameter decimalYear: The date as a decimal year.
  /// - Returns: The model's name.
  package static func modelName(decimalYear: Double) -> String? {
    model(for: decimalYear)?.name
  }

  /// The geomagnetic field at a place and date.
  ///
  /// - Parameters:
  ///   - latitude: Geodetic latitude on WGS-84, degrees, -90...90.
  ///   - longitude: Longitude, degrees (any finite value).
  ///   - height: Height above the WGS-84 ellipsoid, metres, within ``heightRange``.
  ///   - decimalYear: The date as a decimal year (see ``decimalYear(unixTime:)``), within
  ///     ``validRange``.
  /// - Returns: The field and its yearly change, from the model for that date.
  /// - Throws: ``MagneticModelError`` with code `.outOfValidRange` for a date outside
  ///   ``validRange``, `.invalidInput` for a non-finite value, a latitude outside -90...90 or a
  ///   height outside ``heightRange``.
  package static func field(
    latitude: Double,
    longitude: Double,
    height: Double,
    decimalYear: Double
  ) throws(MagneticModelError) -> MagneticField {
    guard latitude.isFinite, longitude.isFinite, height.isFinite, decimalYear.isFinite else {
      throw MagneticModelError(code: .invalidInput, message: "a position or date is not finite")
    }
    guard abs(latitude) <= 90 else {
      throw MagneticModelError(code: .invalidInput, message: "latitude is outside -90...90")
    }
    guard heightRange.contains(height) else {
      throw MagneticModelError(
        code: .invalidInput,
        message: "height is outside the model's -1 km...850 km above the ellipsoid")
    }
    guard let model = model(for: decimalYear) else {
      throw MagneticModelError(
        code: .outOfValidRange,
        message:
          "decimal year \(decimalYear) is outside the World Magnetic Model's 2010.0...2030.0")
    }
    return model.field(
      latitude: latitude, longitude: longitude, height: height, decimalYear: decimalYear)
  }

  /// The geomagnetic field at a place and a time given as seconds since 1970-01-01T00:00:00Z
  /// (a `Fix`'s `time`).
  ///
  /// - Parameters:
  ///   - latitude: Geodetic latitude on WGS-84, degrees, -90...90.
  ///   - longitude: Longitude, degrees (any finite value).
  ///   - height: Height above the WGS-84 ellipsoid, metres, within ``heightRange``.
  ///   - unixTime: Seconds since 1970-01-01T00:00:00Z; converted by ``decimalYear(unixTime:)``.
  /// - Returns: The field and its yearly change, from the model for that date.
  /// - Throws: ``MagneticModelError`` as ``field(latitude:longitude:height:decimalYear:)`` does.
  package static func field(
    latitude: Double,
    longitude: Double,
    height: Double,
    unixTime: Double
  ) throws(MagneticModelError) -> MagneticField {
    guard unixTime.isFinite else {
      throw MagneticModelError(code: .invalidInput, message: "the time is not finite")
    }
    return try field(
      latitude: latitude, longitude: longitude, height: height,
      decimalYear: decimalYear(unixTime: unixTime))
  }

  /// Converts a time in seconds since 1970-01-01T00:00:00Z to a decimal year (2025.5 is half-way
  /// through 2025), the date the model takes.
  ///
  /// The fraction is the elapsed part of the UTC calendar year, 365 or 366 days long (leap seconds
  /// are ignored, as POSIX time does).
  ///
  /// - Parameter unixTime: Seconds since 1970-01-01T00:00:00Z.
  /// - Returns: The decimal year; NaN for a non-finite time.
  package static func decimalYear(unixTime: Double) -> Double {
    guard unixTime.isFinite, abs(unixTime) < 1e15 else { return .nan }
    let days = Int((unixTime / 86_400).rounded(.down))
    let year = CivilDate.date(fromDays: days).year
    let start = Double(CivilDate.days(year: year, month: 1, day: 1)) * 86_400
    let end = Double(CivilDate.days(year: year + 1, month: 1, day: 1)) * 86_400
    return Double(year) + (unixTime - start) / (end - start)
  }

  private static func model(for decimalYear: Double) -> WorldMagneticModel? {
    guard validRange.contains(decimalYear) else { return nil }
    if decimalYear < 2015 { return models[0] }
    if decimalYear < 2020 { return models[1] }
    if decimalYear < 2025 { return models[2] }
    return models[3]
  }
}
