import Foundation
import Testing

@testable import Geocoding

/// The gazetteer shipped in Data/gazetteer, opened once for the suite.
let shippedGazetteer: Gazetteer? = try? Gazetteer(path: Gazetteer.repositoryCopy)

@Suite struct GazetteerReverseTests {
  private func reverse(_ latitude: Double, _ longitude: Double, locale: Locale? = nil) throws
    -> GeocodedPlace
  {
    let gazetteer = try #require(shippedGazetteer)
    let answers = try gazetteer.reverse(latitude: latitude, longitude: longitude, locale: locale)
    return try #require(answers.first)
  }

  @Test func zurichCentre() throws {
    let place = try reverse(47.3769, 8.5417)
    #expect(place.locality == "Zürich")
    #expect(place.name == "Zürich")
    #expect(place.subLocality == "Lindenhof")
    #expect(place.isoCountryCode == "CH")
    #expect(place.country == "Switzerland")
    #expect(place.administrativeArea == "Zurich")
    #expect(place.timeZone == "Europe/Zurich")
    #expect(place.ocean == nil)
    #expect(place.thoroughfare == nil && place.postalCode == nil)
  }

  @Test func districtsAreSubLocalitiesOfTheirCity() throws {
    let soho = try reverse(51.5136, -0.1365)
    #expect(soho.locality == "London")
    #expect(soho.subLocality == "Soho")
    let kreuzberg = try reverse(52.4986, 13.4030)
    #expect(kreuzberg.locality == "Berlin")
    #expect(kreuzberg.subLocality == "Kreuzberg")
    // A town of its own next to a city stays its own locality.
    let cambridge = try reverse(42.3736, -71.1097)
    #expect(cambridge.locality == "Cambridge")
  }

  @Test func countryNameFollowsThePreferredLocale() throws {
    let place = try reverse(47.3769, 8.5417, locale: Locale(identifier: "de_CH"))
    #expect(place.country == "Schweiz")
    #expect(place.isoCountryCode == "CH")
  }

  @Test func unitedStatesKeepsTheStateCode() throws {
    let place = try reverse(37.3318, -122.0312)
    #expect(place.isoCountryCode == "US")
    #expect(place.administrativeArea == "California")
    #expect(place.administrativeAreaCode == "CA")
    #expect(place.timeZone == "America/Los_Angeles")
  }

  @Test func borderTownsGetTheirOwnCountry() throws {
    // Basel (CH) and Weil am Rhein (DE), 3 km apart across the border.
    #expect(try reverse(47.5596, 7.5886).isoCountryCode == "CH")
    #expect(try reverse(47.5950, 7.6100).isoCountryCode == "DE")
    // Strasbourg (FR) and Kehl (DE) across the Rhine.
    #expect(try reverse(48.5734, 7.7521).isoCountryCode == "FR")
    #expect(try reverse(48.5700, 7.8150).isoCountryCode == "DE")
  }

  @Test func openSeaHasAnOceanAndNoLocality() throws {
    let place = try reverse(30.0, -40.0)
    #expect(place.ocean == "North Atlantic Ocean")
    #expect(place.name == "North Atlantic Ocean")
    #expect(place.locality == nil && place.country == nil)
    #expect(place.timeZone == "Etc/GMT+3")
  }

  @Test func inlandSeaIsInlandWater() throws {
    let place = try reverse(42.0, 50.5)
    #expect(place.inlandWater == "Caspian Sea")
    #expect(place.ocean == nil)
  }

  @Test func nearTheCoastTheCountryIsGivenButNoLocality() throws {
    // In the harbour of Marseille, outside the simplified coast.
    let place = try reverse(43.25, 5.30)
    #expect(place.locality == nil)
    #expect(place.isoCountryCode == "FR")
    #expect(place.ocean != nil)
  }

  @Test func antimeridianAndPoles() throws {
    let fiji = try reverse(-16.5, 179.9)
    #expect(fiji.isoCountryCode == "FJ" || fiji.ocean != nil)
    let north = try reverse(90, 0)
    #expect(north.ocean != nil)
    let south = try reverse(-90, 0)
    #expect(south.isoCountryCode == "AQ")
  }

  @Test(arguments: [
    (Double.nan, 0.0), (0.0, Double.nan), (91.0, 0.0), (0.0, 180.5), (-Double.infinity, 0.0),
  ])
  func invalidCoordinatesHaveNoResult(_ latitude: Double, _ longitude: Double) throws {
    let gazetteer = try #require(shippedGazetteer)
    #expect(throws: GeocodingError.self) {
      _ = try gazetteer.reverse(latitude: latitude, longitude: longitude, locale: nil)
    }
  }

  @Test func seededPointsAllAnswerWithoutCrashing() throws {
    let gazetteer = try #require(shippedGazetteer)
    var state: UInt64 = 16
    for _ in 0..<5_000 {
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      let latitude = Double(state >> 11) / Double(1 << 53) * 180 - 90
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      let longitude = Double(state >> 11) / Double(1 << 53) * 360 - 180
      if let answer = try? gazetteer.reverse(latitude: latitude, longitude: longitude, locale: nil)
      {
        #expect(answer.count == 1)
        #expect(answer[0].name != nil)
      }
    }
  }
}

@Suite struct GazetteerForwardTests {
  private func forward(_ text: String, near region: (Double, Double, Double)? = nil) throws
    -> [GeocodedPlace]
  {
    let gazetteer = try #require(shippedGazetteer)
    var query = AddressQuery(text: text)
    if let region { query.preferredRegion = (region.0, region.1, region.2) }
    return try gazetteer.forward(query, locale: nil)
  }

  @Test(arguments: ["Zurich", "Zürich", "ZURICH", "zurich,", "Zürich, Switzerland", "Zurich, CH"])
  func zurichWithAndWithoutDiacritics(_ text: String) throws {
    let first = try #require(try forward(text).first)
    #expect(first.locality == "Zürich")
    #expect(first.isoCountryCode == "CH")
  }

  @Test(arguments: ["Munich", "München", "Muenchen"])
  func munichByItsCommonNames(_ text: String) throws {
    let first = try #require(try forward(text).first)
    #expect(first.locality == "Munich")
    #expect(first.isoCountryCode == "DE")
    #expect(first.administrativeArea == "Bavaria")
  }

  @Test func qualifiedNames() throws {
    let texas = try #require(try forward("Paris, Texas").first)
    #expect(texas.isoCountryCode == "US" && texas.administrativeArea == "Texas")
    let illinois = try #require(try forward("Springfield, IL").first)
    #expect(illinois.administrativeArea == "Illinois")
    let cambridge = try #require(try forward("Cambridge, UK").first)
    #expect(cambridge.isoCountryCode == "GB")
    let withoutComma = try #require(try forward("Paris Texas").first)
    #expect(withoutComma.administrativeArea == "Texas")
  }

  /// GeoNames names the country "The Netherlands"; a query without the article finds it too.
  @Test(arguments: [
    ("Amsterdam, Netherlands", "NL"), ("Amsterdam, The Netherlands", "NL"),
    ("Nassau, Bahamas", "BS"), ("Banjul, Gambia", "GM"),
  ])
  func countryQualifierWithoutItsArticle(_ text: String, _ country: String) throws {
    let first = try #require(try forward(text).first, "\(text)")
    #expect(first.isoCountryCode == country)
  }

  @Test func rankedByPopulationWithSeveralCandidates() throws {
    let answers = try forward("Paris")
    #expect(answers.first?.isoCountryCode == "FR")
    #expect(answers.count > 1)
    #expect(answers.count <= 10)
    #expect(answers.contains { $0.administrativeArea == "Texas" })
  }

  @Test func preferredRegionComesFirst() throws {
    // Within 100 km of Dallas, Paris (Texas) beats Paris (France).
    let answers = try forward("Paris", near: (32.78, -96.80, 200_000))
    #expect(answers.first?.administrativeArea == "Texas")
  }

  @Test func countriesAndAreas() throws {
    let switzerland = try #require(try forward("Switzerland").first)
    #expect(switzerland.isoCountryCode == "CH" && switzerland.locality == nil)
    let texas = try #require(try forward("Texas").first)
    #expect(texas.administrativeArea == "Texas" && texas.locality == nil)
  }

  @Test func streetsAreDroppedAndTheAnswerMarkedPartial() throws {
    let answers = try forward("Bahnhofstrasse 1, Zürich")
    let first = try #require(answers.first)
    #expect(first.locality == "Zürich")
    #expect(first.isPartialMatch)
  }

  @Test(arguments: [
    "", "   ", ",,,", "xq zzkw vvq", String(repeating: "a", count: 10_000), "\u{0}\u{1}",
  ])
  func absurdQueriesHaveNoResult(_ text: String) throws {
    let gazetteer = try #require(shippedGazetteer)
    #expect(throws: GeocodingError.self) {
      _ = try gazetteer.forward(AddressQuery(text: text), locale: nil)
    }
  }
}

@Suite struct GazetteerFileTests {
  @Test func missingFileIsAnErrorNotACrash() {
    #expect(throws: GeocodingError.self) {
      _ = try Gazetteer(path: "/nonexistent/gazetteer.clgz")
    }
  }

  @Test func foreignFileIsRejected() throws {
    #expect(throws: GeocodingError.self) {
      _ = try GazetteerFile(bytes: Array("not a gazetteer at all".utf8))
    }
    #expect(throws: GeocodingError.self) { _ = try GazetteerFile(bytes: []) }
  }

  /// A file of another format version (the one before, without clearances), or whose copy of the
  /// tree's top levels does not fit its places, is refused at opening with a message that says
  /// why.
  @Test func otherVersionsAndMisfitTreeTopsAreRefused() throws {
    let original = Array(try Data(contentsOf: URL(fileURLWithPath: Gazetteer.repositoryCopy)))
    var older = original
    older[8] = 2
    #expect {
      _ = try GazetteerFile(bytes: older)
    } throws: { error in
      "\(error)".contains("format version 2; this build reads version 3")
    }
    // The section table: the TOPS entry's length, one node short.
    let count = Int(original[12]) | Int(original[13]) << 8
    let entry = try #require(
      (0..<count).map { 16 + 24 * $0 }.first { original[$0..<$0 + 4].elementsEqual("TOPS".utf8) })
    var misfit = original
    misfit[entry + 16] &-= 4
    #expect {
      _ = try GazetteerFile(bytes: misfit)
    } throws: { error in
      "\(error)".contains("top levels do not fit")
    }
  }

  @Test func corruptSectionsGiveAnswersOrErrorsButNeverCrash() throws {
    let original = try Data(contentsOf: URL(fileURLWithPath: Gazetteer.repositoryCopy))
    let header = Array(original.prefix(16 + 24 * 40))
    // The header alone: every section points past the end.
    #expect(throws: GeocodingError.self) { _ = try GazetteerFile(bytes: header) }
    // Garbage bodies behind a valid header: every lookup must return or throw.
    var state: UInt64 = 7
    var bytes = Array(original)
    for index in stride(from: header.count, to: bytes.count, by: 97) {
      state = state &* 6_364_136_223_846_793_005 &+ 1
      bytes[index] = UInt8(truncatingIfNeeded: state >> 33)
    }
    let corrupt = Gazetteer(file: try GazetteerFile(bytes: bytes))
    for latitude in stride(from: -89.5, through: 89.5, by: 7.3) {
      for longitude in stride(from: -179.5, through: 179.5, by: 11.1) {
        _ = try? corrupt.reverse(latitude: latitude, longitude: longitude, locale: nil)
      }
    }
    for text in ["Zurich", "Paris, Texas", "Texas", "Switzerland"] {
      _ = try? corrupt.forward(AddressQuery(text: text), locale: nil)
    }
  }

  @Test func configuredPathWinsAndIsTheOnlyCandidate() {
    let paths = Gazetteer.candidatePaths(
      environment: ["CORELOCATION_GAZETTEER": "/data/all-places.clgz"], executable: "/usr/bin/x")
    #expect(paths == ["/data/all-places.clgz"])
    let defaults = Gazetteer.candidatePaths(environment: [:], executable: "/opt/cl/bin/whereami")
    #expect(defaults.first == "/opt/cl/share/corelocation/gazetteer.clgz")
    #expect(defaults.last == Gazetteer.repositoryCopy)
  }

  /// The program's own path comes from /proc/self/exe: right whatever argv[0] says (a bare name
  /// when started through PATH).
  @Test func runningExecutableIsTheKernelsPath() throws {
    let path = try #require(Gazetteer.runningExecutable())
    #expect(path.hasPrefix("/"))
    #expect(
      path == (try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")))
  }
}

/// The cell index against a brute-force count of every outline edge a ray to the east crosses
/// (half-open in latitude, exact in integers): the same rule, without the index.
@Suite struct GazetteerCellsTests {
  @Test func cellIndexAgreesWithBruteForceParity() throws {
    let gazetteer = try #require(shippedGazetteer)
    let cells = gazetteer.land
    let vertexCount = cells.vertices.count / 8
    let ringCount = cells.rings.count / 8
    var ringStarts: [Int] = []
    var ringRegions: [Int] = []
    for ring in 0..<ringCount {
      ringStarts.append(Int(cells.rings.u32(ring * 8)))
      ringRegions.append(Int(cells.rings.u16(ring * 8 + 4)))
    }
    ringStarts.append(vertexCount)
    var state: UInt64 = 99
    func uniform() -> Double {
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return Double(state >> 11) / Double(1 << 53)
    }
    for _ in 0..<60 {
      // Half the points near places (where outlines are dense), half anywhere.
      var latitude = uniform() * 160 - 80
      var longitude = uniform() * 360 - 180
      if uniform() < 0.5 {
        let place = gazetteer.placeCoordinate(Int(uniform() * Double(gazetteer.placeCount)))
        latitude = place.latitude + (uniform() - 0.5) * 0.1
        longitude = max(-180, min(180, place.longitude + (uniform() - 0.5) * 0.1))
      }
      let qLat = Int64((latitude * 1e6).rounded())
      let qLon = Int64((longitude * 1e6).rounded())
      var parity: [Int: Bool] = [:]
      for ring in 0..<ringCount {
        for k in ringStarts[ring]..<(ringStarts[ring + 1] - 1) {
          let aLat = Int64(cells.vertices.i32(k * 8))
          let aLon = Int64(cells.vertices.i32(k * 8 + 4))
          let bLat = Int64(cells.vertices.i32(k * 8 + 8))
          let bLon = Int64(cells.vertices.i32(k * 8 + 12))
          guard (aLat > qLat) != (bLat > qLat) else { continue }
          let cross = (bLon - aLon) * (qLat - aLat) - (bLat - aLat) * (qLon - aLon)
          if (cross > 0) == (bLat > aLat) { parity[ringRegions[ring], default: false].toggle() }
        }
      }
      let expected = parity.filter(\.value).keys.min() ?? 0
      #expect(
        cells.region(latitude: latitude, longitude: longitude) == expected,
        "at \(latitude), \(longitude)")
    }
  }
}
