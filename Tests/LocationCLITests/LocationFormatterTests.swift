import CoreLocation
import CoreLocationTesting
import Foundation
import Synchronization
import Testing

@testable import LocationCLI

@Suite struct LocationFormatterTests {
  static let location = CLLocation(
    coordinate: CLLocationCoordinate2D(latitude: 52.8501567, longitude: -5.3136),
    altitude: -4, horizontalAccuracy: 2.4, verticalAccuracy: 3.6, course: 230.5, courseAccuracy: -1,
    speed: 2.88, speedAccuracy: -1, timestamp: Date(timeIntervalSince1970: 1_534_758_456.25))

  @Test(arguments: [
    ("%latitude %longitude", "52.850157 -5.313600"),
    ("%time", "2018-08-20 09:47:36 +0000"),
    ("%time_local|%address", "|"),  // the longest token wins; geocoding prints nothing
    ("%altitude m\\t%h_accuracy\\n", "-4.00 m\t2\n"),
    ("%direction %speed", "230.5 2.88"),
    ("100%% %unknown", "100% %unknown"),
  ])
  func tokens(_ format: String, _ expected: String) {
    #expect(LocationFormatter.format(Self.location, with: format) == expected)
  }

  @Test func geocodingTokensAreListed() {
    #expect(
      LocationFormatter.geocodingTokens(in: "%latitude %address %time_local %timeZone") == [
        "address", "time_local", "timeZone",
      ])
    #expect(LocationFormatter.geocodingTokens(in: "%latitude %%address").isEmpty)
  }

  /// The placemark CLGeocoder gives for Zürich in a simulated world (the offline gazetteer).
  static func zurichPlacemark() throws -> CLPlacemark {
    let world = SimulatedEnvironment()
    let found = Mutex<CLPlacemark?>(nil)
    world.run {
      CLGeocoder().reverseGeocodeLocation(CLLocation(latitude: 47.3769, longitude: 8.5417)) {
        placemarks, _ in found.withLock { $0 = placemarks?.first }
      }
    }
    world.pump()
    return try #require(found.withLock { $0 })
  }

  @Test func geocodingTokensPrintThePlacemark() throws {
    let placemark = try Self.zurichPlacemark()
    let location = CLLocation(
      coordinate: CLLocationCoordinate2D(latitude: 47.3769, longitude: 8.5417), altitude: 0,
      horizontalAccuracy: 5, verticalAccuracy: -1,
      timestamp: Date(timeIntervalSince1970: 1_534_758_456))
    let line = LocationFormatter.format(
      location,
      with: "%locality|%subLocality|%isoCountryCode|%country|%timeZone|%time_local|%address",
      placemark: placemark)
    #expect(
      line
        == "Zürich|Lindenhof|CH|Switzerland|Europe/Zurich|2018-08-20 11:47:36 +0200|Zürich, Switzerland"
    )
    let json = LocationFormatter.json(location, placemark: placemark)
    #expect(json.contains(#""locality":"Zürich","subLocality":"Lindenhof""#))
    #expect(json.contains(#""thoroughfare":null"#))
    #expect(
      json.hasSuffix(#""timeZone":"Europe/Zurich","time_local":"2018-08-20 11:47:36 +0200"}"#))
  }

  @Test func jsonHasAFixedKeyOrderAndNumbersAsNumbers() {
    #expect(
      LocationFormatter.json(Self.location)
        == #"{"latitude":52.8501567,"longitude":-5.3136,"altitude":-4,"ellipsoidal_altitude":-4,"#
        + #""h_accuracy":2.4,"v_accuracy":3.6,"direction":230.5,"course_accuracy":null,"speed":2.88,"#
        + #""speed_accuracy":null,"floor":null,"time":"2018-08-20T09:47:36.250Z","simulated":false,"#
        + #""name":null,"address":null,"thoroughfare":null,"subThoroughfare":null,"locality":null,"#
        + #""subLocality":null,"administrativeArea":null,"subAdministrativeArea":null,"#
        + #""postalCode":null,"isoCountryCode":null,"country":null,"ocean":null,"inlandWater":null,"#
        + #""region":null,"timeZone":null,"time_local":null}"#
    )
  }

  /// `--json` coordinates read back as the same doubles (GPX files carry up to 17 digits); the
  /// text format keeps CoreLocationCLI's six decimals.
  @Test(arguments: [
    45.772175035, 14.357659249, 47.37659810297191, 8.541175909340382, -5.3136, 52, -180, 90,
    0.000091697, -1e-9, 89.99999999999999, 0.1 + 0.2,
  ])
  func jsonCoordinatesRoundTrip(_ value: Double) throws {
    let location = CLLocation(latitude: max(-90, min(90, value)), longitude: value)
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(LocationFormatter.json(location).utf8))
        as? [String: Any])
    let json = LocationFormatter.json(location)
    let latitude = try #require(Self.member("latitude", of: json))
    let longitude = try #require(Self.member("longitude", of: json))
    #expect(Double(latitude) == location.coordinate.latitude)
    #expect(Double(longitude) == location.coordinate.longitude)
    #expect(object["longitude"] is NSNumber)
    #expect(
      LocationFormatter.format(location, with: "%longitude")
        == String(format: "%.6f", location.coordinate.longitude))
  }

  @Test func jsonCoordinatesAreShortAndPlain() {
    let json = LocationFormatter.json(CLLocation(latitude: -0.0, longitude: 45.772175035))
    #expect(json.hasPrefix(#"{"latitude":0,"longitude":45.772175035,"#))
    #expect(
      LocationFormatter.format(CLLocation(latitude: 0, longitude: 45.772175035), with: "%longitude")
        == "45.772175")
  }

  /// The text of a member's value in a one-line JSON object of numbers.
  static func member(_ name: String, of json: String) -> String? {
    guard let start = json.range(of: "\"\(name)\":") else { return nil }
    return String(json[start.upperBound...].prefix { $0 != "," && $0 != "}" })
  }

  @Test func unknownValuesAreNull() {
    let bare = CLLocation(latitude: 1, longitude: 2)
    let json = LocationFormatter.json(bare)
    #expect(json.contains(#""altitude":null"#) && json.contains(#""speed":null"#))
    #expect(json.contains(#""direction":null"#))
  }

  @Test func jsonStringsAreEscaped() {
    #expect(LocationFormatter.jsonString("a\"b\\c\nd\u{01}") == #""a\"b\\c\nd\u0001""#)
  }

  @Test(arguments: [
    (0.0, "1970-01-01T00:00:00Z"), (-1.5, "1969-12-31T23:59:58.500Z"),
    (951_782_400, "2000-02-29T00:00:00Z"),
  ])
  func isoTimesAcrossEpochsAndLeapDays(seconds: Double, expected: String) {
    #expect(LocationFormatter.isoTime(Date(timeIntervalSince1970: seconds)) == expected)
  }
}
