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
  let names: GazetteerNames
  let localizedCountries = LocalizedCountryNames()
  let countryKeys = CountryKeys()

  /// How far a place may be from the point and still be its `locality`, in metres.
  static let localityRadius = 50_000.0
  /// How far at sea a place lends the point its country, in metres (12 nautical miles).
  static let territorialSea = 22_224.0
  /// The squared chord between unit vectors `metres` apart on the sphere of the mean radius.
  static func chord2(metres: Double) -> Double {
    let chord = 2 * sin(metres / (2 * 6_371_008.8))
    return chord * chord
  }
  // Kept per gazetteer rather than as static constants, whose lazy initialization would be
  // checked on every answer.
  let localityChord2 = Gazetteer.chord2(metres: Gazetteer.localityRadius)
  let territorialChord2 = Gazetteer.chord2(metres: Gazetteer.territorialSea)
  /// The squared chord of each clearance code's metres; code 0 (no clearance) is never met.
  let clearanceChord2: [Double] = (0..<64).map {
    $0 == 0 ? -1 : Gazetteer.chord2(metres: Gazetteer.clearanceMetres(code: $0))
  }

  /// The nearest place of all to a point, when the point lies within that place's clearance (so
  /// in the place's land region, of which the place is the nearest: the outlines need not be
  /// read); nil otherwise.
  func withinClearance(_ nearest: (index: Int, chord2: Double)?) -> (index: Int, chord2: Double)? {
    nearest.flatMap { $0.chord2 < clearanceChord2[tree.clearanceCode($0.index)] ? $0 : nil }
  }

  /// Whether a reverse lookup at the point is answered within the nearest place's clearance,
  /// without reading the outlines (`locbench geocode` counts them).
  package func isWithinClearance(latitude: Double, longitude: Double) -> Bool {
    let target = PlaceTree.unitVector(latitude: latitude, longitude: longitude)
    return withinClearance(tree.nearest(to: target, inRegion: nil)) != nil
  }

  /// The clearance a place's code promises: no edge of a land outline is within this many
  /// metres of the place, and the place lies in the land region the file gives it (code 0:
  /// nothing is promised). `scripts/build-gazetteer.py` measures each place's distance to the
  /// nearest edge in the latitude-longitude plane, where the outlines' edges are straight, and
  /// keeps the largest great-circle radius whose every point stays within that distance (and off
  /// the antimeridian), less 20 metres for rounding, rounded down to a code.
  ///
  /// - Parameter code: 1...63.
  /// - Returns: 50 m x 1.15^(code - 1), up to 290 km.
  static func clearanceMetres(code: Int) -> Double {
    50 * pow(1.15, Double(code - 1))
  }

  /// The most answers a forward request gives.
  static let maximumAnswers = 10

  /// A gazetteer over a mapped file.
  ///
  /// - Parameter file: The file.
  package init(file: GazetteerFile) {
    self.file = file
    tree = PlaceTree(places: file.section("PLAC"), top: file.section("TOPS"))
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
    names = GazetteerNames(strings: strings, countries: countries, timeZones: timeZones)
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

  func string(_ offset: UInt32) -> String? {
    let text = strings.string(Int(offset))
    return text.isEmpty ? nil : text
  }

  func placeRecord(_ index: Int) -> Int { index * GazetteerFormat.placeSize }

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
    Int(placePopulationField(index) & ~Self.districtFlag)
  }

  /// The place record's population field: the population, and `districtFlag`.
  func placePopulationField(_ index: Int) -> UInt32 { tree.places.u32(placeRecord(index) + 16) }

  /// The bit of a place record's population that marks a district (a key of the section table).
  static let districtFlag: UInt32 = 1 << 31

  func placeCountry(_ index: Int) -> Int { Int(tree.places.u16(placeRecord(index) + 26)) }
  func placeAdmin1(_ index: Int) -> Int { Int(tree.places.u16(placeRecord(index) + 20)) }
  func placeAdmin2(_ index: Int) -> Int { Int(tree.places.u16(placeRecord(index) + 22)) }

  func countryRecord(_ index: Int) -> Int? {
    let record = index * GazetteerFormat.countrySize
    return index >= 0 && record + GazetteerFormat.countrySize <= countries.count ? record : nil
  }

  func countryCode(_ index: Int) -> String? { GazetteerNames.lookup(names.countryCodes, index) }

  func countryName(_ index: Int, locale: Locale?) -> String? {
    if let locale, let code = countryCode(index),
      let localized = locale.localizedString(forRegionCode: code)
    {
      return localized
    }
    return GazetteerNames.lookup(names.countryNames, index)
  }

  func admin1Record(_ index: Int) -> Int? {
    let record = index * GazetteerFormat.admin1Size
    return index >= 0 && record + GazetteerFormat.admin1Size <= admin1.count ? record : nil
  }

  /// The name of a second-level area (0: none).
  func admin2Name(_ index: Int) -> String? {
    index > 0 ? string(admin2.u32(index * 4)) : nil
  }

  /// Starts fetching what answering with a place reads beyond its record (its name, its areas'
  /// records), so that it arrives while the search goes on (the place is the first leaf's best,
  /// nearly always the answer) rather than one line after another.
  func prefetchNames(place index: Int) {
    let record = placeRecord(index)
    strings.prefetch(Int(tree.places.u32(record + 12)))
    admin1.prefetch(Int(tree.places.u16(record + 20)) * GazetteerFormat.admin1Size + 4)
    admin2.prefetch(Int(tree.places.u16(record + 22)) * 4)
  }

  /// Starts fetching the areas' names, once `prefetchNames(place:)` has brought their records:
  /// they arrive while the place's own name is decoded.
  func prefetchAreaNames(place index: Int) {
    let record = placeRecord(index)
    if let area = admin1Record(Int(tree.places.u16(record + 20))) {
      strings.prefetch(Int(admin1.u32(area + 4)))
    }
    strings.prefetch(Int(admin2.u32(Int(tree.places.u16(record + 22)) * 4)))
  }

  /// Fills in what a place's record says: country, areas, time zone.
  func describe(place index: Int, into answer: inout GeocodedPlace, locale: Locale?) {
    let record = placeRecord(index)
    let country = placeCountry(index)
    let area = placeAdmin1(index)
    let county = placeAdmin2(index)
    let zone = Int(tree.places.u16(record + 24))
    answer.isoCountryCode = countryCode(country)
    answer.country = countryName(country, locale: locale)
    if let areaRecord = admin1Record(area) {
      answer.administrativeArea = string(admin1.u32(areaRecord + 4))
      if country == names.unitedStates {
        answer.administrativeAreaCode = string(admin1.u32(areaRecord + 12))
      }
    }
    answer.subAdministrativeArea = admin2Name(county)
    answer.timeZone = GazetteerNames.lookup(names.timeZones, zone)
  }

  /// The city a place is a district of, and the district's name, when it is one (the build
  /// script's rule: a smaller place named after a city of 100,000 or more, or within its rough
  /// extent in the same area).
  func section(of place: Int) -> (city: Int, name: String?)? {
    // Most places are not districts: the flag spares them the binary search, whose steps land on
    // pages of the mapping far apart.
    guard placePopulationField(place) & Self.districtFlag != 0 else { return nil }
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
  func setLocality(place index: Int, into answer: inout GeocodedPlace) {
    if let section = section(of: index) {
      answer.locality = placeName(section.city)
      answer.subLocality = section.name ?? placeName(index)
    } else {
      answer.locality = placeName(index)
    }
  }

  /// The placemark of a place itself (forward answers).
  func placemark(place index: Int, locale: Locale?) -> GeocodedPlace {
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
    // The places the search reads first are fetched while the answer is allocated and the
    // outline looked up.
    let target = PlaceTree.unitVector(latitude: latitude, longitude: longitude)
    let leaf = tree.firstLeaf(of: target)
    tree.prefetch(leaf)
    // The answer is filled in where it is returned, not copied there.
    var answers = [GeocodedPlace(latitude: latitude, longitude: longitude)]
    try answer(
      latitude: latitude, longitude: longitude, target: target, leaf: leaf, locale: locale,
      into: &answers[0])
    return answers
  }

  private func answer(
    latitude: Double, longitude: Double, target: SIMD3<Double>, leaf: Range<Int>, locale: Locale?,
    into answer: inout GeocodedPlace
  ) throws(GeocodingError) {
    // The nearest place of all first: when the point lies within the place's clearance, the
    // straight way from the place to the point crosses no outline, so the point lies in the
    // place's land region, and the place, nearest of all, is the nearest of that region. The
    // outlines are not looked at then (most points near a place).
    let nearestOfAll = tree.nearest(
      to: target, inRegion: nil, leaf: leaf, early: { prefetchNames(place: $0) })
    let cleared = withinClearance(nearestOfAll)
    let region =
      cleared.map { tree.region($0.index) }
      ?? land.region(latitude: latitude, longitude: longitude)
    if region != 0 {
      let regionRecord = region * GazetteerFormat.regionSize
      let flags = landRegions.u8(regionRecord + 6)
      if flags & 4 != 0,
        let nearest = cleared
          ?? tree.nearest(
            to: target, inRegion: region, leaf: leaf, early: { prefetchNames(place: $0) })
      {
        prefetchAreaNames(place: nearest.index)
        if nearest.chord2 <= localityChord2 {
          setLocality(place: nearest.index, into: &answer)
        }
        describe(place: nearest.index, into: &answer, locale: locale)
      } else {
        let country = Int(landRegions.u16(regionRecord + 4))
        if country != 0xFFFF {
          answer.isoCountryCode = countryCode(country)
          answer.country = countryName(country, locale: locale)
          if let nearest = nearestOfAll, placeCountry(nearest.index) == country {
            describe(place: nearest.index, into: &answer, locale: locale)
          }
        }
      }
      answer.name = answer.locality ?? answer.administrativeArea ?? answer.country
      guard answer.name != nil else {
        throw GeocodingError(.noResult, "the outline that holds the point has no country")
      }
      return
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
    if let nearest = nearestOfAll, nearest.chord2 <= territorialChord2 {
      describe(place: nearest.index, into: &answer, locale: locale)
    } else if water != 0 {
      answer.timeZone = Self.nauticalTimeZone(longitude: longitude)
    }
    answer.name = answer.ocean ?? answer.inlandWater ?? answer.administrativeArea ?? answer.country
    guard answer.name != nil else {
      throw GeocodingError(.noResult, "no outline or place holds the point")
    }
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
}

/// The country key table, made at the first forward request and kept.
final class CountryKeys: Sendable {
  let table = Mutex<CountryKeyTable?>(nil)

  func table(_ gazetteer: Gazetteer) -> CountryKeyTable {
    if let made = table.withLock({ $0 }) { return made }
    let made = CountryKeyTable(gazetteer.makeCountryKeys())
    table.withLock { $0 = made }
    return made
  }
}

/// The keys that name countries, sorted, in one byte array: about 1,000 keys in 16 KB of heap,
/// where a dictionary of strings to arrays held 120 KB.
struct CountryKeyTable: Sendable {
  private struct Entry {
    var start: UInt32
    var length: UInt16
    var country: UInt16
  }
  private let bytes: [UInt8]
  /// Sorted by the key's bytes, then by country.
  private let entries: [Entry]

  /// - Parameter pairs: Each key (a `PlaceNameKey`) with a country record it names.
  init(_ pairs: [(key: String, country: Int)]) {
    let sorted = pairs.map { (Array($0.key.utf8), $0.country) }.sorted {
      $0.0 == $1.0 ? $0.1 < $1.1 : $0.0.lexicographicallyPrecedes($1.0)
    }
    var bytes: [UInt8] = []
    var entries: [Entry] = []
    for (key, country) in sorted where key.count <= Int(UInt16.max) && country <= Int(UInt16.max) {
      entries.append(
        Entry(start: UInt32(bytes.count), length: UInt16(key.count), country: UInt16(country)))
      bytes += key
    }
    self.bytes = bytes
    self.entries = entries
  }

  /// The countries that `key` names, in record order.
  func countries(_ key: String) -> [Int] {
    let key = Array(key.utf8)
    func entryKey(_ index: Int) -> ArraySlice<UInt8> {
      let start = Int(entries[index].start)
      return bytes[start..<start + Int(entries[index].length)]
    }
    var low = 0
    var high = entries.count
    while low < high {
      let middle = (low + high) / 2
      if entryKey(middle).lexicographicallyPrecedes(key) { low = middle + 1 } else { high = middle }
    }
    var found: [Int] = []
    while low < entries.count, entryKey(low).elementsEqual(key) {
      found.append(Int(entries[low].country))
      low += 1
    }
    return found
  }
}

/// Country names in a locale's language (and English), by key, from Foundation's locale data;
/// made once per locale and kept.
final class LocalizedCountryNames: Sendable {
  let cache = Mutex<[String: [String: String]]>([:])

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
