import Geodesy
import TestSupport
import Testing

@testable import LocationFormats

@Suite struct GeolocationFileTests {
  @Test func readsGeoClueShapedFile() throws {
    let path = Paths.fixture("geolocation", "geolocation")
    let fix = try GeolocationFile.parse(path: path, time: 1_700_000_000)
    #expect(fix.latitude == 52.5186)
    #expect(fix.longitude == 13.3762)
    #expect(fix.altitude == 34)
    #expect(fix.horizontalAccuracy == 25.5)
    #expect(fix.verticalAccuracy == 25.5)
    #expect(fix.time == 1_700_000_000)
    #expect(fix.quality == .manual)
    #expect(fix.speed == -1 && fix.course == -1)
    #expect(fix.source == path)
    #expect(fix.hasValidCoordinate)
  }

  @Test func readsWindowsLineEndings() throws {
    let fix = try GeolocationFile.parse(
      path: Paths.fixture("geolocation", "geolocation_crlf"), time: 0)
    #expect(fix.latitude == -33.8568)
    #expect(fix.longitude == 151.2153)
    #expect(fix.altitude == 3)
    #expect(fix.horizontalAccuracy == 100)
  }

  @Test func missingAccuracyNamesTheLastLine() throws {
    let path = Paths.fixture("geolocation", "geolocation_three_values")
    let error = #expect(throws: FormatError.self) {
      _ = try GeolocationFile.parse(path: path, time: 0)
    }
    #expect(error?.code == .missingField)
    #expect(error?.file == path)
    #expect(error?.line == 4)
    #expect(error?.message.contains("accuracy radius") == true)
  }

  struct BadCase: Sendable, CustomTestStringConvertible {
    let text: String
    let code: FormatError.Code
    let line: Int?
    var testDescription: String { text.debugDescription }
  }

  static let badCases: [BadCase] = [
    BadCase(text: "", code: .empty, line: nil),
    BadCase(text: "# only a comment\n\n   \n", code: .empty, line: nil),
    BadCase(text: "1\n2\n", code: .missingField, line: 2),
    BadCase(text: "91\n0\n0\n10\n", code: .invalidValue, line: 1),
    BadCase(text: "-90.0001\n0\n0\n10\n", code: .invalidValue, line: 1),
    BadCase(text: "0\n180.5\n0\n10\n", code: .invalidValue, line: 2),
    BadCase(text: "# c\nNaN\n0\n0\n10\n", code: .invalidValue, line: 2),
    BadCase(text: "0\n0\ninf\n10\n", code: .invalidValue, line: 3),
    BadCase(text: "0\n0\n0\n-1\n", code: .invalidValue, line: 4),
    BadCase(text: "0\nfortytwo\n0\n10\n", code: .invalidValue, line: 2),
    BadCase(text: "48.85 2.29\n0\n0\n10\n", code: .invalidValue, line: 1),
    BadCase(text: "0\n0\n0\n10\n5\n", code: .invalidValue, line: 5),
    BadCase(text: "0x10\n0\n0\n10\n", code: .invalidValue, line: 1),
  ]

  @Test(arguments: badCases)
  func badFilesNameFileAndLine(_ bad: BadCase) throws {
    let error = #expect(throws: FormatError.self) {
      _ = try GeolocationFile.parse(text: bad.text, file: "/etc/geolocation", time: 0)
    }
    #expect(error?.code == bad.code)
    #expect(error?.line == bad.line)
    #expect(error?.file == "/etc/geolocation")
  }

  @Test func commentsAndBlankLinesAnywhere() throws {
    let text =
      "\n# header\n  12.5#lat\n\n-7.25   # lon  \n# altitude next\n-10\n0 # exact\n\n# end\n"
    let fix = try GeolocationFile.parse(text: text, time: 5)
    #expect(fix.latitude == 12.5)
    #expect(fix.longitude == -7.25)
    #expect(fix.altitude == -10)
    #expect(fix.horizontalAccuracy == 0)
    #expect(fix.source == "/etc/geolocation")
  }

  @Test func unreadableFile() {
    let error = #expect(throws: FormatError.self) {
      _ = try GeolocationFile.parse(path: "/nonexistent/geolocation", time: 0)
    }
    #expect(error?.code == .unreadable)
  }

  @Test func errorsDoNotShowCoordinates() {
    let error = #expect(throws: FormatError.self) {
      _ = try GeolocationFile.parse(text: "95.123\n1\n1\n1\n", time: 0)
    }
    #expect(error?.description.contains("95") == false)
  }
}
