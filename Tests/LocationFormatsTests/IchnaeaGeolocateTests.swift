import LocationModel
import Testing

@testable import LocationFormats

/// The geolocate request and response, without a network.
@Suite struct IchnaeaGeolocateTests {
  static func reading(_ bssid: UInt64, _ ssid: String, _ signal: Double, _ frequency: Int = 0)
    -> AccessPointReading
  {
    AccessPointReading(bssid: bssid, ssid: Array(ssid.utf8), signal: signal, frequency: frequency)
  }

  @Test func requestIsLoudestFirstWithoutSSIDsHiddenOrNomap() throws {
    let scan = WifiScan(
      time: 0,
      readings: [
        Self.reading(0x0123_4567_89AB, "quiet", -80.4, 5180),
        Self.reading(0x0123_4567_89CD, "loud", -50.6, 2437),
        Self.reading(0x0000_0000_0001, "", -30),
        Self.reading(0x0000_0000_0002, "mine_nomap", -20),
      ])
    let body = String(decoding: try #require(IchnaeaGeolocate.request(scan)), as: UTF8.self)
    #expect(
      body == #"{"considerIp":false,"wifiAccessPoints":["#
        + #"{"macAddress":"01:23:45:67:89:cd","signalStrength":-51,"frequency":2437},"#
        + #"{"macAddress":"01:23:45:67:89:ab","signalStrength":-80,"frequency":5180}]}"#)
  }

  @Test func atMostFiftyAndAtLeastTwo() {
    let many = WifiScan(
      time: 0, readings: (0..<80).map { Self.reading(UInt64($0), "n", -Double($0)) })
    let points = IchnaeaGeolocate.accessPoints(many)
    #expect(points.count == 50)
    #expect(points.first?.bssid == 0 && points.last?.bssid == 49)
    let one = WifiScan(
      time: 0, readings: [Self.reading(1, "a", -40), Self.reading(2, "b_nomap", -40)])
    #expect(IchnaeaGeolocate.request(one) == nil)
  }

  @Test func successBecomesANetworkFixAtSixtyEightPercent() throws {
    let answer = try IchnaeaGeolocate.answer(
      Array(#"{"location": {"lat": -22.7539192, "lng": -43.4371081}, "accuracy": 100.0}"#.utf8))
    guard case .located(let location) = answer else {
      Issue.record("expected a location, got \(answer)")
      return
    }
    #expect(location.accuracy == 100)
    #expect(location.fallback == nil)
    let fix = location.fix(time: 12, source: "https://example.org/v1/geolocate")
    #expect(fix.latitude == -22.7539192 && fix.longitude == -43.4371081)
    #expect(abs(fix.horizontalAccuracy - 61.7) < 1e-9)
    #expect(fix.quality == .network && fix.time == 12)
    #expect(fix.source == "https://example.org/v1/geolocate")
  }

  @Test func fallbackIsKept() throws {
    let answer = try IchnaeaGeolocate.answer(
      Array(#"{"location": {"lat": 51, "lng": -0.1}, "accuracy": 600000, "fallback": "ipf"}"#.utf8))
    #expect(
      answer
        == .located(.init(latitude: 51, longitude: -0.1, accuracy: 600_000, fallback: "ipf")))
  }

  @Test func errorObjectsGiveCodeAndMessage() throws {
    let body = #"""
      {"error": {"errors": [{"domain": "geolocation", "reason": "notFound",
      "message": "Not found"}], "code": 404, "message": "Not found"}}
      """#
    #expect(
      try IchnaeaGeolocate.answer(Array(body.utf8)) == .error(code: 404, message: "Not found"))
  }

  @Test(arguments: [
    "", "nope", "[1]", #"{"location": {"lat": 1}, "accuracy": 3}"#,
    #"{"location": {"lat": 1, "lng": 200}, "accuracy": 3}"#,
    #"{"location": {"lat": 1, "lng": 2}, "accuracy": -3}"#,
  ])
  func badAnswersThrow(body: String) {
    #expect(throws: FormatError.self) { _ = try IchnaeaGeolocate.answer(Array(body.utf8)) }
  }
}
