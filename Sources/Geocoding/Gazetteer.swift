import Foundation
import Synchronization

/// The offline gazetteer: GeoNames places (population 1,000 or more) with their administrative
/// areas and time zones, and Natural Earth's country and sea outlines, in one memory-mapped file.
///
/// Reverse geocoding (our rule; Apple publishes none):
/// 1. The country outline that holds the point decides the country. The answer is the nearest
///    place within that outline: its country, first- and second-level administrative areas and
///    time zone; it is the `locality` (and the `name`) when it lies within 50 km. GeoNames lists
///    the districts of many cities as places of their own: a district gives its city as the
///    `locality` and itself as the `subLocality` ("London" and "Soho").
/// 2. An outline with no place of its own (an uninhabited island) gives its country only, and the
///    time zone and areas of the nearest place when that place is of the same country.
/// 3. At sea (no outline holds the point) the sea or ocean that holds it is the `ocean` (or, for
///    the Caspian Sea and a few lakes, the `inlandWater`) and the `name`. Within 22.2 km (12
///    nautical miles, the territorial sea) of a place, the place's country, areas and time zone
///    are given too, never a locality; farther out the time zone is the nautical one for the
///    longitude (`Etc/GMT+5` west of Greenwich between 67.5° and 82.5° W, and so on).
/// Coordinates that are NaN or out of range, and points that nothing holds, have no answer.
///
/// Forward geocoding matches place names by their key (`PlaceNameKey`: case, diacritics and
/// punctuation do not matter), the GeoNames name or, for places of 100,000 people or more, one of
/// their Latin-script alternate names ("Munich", "München", "Muenchen"). Text after a comma
/// qualifies the name: a country (name, ISO code, common English alias such as "UK"), a
/// first-level area (name or GeoNames code, so "IL" for Illinois) or a second-level area
/// ("Paris, Texas", "Springfield, IL", "Cambridge, UK"); without commas, the last one or two words
/// may be the qualifier ("Paris Texas"). Countries named by the whole text come first, then places,
/// then first-level areas (located at their most populous place); within each, those inside the
/// preferred region first, then by population, largest first; at most 10. When nothing matches,
/// leading comma-separated parts (a street, a house number) are dropped one by one, and an answer
/// found so is marked partial.
package final class Gazetteer: PlaceGeocoder {
  /// The mapped file.
  package let file: GazetteerFile
  /// The places, as a k-d tree.
  package let tree: PlaceTree
  /// The country outlines' cell index.
  package let land: GazetteerCells
  /// The seas' cell index.
  package let sea: GazetteerCells
  let strings: ByteRegion
  let countries: ByteRegion
  let admin1: ByteRegion
  let admin2: ByteRegion
  let timeZones: ByteRegion
  let landRegions: ByteRegion
  let seaRegions: ByteRegion
  let nameHashes: ByteRegion
  let namePlaces: ByteRegion
  let sections: ByteRegion
  private let localizedCountries = LocalizedCountryNames()
  private let countryKeys = CountryKeys()

  /// How far a place may be from the point and still be its `locality`, in metres.
  static let localityRadius = 50_000.0
  /// How far at sea a place lends the point its country, in metres (12 nautical miles).
  static let territorialSea = 22_224.0
  /// The squared chord between unit vectors `metres` apart on the sphere of the mean radius.
  static func chord2(metres: Double) -> Double {
    let chord = 2 * sin(metres / (2 * 6_371_008.8))
    return chord * chord
  }
  static let localityChord2 = chord2(metres: localityRadius)
  static let territorialChord2 = chord2(metres: territorialSea)

  /// The most answers a forward request gives.
  static let maximumAnswers = 10

  /// A gazetteer over a mapped file.
  ///
  /// - Parameter file: The file.
  package init(file: GazetteerFile) {
    self.file = file
    tree = PlaceTree(places: file.section("PLAC"))
    land = GazetteerCells(file: file, prefix: "LI")
    sea = GazetteerCells(file: file, prefix: "SI")
    strings = file.section("STRS")
    countries = file.section("CTRY")
    admin1 = file.section("ADM1")
    admin2 = file.section("ADM2")
    timeZones = file.section("TZID")
    landRegions = file.section("LRGN")
    seaRegions = file.section("SRGN")
    nameHashes = file.section("NAMH")
    namePlaces = file.section("NAMP")
    sections = file.section("SECT")
  }

  /// Opens the gazetteer file at `path`.
  ///
  /// - Parameter path: The file.
  /// - Throws: `GeocodingError` with code `.dataUnavailable`.
  package convenience init(path: String) throws(GeocodingError) {
    self.init(file: try GazetteerFile(path: path))
  }

  // MARK: Finding the file

  /// Where the gazetteer file is looked for, in order: `CORELOCATION_GAZETTEER` alone when it is
  /// set; else `share/corelocation/gazetteer.clgz` beside the program's directory (an
  /// installation under a prefix), `/usr/local/share/corelocation/`, `/usr/share/corelocation/`,
  /// and the copy in this package's source tree (`Data/gazetteer/`).
  ///
  /// - Parameters:
  ///   - environment: The process environment.
  ///   - executable: The running program's path.
  /// - Returns: The paths to try.
  package static func candidatePaths(environment: [String: String], executable: String?)
    -> [String]
  {
    if let configured = environment["CORELOCATION_GAZETTEER"], !configured.isEmpty {
      return [configured]
    }
    var paths: [String] = []
    if let executable {
      let directory = URL(fileURLWithPath: executable).deletingLastPathComponent()
      paths.append(
        directory.deletingLastPathComponent().appendingPathComponent(
          "share/corelocation/gazetteer.clgz"
        ).path)
    }
    paths.append("/usr/local/share/corelocation/gazetteer.clgz")
    paths.append("/usr/share/corelocation/gazetteer.clgz")
    paths.append(repositoryCopy)
    return paths
  }

  /// The file in this package's source tree, found from this source file's path.
  package static var repositoryCopy: String {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent("Data/gazetteer/gazetteer.clgz").path
  }

  /// The running program's path for finding `share/corelocation` beside it: `/proc/self/exe`
  /// (right however the program was started: through `PATH`, where `argv[0]` has no directory,
  /// or through a symbolic link from another prefix), else `argv[0]`.
  static func runningExecutable() -> String? {
    var buffer = [CChar](repeating: 0, count: 4096)
    let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    if count > 0 {
      return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
    return CommandLine.arguments.first.map { URL(fileURLWithPath: $0).path }
  }

  /// The process's gazetteer, mapped at first use from the first candidate path that exists.
  package static let shared: Result<Gazetteer, GeocodingError> = {
    let candidates = candidatePaths(
      environment: ProcessInfo.processInfo.environment, executable: runningExecutable())
    var failures: [String] = []
    for path in candidates {
      guard FileManager.default.fileExists(atPath: path) || candidates.count == 1 else { continue }
      do throws(GeocodingError) {
        return .success(try Gazetteer(path: path))
      } catch {
        failures.append(error.message)
      }
    }
    let reason =
      failures.isEmpty
      ? "no gazetteer file (looked in \(candidates.joined(separator: ", ")))"
      : failures.joined(separator: "; ")
    return .failure(GeocodingError(.dataUnavailable, reason))
  }()

  // MARK: Records

  private func string(_ offset: UInt32) -> String? {
    let text = strings.string(Int(offset))
    return text.isEmpty ? nil : text
  }

  private func placeRecord(_ index: Int) -> Int { index * GazetteerFormat.placeSize }

  /// The number of places in the file.
  package var placeCount: Int { tree.count }

  /// The ISO code of the place's country.
  package func placeCountryCode(_ index: Int) -> String? { countryCode(placeCountry(index)) }

  /// The place's location in degrees, from its stored unit vector.
  package func placeCoordinate(_ index: Int) -> (latitude: Double, longitude: Double) {
    let x = tree.coordinate(index, 0)
    let y = tree.coordinate(index, 1)
    let z = tree.coordinate(index, 2)
    let latitude = atan2(z, (x * x + y * y).squareRoot()) * 180 / .pi
    let longitude = atan2(y, x) * 180 / .pi
    // GeoNames gives five decimals; the single-precision vector holds about seven.
    return ((latitude * 1e5).rounded() / 1e5, (longitude * 1e5).rounded() / 1e5)
  }

  /// The place's name.
  package func placeName(_ index: Int) -> String? {
    string(tree.places.u32(placeRecord(index) + 12))
  }

  /// The place's population.
  func placePopulation(_ index: Int) -> Int {
    Int(tree.places.u32(placeRecord(index) + 16))
  }

  private func placeCountry(_ index: Int) -> Int { Int(tree.places.u16(placeRecord(index) + 26)) }
  private func placeAdmin1(_ index: Int) -> Int { Int(tree.places.u16(placeRecord(index) + 20)) }
  private func placeAdmin2(_ index: Int) -> Int { Int(tree.places.u16(placeRecord(index) + 22)) }

  private func countryRecord(_ index: Int) -> Int? {
    let record = index * GazetteerFormat.countrySize
    return index >= 0 && record + GazetteerFormat.countrySize <= countries.count ? record : nil
  }

  private func countryCode(_ index: Int) -> String? {
    guard let record = countryRecord(index) else { return nil }
    let first = countries.u8(record)
    let second = countries.u8(record + 1)
    guard first != 0, second != 0 else { return nil }
    var code = String.UnicodeScalarView()
    code.append(Unicode.Scalar(first))
    code.append(Unicode.Scalar(second))
    return String(code)
  }

  private func countryName(_ index: Int, locale: Locale?) -> String? {
    guard let record = countryRecord(index) else { return nil }
    if let locale, let code = countryCode(index),
      let localized = locale.localizedString(forRegionCode: code)
    {
      return localized
    }
    return string(countries.u32(record + 6))
  }

  private func admin1Record(_ index: Int) -> Int? {
    let record = index * GazetteerFormat.admin1Size
    return index >= 0 && record + GazetteerFormat.admin1Size <= admin1.count ? record : nil
  }

  /// Fills in what a place's record says: country, areas, time zone.
  private func describe(place index: Int, into answer: inout GeocodedPlace, locale: Locale?) {
    let record = placeRecord(index)
    let country = placeCountry(index)
    answer.isoCountryCode = countryCode(country)
    answer.country = countryName(country, locale: locale)
    if let areaRecord = admin1Record(placeAdmin1(index)) {
      answer.administrativeArea = string(admin1.u32(areaRecord + 4))
      if answer.isoCountryCode == "US" {
        answer.administrativeAreaCode = string(admin1.u32(areaRecord + 12))
      }
    }
    let county = placeAdmin2(index)
    if county > 0 { answer.subAdministrativeArea = string(admin2.u32(county * 4)) }
    answer.timeZone = string(timeZones.u32(Int(tree.places.u16(record + 24)) * 4))
  }

  /// The city a place is a district of, and the district's name, when it is one (the build
  /// script's rule: a smaller place named after a city of 100,000 or more, or within its rough
  /// extent in the same area).
  func section(of place: Int) -> (city: Int, name: String?)? {
    var low = 0
    var high = sections.count / 12
    while low < high {
      let middle = (low + high) / 2
      let key = Int(sections.u32(middle * 12))
      if key == place {
        let city = Int(sections.u32(middle * 12 + 4))
        guard city < tree.count else { return nil }
        return (city, string(sections.u32(middle * 12 + 8)))
      }
      if key < place { low = middle + 1 } else { high = middle }
    }
    return nil
  }

  /// Sets `locality` and `subLocality` for a place: a district gives its city and its own name.
  private func setLocality(place index: Int, into answer: inout GeocodedPlace) {
    if let section = section(of: index) {
      answer.locality = placeName(section.city)
      answer.subLocality = section.name ?? placeName(index)
    } else {
      answer.locality = placeName(index)
    }
  }

  /// The placemark of a place itself (forward answers).
  private func placemark(place index: Int, locale: Locale?) -> GeocodedPlace {
    let coordinate = placeCoordinate(index)
    var answer = GeocodedPlace(latitude: coordinate.latitude, longitude: coordinate.longitude)
    answer.name = placeName(index)
    setLocality(place: index, into: &answer)
    answer.radius = Double(tree.places.u16(placeRecord(index) + 30)) * 10
    describe(place: index, into: &answer, locale: locale)
    return answer
  }

  // MARK: Reverse

  /// The answer for a point, by the rule in the type's documentation.
  ///
  /// - Parameters:
  ///   - latitude: Degrees, -90...90.
  ///   - longitude: Degrees, -180...180.
  ///   - locale: The language of country names (`nil`: English).
  /// - Returns: One placemark.
  /// - Throws: `GeocodingError` `.noResult` for an invalid coordinate or a point nothing holds.
  package func reverse(latitude: Double, longitude: Double, locale: Locale?) throws(GeocodingError)
    -> [GeocodedPlace]
  {
    guard latitude.isFinite, longitude.isFinite, abs(latitude) <= 90, abs(longitude) <= 180 else {
      throw GeocodingError(.noResult, "the coordinate is not a valid latitude and longitude")
    }
    let target = PlaceTree.unitVector(latitude: latitude, longitude: longitude)
    var answer = GeocodedPlace(latitude: latitude, longitude: longitude)
    let region = land.region(latitude: latitude, longitude: longitude)
    if region != 0 {
      let regionRecord = region * GazetteerFormat.regionSize
      let flags = landRegions.u8(regionRecord + 6)
      if flags & 4 != 0, let nearest = tree.nearest(to: target, inRegion: region) {
        describe(place: nearest.index, into: &answer, locale: locale)
        if nearest.chord2 <= Self.localityChord2 {
          setLocality(place: nearest.index, into: &answer)
        }
      } else {
        let country = Int(landRegions.u16(regionRecord + 4))
        if country != 0xFFFF {
          answer.isoCountryCode = countryCode(country)
          answer.country = countryName(country, locale: locale)
          if let nearest = tree.nearest(to: target, inRegion: nil),
            placeCountry(nearest.index) == country
          {
            describe(place: nearest.index, into: &answer, locale: locale)
          }
        }
      }
      answer.name = answer.locality ?? answer.administrativeArea ?? answer.country
      guard answer.name != nil else {
        throw GeocodingError(.noResult, "the outline that holds the point has no country")
      }
      return [answer]
    }
    let water = sea.region(latitude: latitude, longitude: longitude)
    if water != 0 {
      let record = water * GazetteerFormat.regionSize
      let name = string(seaRegions.u32(record))
      if seaRegions.u8(record + 6) & 2 != 0 {
        answer.inlandWater = name
      } else {
        answer.ocean = name
      }
    }
    if let nearest = tree.nearest(to: target, inRegion: nil),
      nearest.chord2 <= Self.territorialChord2
    {
      describe(place: nearest.index, into: &answer, locale: locale)
    } else if water != 0 {
      answer.timeZone = Self.nauticalTimeZone(longitude: longitude)
    }
    answer.name = answer.ocean ?? answer.inlandWater ?? answer.administrativeArea ?? answer.country
    guard answer.name != nil else {
      throw GeocodingError(.noResult, "no outline or place holds the point")
    }
    return [answer]
  }

  /// The nautical time zone of a longitude: 15° bands centred on multiples of 15°, as the IANA
  /// `Etc/GMT` zones name them (whose signs are POSIX's: `Etc/GMT+5` is five hours behind UTC).
  ///
  /// - Parameter longitude: Degrees, -180...180.
  /// - Returns: `Etc/GMT`, or `Etc/GMT+N` west and `Etc/GMT-N` east of Greenwich.
  package static func nauticalTimeZone(longitude: Double) -> String {
    let hours = Int((longitude / 15).rounded())
    if hours == 0 { return "Etc/GMT" }
    return hours > 0 ? "Etc/GMT-\(hours)" : "Etc/GMT+\(-hours)"
  }

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
  private struct Candidate {
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

  private func match(_ parts: [String], query: AddressQuery, locale: Locale?) -> [GeocodedPlace] {
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
  private func placeVector(_ index: Int) -> SIMD3<Double> {
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
  private func qualifies(place: Int, _ qualifier: String, locale: Locale?) -> Bool {
    let key = Array(qualifier.utf8)
    if let area = admin1Record(placeAdmin1(place)) {
      if strings.stringEquals(Int(admin1.u32(area + 8)), key) { return true }
      if let code = string(admin1.u32(area + 12)), PlaceNameKey.fold(code) == qualifier {
        return true
      }
    }
    let county = placeAdmin2(place)
    if county > 0, let name = string(admin2.u32(county * 4)), PlaceNameKey.fold(name) == qualifier {
      return true
    }
    return countryMatches(placeCountry(place), key: qualifier, locale: locale)
  }

  private func countryMatches(_ index: Int, key: String, locale: Locale?) -> Bool {
    countryKeys.table(self)[key]?.contains(index) ?? false
      || localizedCountryMatches(index, key: key, locale: locale)
  }

  /// Whether `key` is the country's name in the locale's language or in English, from the
  /// system's locale data (only when a locale was given).
  private func localizedCountryMatches(_ index: Int, key: String, locale: Locale?) -> Bool {
    guard locale != nil, let code = countryCode(index) else { return false }
    return localizedCountries.names(for: locale)[key] == code
  }

  /// The countries named by `key`: their GeoNames name, ISO codes, aliases, or (with a locale)
  /// their name in the locale's language or in English.
  private func countries(withKey key: String, locale: Locale?) -> [Int] {
    var found = countryKeys.table(self)[key] ?? []
    if locale != nil, let code = localizedCountries.names(for: locale)[key] {
      for index in 0..<(countries.count / GazetteerFormat.countrySize)
      where countryCode(index) == code && !found.contains(index) {
        found.append(index)
      }
    }
    return found
  }

  /// The keys that name each country: its GeoNames name's key, its ISO alpha-2 and alpha-3 codes
  /// in lower case, and its aliases.
  fileprivate func makeCountryKeys() -> [String: [Int]] {
    var table: [String: [Int]] = [:]
    for index in 0..<(countries.count / GazetteerFormat.countrySize) {
      let record = index * GazetteerFormat.countrySize
      var keys: [String] = []
      if let key = string(countries.u32(record + 10)) { keys.append(key) }
      keys.append(PlaceNameKey.fold(String(decoding: countries.bytes(record, 2), as: UTF8.self)))
      keys.append(
        PlaceNameKey.fold(String(decoding: countries.bytes(record + 2, 3), as: UTF8.self)))
      if let aliases = string(countries.u32(record + 14)) {
        keys += aliases.split(separator: "|").map(String.init)
      }
      for key in Set(keys) where !key.isEmpty { table[key, default: []].append(index) }
    }
    return table
  }

  private func countryPlacemark(_ index: Int, locale: Locale?) -> GeocodedPlace {
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
  private func admin1Areas(withKey key: String) -> [Int] {
    let bytes = Array(key.utf8)
    return (0..<(admin1.count / GazetteerFormat.admin1Size)).filter {
      strings.stringEquals(Int(admin1.u32($0 * GazetteerFormat.admin1Size + 8)), bytes)
    }
  }

  private func areaPlacemark(_ index: Int, locale: Locale?) -> GeocodedPlace? {
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

/// The country key table, made at the first forward request and kept.
private final class CountryKeys: Sendable {
  private let table = Mutex<[String: [Int]]?>(nil)

  func table(_ gazetteer: Gazetteer) -> [String: [Int]] {
    if let made = table.withLock({ $0 }) { return made }
    let made = gazetteer.makeCountryKeys()
    table.withLock { $0 = made }
    return made
  }
}

/// Country names in a locale's language (and English), by key, from Foundation's locale data;
/// made once per locale and kept.
private final class LocalizedCountryNames: Sendable {
  private let cache = Mutex<[String: [String: String]]>([:])

  func names(for locale: Locale?) -> [String: String] {
    let identifier = locale?.identifier ?? "en"
    if let names = cache.withLock({ $0[identifier] }) { return names }
    var names: [String: String] = [:]
    for language in Set([identifier, "en"]) {
      let speaker = Locale(identifier: language)
      for region in Locale.Region.isoRegions where region.identifier.count == 2 {
        if let name = speaker.localizedString(forRegionCode: region.identifier) {
          names[PlaceNameKey.fold(name)] = region.identifier
        }
      }
    }
    cache.withLock { $0[identifier] = names }
    return names
  }
}
