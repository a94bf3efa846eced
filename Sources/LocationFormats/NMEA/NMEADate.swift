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

  /// Days since 1970-01-01 (negative before it).
  ///
  /// H. Hinnant, "chrono-Compatible Low-Level Date Algorithms", `days_from_civil`: counts in
  /// 400-year eras that start on 1 March, so that the leap day ends a year.
  package var daysSinceEpoch: Int {
    let y = month <= 2 ? year - 1 : year
    let era = (y >= 0 ? y : y - 399) / 400
    let yearOfEra = y - era * 400  // 0...399
    let shiftedMonth = month > 2 ? month - 3 : month + 9  // March = 0
    let dayOfYear = (153 * shiftedMonth + 2) / 5 + day - 1  // 0...365
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear  // 0...146096
    return era * 146_097 + dayOfEra - 719_468
  }
}
