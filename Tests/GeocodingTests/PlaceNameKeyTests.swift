import Testing

@testable import Geocoding

@Suite struct PlaceNameKeyTests {
  @Test(arguments: [
    ("Zürich", "zurich"), ("ZURICH", "zurich"), ("  Zurich ", "zurich"), ("São Paulo", "sao paulo"),
    ("Val-d'Or", "val d or"), ("Straße", "strasse"), ("Łódź", "lodz"),
    ("Ærøskøbing", "aeroskobing"),
    ("İstanbul", "istanbul"), ("Washington, D.C.", "washington d c"), ("", ""), ("!!!", ""),
    ("東京", "東京"),
  ])
  func folds(_ name: String, _ key: String) {
    #expect(PlaceNameKey.fold(name) == key)
  }

  @Test func foldingIsIdempotent() {
    for name in ["Zürich", "Val-d'Or", "Ærøskøbing", "Side by  side"] {
      let key = PlaceNameKey.fold(name)
      #expect(PlaceNameKey.fold(key) == key)
    }
  }

  /// The table agrees with the file's keys: every place of the shipped gazetteer is found under
  /// the Swift fold of its own name (the file's keys were folded by the build script's Python).
  @Test func everyPlaceIsFoundUnderItsOwnNamesKey() throws {
    let gazetteer = try #require(shippedGazetteer)
    var missing: [String] = []
    for place in 0..<gazetteer.placeCount {
      guard let name = gazetteer.placeName(place) else { continue }
      if !gazetteer.places(withKey: PlaceNameKey.fold(name)).contains(place) {
        missing.append(name)
      }
    }
    #expect(missing.isEmpty, "\(missing.count) places, such as \(missing.prefix(10))")
  }

  /// Compatibility forms, Hangul syllables, and letters the table spells out.
  @Test(arguments: [
    ("ﬁnland", "finland"), ("ＴＯＫＹＯ", "tokyo"), ("Ǽrø", "aero"), ("½", "1 2"),
    ("한국", "\u{1112}\u{1161}\u{11AB}\u{1100}\u{116E}\u{11A8}"),
    ("Å\u{301}", "a"), ("Ⅻ", "xii"), ("Ǆ", "dz"),
  ])
  func foldsBeyondLatin(_ name: String, _ key: String) {
    #expect(PlaceNameKey.fold(name) == key)
  }

  @Test func hashIsFNV1a64() {
    // FNV-1a 64 test vectors from the IETF draft: "" and "a".
    #expect(PlaceNameKey.hash("") == 0xCBF2_9CE4_8422_2325)
    #expect(PlaceNameKey.hash("a") == 0xAF63_DC4C_8601_EC8C)
  }
}

/// The forward lookups' table of country keys: a sorted byte array searched by binary search.
@Suite struct CountryKeyTableTests {
  @Test func findsEveryCountryOfAKeyInRecordOrderAndNothingElse() {
    let table = CountryKeyTable([
      (key: "united kingdom", country: 9), (key: "uk", country: 9), (key: "gb", country: 9),
      (key: "georgia", country: 3), (key: "georgia", country: 1), (key: "ge", country: 3),
      (key: "us", country: 7), (key: "usa", country: 7), (key: "united states", country: 7),
    ])
    #expect(table.countries("georgia") == [1, 3])
    #expect(table.countries("uk") == [9])
    #expect(table.countries("us") == [7])
    #expect(table.countries("usa") == [7])
    // Neither a prefix of a key nor a key's extension matches.
    #expect(table.countries("u").isEmpty)
    #expect(table.countries("united").isEmpty)
    #expect(table.countries("georgias").isEmpty)
    #expect(table.countries("").isEmpty)
    #expect(CountryKeyTable([]).countries("uk").isEmpty)
  }

  @Test func theShippedCountriesAnswerByNameCodeAndAlias() throws {
    let gazetteer = try #require(shippedGazetteer)
    let table = CountryKeyTable(gazetteer.makeCountryKeys())
    for key in ["switzerland", "ch", "che", "uk", "united kingdom", "netherlands"] {
      let found = table.countries(key)
      #expect(found.count == 1, "\(key)")
      #expect(found.first.flatMap(gazetteer.countryCode) != nil, "\(key)")
    }
    #expect(table.countries("ch").first.flatMap(gazetteer.countryCode) == "CH")
    #expect(table.countries("uk").first.flatMap(gazetteer.countryCode) == "GB")
  }
}
