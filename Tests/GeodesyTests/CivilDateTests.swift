import Testing

@testable import Geodesy

/// `CivilDate`: days since 1970 and Gregorian dates, both ways.
@Suite struct CivilDateTests {
  @Test func knownDatesAndRoundTrips() {
    #expect(CivilDate.days(year: 1970, month: 1, day: 1) == 0)
    #expect(CivilDate.days(year: 2000, month: 3, day: 1) == 11_017)
    #expect(CivilDate.date(fromDays: -1) == (1969, 12, 31))
    #expect(CivilDate.date(fromDays: 11_016) == (2000, 2, 29))
    for days in stride(from: -719_162, through: 2_932_896, by: 97) {
      let date = CivilDate.date(fromDays: days)
      #expect(CivilDate.days(year: date.year, month: date.month, day: date.day) == days)
    }
  }
}
