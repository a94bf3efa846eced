import Geodesy

/// A calendar date in UTC (proleptic Gregorian), as NMEA's RMC and ZDA carry it.
package struct NMEADate: Sendable, Equatable, Hashable {
  /// Four-digit year.
  package var year: Int
  /// Month, 1...12.
  package var month: Int
  /// Day of the month, 1...31.
  package var day: Int

  /// Creates a date. The values are not checked here; `isValid` says whether they name a day.
  package init(year: Int, month: Int, day: Int) {
    self.year = year
    self.month = month
    self.day = day
  }

  /// True when the date exists in the Gregorian calendar (years 1...9999).
  package var isValid: Bool {
    guard (1...9999).contains(year), (1...12).contains(month), day >= 1 else { return false }
    let lengths = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
    let length = month == 2 && leap ? 29 : lengths[month - 1]
    return day <= length
  }

  /// Days since 1970-01-01 (negative before it); `CivilDate.days`.
  package var daysSinceEpoch: Int { CivilDate.days(year: year, month: month, day: day) }
}
