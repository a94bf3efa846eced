/// Days since 1970-01-01 and proleptic Gregorian dates, both ways (H. Hinnant, "chrono-Compatible
/// Low-Level Date Algorithms": days_from_civil and civil_from_days). The days are split into
/// 400-year eras of 146,097 days, counted from 0000-03-01 so that the leap day ends a year.
/// Used by the World Magnetic Model's decimal years and the GPX writer's UTC times.
package enum CivilDate {
  /// Days since 1970-01-01 of a date.
  package static func days(year: Int, month: Int, day: Int) -> Int {
    let y = month <= 2 ? year - 1 : year
    let era = (y >= 0 ? y : y - 399) / 400
    let yoe = y - era * 400
    let mp = (month + 9) % 12
    let doy = (153 * mp + 2) / 5 + day - 1
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
    return era * 146_097 + doe - 719_468
  }

  /// The date of a day counted from 1970-01-01.
  package static func date(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
    let z = days + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let doe = z - era * 146_097
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
    let mp = (5 * doy + 2) / 153
    let day = doy - (153 * mp + 2) / 5 + 1
    let month = mp < 10 ? mp + 3 : mp - 9
    let year = yoe + era * 400
    return (month <= 2 ? year + 1 : year, month, day)
  }
}
