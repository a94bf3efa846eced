import Foundation
import Geocoding
import GeocodingService
import Synchronization
import TestSupport
import Testing

/// A Nominatim answer from Tests/Fixtures/nominatim.
private func fixture(_ name: String) throws -> String {
  let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Fixtures/nominatim/\(name)")
  return try String(contentsOf: url, encoding: .utf8)
}

/// The offline gazetteer as the fallback, as in a real process.
private func gazetteerFallback() throws -> any PlaceGeocoder {
  OfflineGeocoder(gazetteer: try #require(shippedGazetteer))
}

@Suite struct NominatimGeocoderTests {
  private func server(
    _ respond: @escaping @Sendable (LocalHTTPServer.Request) -> LocalHTTPServer.Response
  )
    throws -> LocalHTTPServer
  {
    let server = try LocalHTTPServer(respond: respond)
    #expect(server.waitUntilReady())
    return server
  }

  private func client(
    _ server: LocalHTTPServer, fallback: (any PlaceGeocoder)?, interval: Double = 0
  )
    -> NominatimGeocoder
  {
    NominatimGeocoder(
      server: server.url, fallback: fallback, userAgent: "CoreLocationTests/1 (test)",
      minimumInterval: interval, timeout: 10)
  }

  @Test func reverseMapsTheAddressAndAsksPolitely() throws {
    let body = try fixture("reverse-bahnhofstrasse.json")
    let server = try server { _ in .answer(status: 200, body: body) }
    defer { server.stop() }
    let answers = try client(server, fallback: try gazetteerFallback()).reverse(
      latitude: 47.3724, longitude: 8.5390, locale: Locale(identifier: "de_CH"))
    let place = try #require(answers.first)
    #expect(place.thoroughfare == "Bahnhofstrasse")
    #expect(place.subThoroughfare == "31")
    #expect(place.locality == "Zürich")
    #expect(place.subLocality == "Altstadt")
    #expect(place.administrativeArea == "Zürich")
    #expect(place.subAdministrativeArea == "Bezirk Zürich")
    #expect(place.postalCode == "8001")
    #expect(place.isoCountryCode == "CH")
    #expect(place.areasOfInterest == ["Beyer Chronometrie"])
    #expect(place.timeZone == "Europe/Zurich")
    #expect(place.radius ?? 0 > 0)
    let request = try #require(server.requests.first)
    #expect(request.path == "/reverse")
    #expect(request.query["format"] == "jsonv2")
    #expect(request.query["lat"] == "47.3724")
    #expect(request.query["accept-language"] == "de-CH")
    #expect(request.headers["user-agent"] == "CoreLocationTests/1 (test)")
  }

  @Test func searchGivesEveryResultInOrder() throws {
    let body = try fixture("search-paris.json")
    let server = try server { _ in .answer(status: 200, body: body) }
    defer { server.stop() }
    var query = AddressQuery(text: "Paris")
    query.preferredRegion = (33.66, -95.55, 50_000)
    let answers = try client(server, fallback: try gazetteerFallback()).forward(query, locale: nil)
    #expect(answers.count == 2)
    #expect(answers[0].isoCountryCode == "FR")
    #expect(answers[0].administrativeArea == "Île-de-France")
    #expect(answers[1].administrativeArea == "Texas")
    #expect(answers[1].administrativeAreaCode == "TX")
    #expect(answers[1].timeZone == "America/Chicago")
    let request = try #require(server.requests.first)
    #expect(request.path == "/search")
    #expect(request.query["q"] == "Paris")
    #expect(request.query["limit"] == "10")
    #expect(request.query["bounded"] == "0")
    #expect(request.query["viewbox"] != nil)
  }

  @Test func postalAddressesUseTheStructuredSearch() throws {
    let server = try server { _ in .answer(status: 200, body: "[]") }
    defer { server.stop() }
    let query = AddressQuery(
      street: "1 Infinite Loop", city: "Cupertino", state: "CA", isoCountryCode: "US")
    #expect(throws: GeocodingError.self) {
      _ = try client(server, fallback: try gazetteerFallback()).forward(query, locale: nil)
    }
    let request = try #require(server.requests.first)
    #expect(request.query["street"] == "1 Infinite Loop")
    #expect(request.query["city"] == "Cupertino")
    #expect(request.query["state"] == "CA")
    #expect(request.query["country"] == "US")
    #expect(request.query["q"] == nil)
  }

  @Test(arguments: [
    LocalHTTPServer.Response.answer(status: 500, body: "{}"),
    .answer(status: 200, body: "<html>not json</html>"),
    .answer(status: 200, body: "[1, 2, 3]"),
    .hangUp,
  ])
  func aServerThatFailsIsReplacedByTheGazetteer(_ response: LocalHTTPServer.Response) throws {
    let server = try server { _ in response }
    defer { server.stop() }
    let geocoder = client(server, fallback: try gazetteerFallback())
    let reverse = try geocoder.reverse(latitude: 47.3769, longitude: 8.5417, locale: nil)
    #expect(reverse.first?.locality == "Zürich")
    #expect(reverse.first?.thoroughfare == nil)
    let forward = try geocoder.forward(AddressQuery(text: "Zurich"), locale: nil)
    #expect(forward.first?.isoCountryCode == "CH")
  }

  @Test func aServerThatIsGoneIsANetworkErrorWithoutAFallback() throws {
    let server = try server { _ in .hangUp }
    server.stop()
    let geocoder = client(server, fallback: nil)
    do {
      _ = try geocoder.reverse(latitude: 47.3769, longitude: 8.5417, locale: nil)
      Issue.record("a stopped server answered")
    } catch {
      #expect(error.code == .network)
    }
    let withFallback = client(server, fallback: try gazetteerFallback())
    #expect(
      try withFallback.reverse(latitude: 47.3769, longitude: 8.5417, locale: nil).first?.locality
        == "Zürich")
  }

  @Test func reverseAtSeaFallsBackToTheGazetteersOcean() throws {
    let body = try fixture("reverse-error.json")
    let server = try server { _ in .answer(status: 200, body: body) }
    defer { server.stop() }
    let answers = try client(server, fallback: try gazetteerFallback()).reverse(
      latitude: 30, longitude: -40, locale: nil)
    #expect(answers.first?.ocean == "North Atlantic Ocean")
  }

  @Test func atMostOneRequestASecondReachesTheServer() throws {
    let body = try fixture("reverse-bahnhofstrasse.json")
    let server = try server { _ in .answer(status: 200, body: body) }
    defer { server.stop() }
    let geocoder = client(server, fallback: try gazetteerFallback(), interval: 3_600)
    let first = try geocoder.reverse(latitude: 47.3724, longitude: 8.5390, locale: nil)
    let second = try geocoder.reverse(latitude: 47.3724, longitude: 8.5390, locale: nil)
    #expect(first.first?.thoroughfare == "Bahnhofstrasse")
    #expect(second.first?.thoroughfare == nil)  // the gazetteer's answer
    #expect(server.requests.count == 1)
    let strict = client(server, fallback: nil, interval: 3_600)
    _ = try? strict.reverse(latitude: 47.3724, longitude: 8.5390, locale: nil)
    do {
      _ = try strict.reverse(latitude: 47.3724, longitude: 8.5390, locale: nil)
      Issue.record("a second request within the interval was sent")
    } catch {
      #expect(error.code == .network)
    }
  }

  @Test func badInputNeverReachesTheServer() throws {
    let server = try server { _ in .answer(status: 200, body: "[]") }
    defer { server.stop() }
    let geocoder = client(server, fallback: nil)
    #expect(throws: GeocodingError.self) {
      _ = try geocoder.reverse(latitude: .nan, longitude: 0, locale: nil)
    }
    #expect(throws: GeocodingError.self) {
      _ = try geocoder.forward(AddressQuery(text: " "), locale: nil)
    }
    #expect(server.requests.isEmpty)
  }

  @Test func mutatedAnswersNeverCrash() throws {
    let originals = [
      try fixture("reverse-bahnhofstrasse.json"), try fixture("search-paris.json"),
    ]
    let answers = Mutex<[String]>([])
    let server = try server { _ in
      .answer(status: 200, body: answers.withLock { $0.isEmpty ? "{}" : $0.removeFirst() })
    }
    defer { server.stop() }
    let geocoder = client(server, fallback: nil)
    var state: UInt64 = 5
    for round in 0..<120 {
      var bytes = Array(originals[round % 2].utf8)
      for _ in 0..<(1 + round % 6) {
        state = state &* 6_364_136_223_846_793_005 &+ 1
        let index = Int(state >> 33) % bytes.count
        bytes[index] = UInt8(truncatingIfNeeded: state >> 17)
      }
      answers.withLock { $0.append(String(decoding: bytes, as: UTF8.self)) }
      if round % 2 == 0 {
        _ = try? geocoder.reverse(latitude: 47.37, longitude: 8.54, locale: nil)
      } else {
        _ = try? geocoder.forward(AddressQuery(text: "Paris"), locale: nil)
      }
    }
    #expect(server.requests.count == 120)
  }

  @Test func selectionFollowsTheEnvironment() {
    #expect(GeocoderSelection.choose(environment: [:]) is OfflineGeocoder)
    #expect(
      GeocoderSelection.choose(environment: ["CORELOCATION_GEOCODER": "offline"]) is OfflineGeocoder
    )
    #expect(
      GeocoderSelection.choose(environment: ["CORELOCATION_GEOCODER": "ftp://x"]) is OfflineGeocoder
    )
    let chosen = GeocoderSelection.choose(
      environment: ["CORELOCATION_GEOCODER": "http://127.0.0.1:9/nominatim/"])
    #expect(
      (chosen as? NominatimGeocoder)?.server.absoluteString == "http://127.0.0.1:9/nominatim/")
    #expect((chosen as? NominatimGeocoder)?.minimumInterval == 1)
  }
}
