import Foundation
import Synchronization

/// Forward geocoding: place names, qualified by areas and countries, ranked.
extension Gazetteer {
  // MARK: Forward

  /// The places, countries and areas that match a query, by the rule in the type's documentation.
  ///
  /// - Parameters:
  ///   - query: Free text or a structured address.
  ///   - locale: The language of country names (`nil`: English), also accepted in the query.
  /// - Returns: At most 10 placemarks, best first.
  /// - Throws: `GeocodingError` `.noResult` when nothing matches, or for empty or absurd text
  ///   (more than 256 characters).
  package func forward(_ query: AddressQuery, locale: Locale?) throws(GeocodingError)
    -> [GeocodedPlace]
  {
    var parts: [String]
    if let text = query.text {
      parts = text.split(separator: ",").map { PlaceNameKey.fold(String($0)) }
    } else {
      parts = [query.street, query.city, query.subAdministrativeArea, query.state]
        .compactMap { $0 }.map(PlaceNameKey.fold)
      if let country = query.country ?? query.isoCountryCode {
        parts.append(PlaceNameKey.fold(country))
      }
    }
    parts.removeAll { $0.isEmpty }
    guard !parts.isEmpty, query.singleLine.count <= 256, parts.count <= 8 else {
      throw GeocodingError(.noResult, "the query is empty or too long")
    }
    var dropped = 0
    while dropped < parts.count {
      let remaining = Array(parts[dropped...])
      let answers = match(remaining, query: query, locale: locale)
      if !answers.isEmpty {
        return answers.map { answer in
          var answer = answer
          answer.isPartialMatch = dropped > 0
          return answer
        }
      }
      dropped += 1
    }
    throw GeocodingError(.noResult, "no place matches the query")
  }

  /// A match before its placemark is made (only the best ones get one).
  struct Candidate {
    enum Hit {
      case country(Int)
      case place(Int)
      case area(Int)
    }
    var hit: Hit
    var tier: Int
    var population: Int
    var position: SIMD3<Double>
    var inRegion = false
  }

  func match(_ parts: [String], query: AddressQuery, locale: Locale?) -> [GeocodedPlace] {
    var candidates: [Candidate] = []
    var seenPlaces = Set<Int>()
    let whole = parts.joined(separator: " ")
    func addPlaces(named name: String, qualifiers: [String]) {
      for place in places(withKey: name) where !seenPlaces.contains(place) {
        guard qualifiers.allSatisfy({ qualifies(place: place, $0, locale: locale) }) else {
          continue
        }
        seenPlaces.insert(place)
        candidates.append(
          Candidate(
            hit: .place(place), tier: 1, population: placePopulation(place),
            position: placeVector(place)))
      }
    }
    if parts.count == 1 {
      for country in countries(withKey: whole, locale: locale) {
        let record = country * GazetteerFormat.countrySize
        candidates.append(
          Candidate(
            hit: .country(country), tier: 0, population: Int(countries.u32(record + 18)),
            position: PlaceTree.unitVector(
              latitude: Double(countries.i32(record + 22)) / 1e5,
              longitude: Double(countries.i32(record + 26)) / 1e5)))
      }
    }
    addPlaces(named: whole, qualifiers: [])
    if parts.count > 1 {
      addPlaces(named: parts[0], qualifiers: Array(parts[1...]))
    } else if candidates.isEmpty {
      let words = whole.split(separator: " ").map(String.init)
      for qualifierWords in [1, 2] where words.count > qualifierWords {
        let name = words.dropLast(qualifierWords).joined(separator: " ")
        let qualifier = words.suffix(qualifierWords).joined(separator: " ")
        addPlaces(named: name, qualifiers: [qualifier])
      }
    }
    if parts.count == 1 {
      for area in admin1Areas(withKey: whole) {
        guard let record = admin1Record(area) else { continue }
        let place = Int(admin1.u32(record + 16))
        guard place < tree.count else { continue }
        candidates.append(
          Candidate(
            hit: .area(area), tier: 2, population: Int(admin1.u32(record + 20)),
            position: placeVector(place)))
      }
    }
    if let region = query.preferredRegion {
      let centre = PlaceTree.unitVector(latitude: region.latitude, longitude: region.longitude)
      for index in candidates.indices {
        let delta = candidates[index].position - centre
        candidates[index].inRegion =
          PlaceTree.metres(chord2: (delta * delta).sum()) <= region.radius
      }
    }
    candidates.sort { a, b in
      if a.tier != b.tier { return a.tier < b.tier }
      if a.inRegion != b.inRegion { return a.inRegion }
      return a.population > b.population
    }
    return candidates.prefix(Self.maximumAnswers).compactMap { candidate in
      switch candidate.hit {
      case .place(let place): return placemark(place: place, locale: locale)
      case .country(let country): return countryPlacemark(country, locale: locale)
      case .area(let area): return areaPlacemark(area, locale: locale)
      }
    }
  }

  /// The place's stored unit vector.
  func placeVector(_ index: Int) -> SIMD3<Double> {
    SIMD3(tree.coordinate(index, 0), tree.coordinate(index, 1), tree.coordinate(index, 2))
  }

  /// The places whose name key is `key`, largest first.
  func places(withKey key: String) -> [Int] {
    guard !key.isEmpty else { return [] }
    let hash = PlaceNameKey.hash(key)
    let count = min(nameHashes.count / 8, namePlaces.count / 4)
    var low = 0
    var high = count
    while low < high {
      let middle = (low + high) / 2
      if nameHashes.u64(middle * 8) < hash { low = middle + 1 } else { high = middle }
    }
    var found: [Int] = []
    var index = low
    while index < count, nameHashes.u64(index * 8) == hash, found.count < 1000 {
      let place = Int(namePlaces.u32(index * 4))
      if place < tree.count { found.append(place) }
      index += 1
    }
    return found
  }

  /// Whether `qualifier` (a key) names the place's country, first- or second-level area.
  func qualifies(place: Int, _ qualifier: String, locale: Locale?) -> Bool {
    let key = Array(qualifier.utf8)
    if let area = admin1Record(placeAdmin1(place)) {
      if strings.stringEquals(Int(admin1.u32(area + 8)), key) { return true }
      if let code = string(admin1.u32(area + 12)), PlaceNameKey.fold(code) == qualifier {
        return true
      }
    }
    let county = placeAdmin2(place)
    if let name = admin2Name(county),
      PlaceNameKey.fold(name) == qualifier
    {
      return true
    }
    return countryMatches(placeCountry(place), key: qualifier, locale: locale)
  }

  func countryMatches(_ index: Int, key: String, locale: Locale?) -> Bool {
    countryKeys.table(self).countries(key).contains(index)
      || localizedCountryMatches(index, key: key, locale: locale)
  }

  /// Whether `key` is the country's name in the locale's language or in English, from the
  /// system's locale data (only when a locale was given).
  func localizedCountryMatches(_ index: Int, key: String, locale: Locale?) -> Bool {
    guard locale != nil, let code = countryCode(index) else { return false }
    return localizedCountries.names(for: locale)[key] == code
  }

  /// The countries named by `key`: their GeoNames name, ISO codes, aliases, or (with a locale)
  /// their name in the locale's language or in English.
  func countries(withKey key: String, locale: Locale?) -> [Int] {
    var found = countryKeys.table(self).countries(key)
    if locale != nil, let code = localizedCountries.names(for: locale)[key] {
      for index in 0..<(countries.count / GazetteerFormat.countrySize)
      where countryCode(index) == code && !found.contains(index) {
        found.append(index)
      }
    }
    return found
  }

  /// The keys that name each country: its GeoNames name's key (also without a leading "The"), its
  /// ISO alpha-2 and alpha-3 codes in lower case, and its aliases.
  func makeCountryKeys() -> [(key: String, country: Int)] {
    var table: [(key: String, country: Int)] = []
    for index in 0..<(countries.count / GazetteerFormat.countrySize) {
      let record = index * GazetteerFormat.countrySize
      var keys: [String] = []
      if let key = string(countries.u32(record + 10)) {
        keys.append(key)
        // GeoNames says "The Netherlands", "The Bahamas", "The Gambia"; people leave it out.
        if key.hasPrefix("the ") { keys.append(String(key.dropFirst(4))) }
      }
      keys.append(PlaceNameKey.fold(String(decoding: countries.bytes(record, 2), as: UTF8.self)))
      keys.append(
        PlaceNameKey.fold(String(decoding: countries.bytes(record + 2, 3), as: UTF8.self)))
      if let aliases = string(countries.u32(record + 14)) {
        keys += aliases.split(separator: "|").map(String.init)
      }
      for key in Set(keys) where !key.isEmpty { table.append((key, index)) }
    }
    return table
  }

  func countryPlacemark(_ index: Int, locale: Locale?) -> GeocodedPlace {
    let record = index * GazetteerFormat.countrySize
    var answer = GeocodedPlace(
      latitude: Double(countries.i32(record + 22)) / 1e5,
      longitude: Double(countries.i32(record + 26)) / 1e5)
    answer.isoCountryCode = countryCode(index)
    answer.country = countryName(index, locale: locale)
    answer.name = answer.country
    return answer
  }

  /// The first-level areas whose key is `key`.
  func admin1Areas(withKey key: String) -> [Int] {
    let bytes = Array(key.utf8)
    return (0..<(admin1.count / GazetteerFormat.admin1Size)).filter {
      strings.stringEquals(Int(admin1.u32($0 * GazetteerFormat.admin1Size + 8)), bytes)
    }
  }

  func areaPlacemark(_ index: Int, locale: Locale?) -> GeocodedPlace? {
    guard let record = admin1Record(index) else { return nil }
    let place = Int(admin1.u32(record + 16))
    guard place < tree.count else { return nil }
    let coordinate = placeCoordinate(place)
    var answer = GeocodedPlace(latitude: coordinate.latitude, longitude: coordinate.longitude)
    describe(place: place, into: &answer, locale: locale)
    answer.subAdministrativeArea = nil
    answer.name = answer.administrativeArea
    return answer
  }
}
