import Foundation
import Geocoding
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A client of a Nominatim server's `/reverse` and `/search` JSON API (format `jsonv2`), for
/// those who run one (`CORELOCATION_GEOCODER=https://nominatim.example.org/`).
///
/// As Nominatim's usage policy asks, every request names the program in its `User-Agent`, and at
/// most one request a second is sent (`minimumInterval`): a request sooner than that after the
/// previous one is answered by the fallback (the offline gazetteer), or fails with
/// `.network` when there is none. When the server cannot be reached, does not answer within
/// `timeout`, answers with an HTTP error or with something that is not its JSON, the fallback
/// answers too; so does it when `/reverse` finds nothing there (at sea, say), since the gazetteer
/// still knows the sea or the country. A `/search` that finds nothing is `.noResult`.
///
/// Nominatim's address fields map onto the placemark's: `house_number` is `subThoroughfare`;
/// `road` (or `pedestrian`, `footway`, `path`, `square`) `thoroughfare`; `city`, `town`,
/// `village`, `hamlet` or `municipality` `locality`; `suburb`, `city_district`, `quarter` or
/// `neighbourhood` `subLocality`; `state`, `region` or `province` `administrativeArea`; `county`
/// or `state_district` `subAdministrativeArea`; `postcode` `postalCode`; `country` and
/// `country_code` the country. A result of category `natural`/`waterway` named a sea, bay or
/// strait gives `ocean`, a lake, river or reservoir `inlandWater`; a named amenity, tourism,
/// leisure, historic, building or shop the `areasOfInterest`. The bounding box gives the region
/// (its half diagonal), and the time zone comes from the offline gazetteer at the result's
/// position.
package final class NominatimGeocoder: PlaceGeocoder {
  /// The server's base URL (`/reverse` and `/search` are appended to its path).
  package let server: URL
  private let fallback: (any PlaceGeocoder)?
  private let userAgent: String
  /// The least time between two requests to the server, in seconds.
  package let minimumInterval: Double
  /// How long a request may take, in seconds.
  package let timeout: Double
  private let lastRequest = Mutex<Double?>(nil)
  private let session: URLSession

  /// Creates a client.
  ///
  /// - Parameters:
  ///   - server: The server's base URL.
  ///   - fallback: What answers when the server does not (normally the offline gazetteer).
  ///   - userAgent: The `User-Agent` header.
  ///   - minimumInterval: Seconds between requests; 1 by Nominatim's usage policy.
  ///   - timeout: Seconds a request may take.
  package init(
    server: URL, fallback: (any PlaceGeocoder)?, userAgent: String, minimumInterval: Double = 1,
    timeout: Double = 10
  ) {
    self.server = server
    self.fallback = fallback
    self.userAgent = userAgent
    self.minimumInterval = minimumInterval
    self.timeout = timeout
    let configuration = URLSessionConfiguration.ephemeral
    configuration.timeoutIntervalForRequest = timeout
    configuration.timeoutIntervalForResource = timeout
    configuration.urlCache = nil
    session = URLSession(configuration: configuration)
  }

  deinit {
    session.invalidateAndCancel()
  }

  /// `CoreLocation-for-Linux/1 (PROGRAM; CLGeocoder)`: the program is the running executable's
  /// name, so the server's operator can tell its users apart.
  package static func defaultUserAgent() -> String {
    let program = CommandLine.arguments.first.map { URL(fileURLWithPath: $0).lastPathComponent }
    return "CoreLocation-for-Linux/1 (\(program ?? "unknown"); CLGeocoder)"
  }

  // MARK: Requests

  package func reverse(latitude: Double, longitude: Double, locale: Locale?) throws(GeocodingError)
    -> [GeocodedPlace]
  {
    guard latitude.isFinite, longitude.isFinite, abs(latitude) <= 90, abs(longitude) <= 180 else {
      throw GeocodingError(.noResult, "the coordinate is not a valid latitude and longitude")
    }
    var items = [
      URLQueryItem(name: "format", value: "jsonv2"),
      URLQueryItem(name: "addressdetails", value: "1"),
      URLQueryItem(name: "lat", value: String(latitude)),
      URLQueryItem(name: "lon", value: String(longitude)),
    ]
    if let language = Self.language(locale) {
      items.append(URLQueryItem(name: "accept-language", value: language))
    }
    let answer: [GeocodedPlace]
    do throws(GeocodingError) {
      let json = try fetch("reverse", items, language: Self.language(locale))
      guard let object = json as? [String: Any] else {
        throw GeocodingError(.network, "the server's /reverse answer is not a JSON object")
      }
      if object["error"] != nil {
        throw GeocodingError(.noResult, "the server found no address there")
      }
      guard let place = Self.place(from: object) else {
        throw GeocodingError(.network, "the server's /reverse answer has no position")
      }
      answer = [place]
    } catch {
      guard let fallback, error.code != .canceled else { throw error }
      return try fallback.reverse(latitude: latitude, longitude: longitude, locale: locale)
    }
    return answer.map { withTimeZone($0) }
  }

  package func forward(_ query: AddressQuery, locale: Locale?) throws(GeocodingError)
    -> [GeocodedPlace]
  {
    guard !query.singleLine.trimmingCharacters(in: .whitespaces).isEmpty,
      query.singleLine.count <= 512
    else {
      throw GeocodingError(.noResult, "the query is empty or too long")
    }
    var items = [
      URLQueryItem(name: "format", value: "jsonv2"),
      URLQueryItem(name: "addressdetails", value: "1"),
      URLQueryItem(name: "limit", value: "10"),
    ]
    if let text = query.text {
      items.append(URLQueryItem(name: "q", value: text))
    } else {
      let fields: [(String, String?)] = [
        ("street", query.street), ("city", query.city), ("county", query.subAdministrativeArea),
        ("state", query.state), ("postalcode", query.postalCode),
        ("country", query.country ?? query.isoCountryCode),
      ]
      for (name, value) in fields where value?.isEmpty == false {
        items.append(URLQueryItem(name: name, value: value))
      }
    }
    if let region = query.preferredRegion {
      // A box around the circle: preferred, not a bound (bounded=0).
      let dLat = min(region.radius / 111_320, 89)
      let dLon = min(dLat / max(cos(region.latitude * .pi / 180), 0.01), 179)
      let box = [
        region.longitude - dLon, region.latitude + dLat, region.longitude + dLon,
        region.latitude - dLat,
      ]
      items.append(
        URLQueryItem(name: "viewbox", value: box.map { String($0) }.joined(separator: ",")))
      items.append(URLQueryItem(name: "bounded", value: "0"))
    }
    if let language = Self.language(locale) {
      items.append(URLQueryItem(name: "accept-language", value: language))
    }
    let results: [GeocodedPlace]
    do throws(GeocodingError) {
      let json = try fetch("search", items, language: Self.language(locale))
      guard let array = json as? [Any] else {
        throw GeocodingError(.network, "the server's /search answer is not a JSON array")
      }
      results = array.compactMap { ($0 as? [String: Any]).flatMap(Self.place(from:)) }
      guard results.count == array.count else {
        throw GeocodingError(.network, "the server's /search answer has results without a position")
      }
    } catch {
      guard let fallback, error.code != .canceled else { throw error }
      return try fallback.forward(query, locale: locale)
    }
    guard !results.isEmpty else { throw GeocodingError(.noResult, "the server found no place") }
    return results.map { withTimeZone($0) }
  }

  /// The answer with the offline gazetteer's time zone at its position.
  private func withTimeZone(_ place: GeocodedPlace) -> GeocodedPlace {
    var place = place
    if place.timeZone == nil, let fallback,
      let local = try? fallback.reverse(
        latitude: place.latitude, longitude: place.longitude, locale: nil
      ).first
    {
      place.timeZone = local.timeZone
    }
    return place
  }

  private static func language(_ locale: Locale?) -> String? {
    guard let locale else { return nil }
    return locale.identifier.replacingOccurrences(of: "_", with: "-")
  }

  // MARK: HTTP

  /// Admits a request under the rate limit: at most one per `minimumInterval`.
  private func admit() -> Bool {
    let now = Self.monotonicSeconds()
    return lastRequest.withLock { last in
      if let previous = last, now - previous < minimumInterval { return false }
      last = now
      return true
    }
  }

  private static func monotonicSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
  }

  /// GETs `path` with `items` and parses the JSON body.
  private func fetch(_ path: String, _ items: [URLQueryItem], language: String?)
    throws(GeocodingError) -> Any
  {
    guard admit() else {
      throw GeocodingError(.network, "more than one request a second to the geocoding server")
    }
    guard var components = URLComponents(url: server, resolvingAgainstBaseURL: false) else {
      throw GeocodingError(.network, "the geocoding server URL is not valid")
    }
    components.path =
      (components.path.hasSuffix("/") ? components.path : components.path + "/")
      + path
    components.queryItems = items
    guard let url = components.url else {
      throw GeocodingError(.network, "the geocoding request URL is not valid")
    }
    var request = URLRequest(url: url, timeoutInterval: timeout)
    request.setValue(userAgent, forHTTPHeaderField: "User-Agent")
    request.setValue("application/json", forHTTPHeaderField: "Accept")
    if let language { request.setValue(language, forHTTPHeaderField: "Accept-Language") }
    let outcome = Mutex<Result<(Data, Int), GeocodingError>?>(nil)
    let done = DispatchSemaphore(value: 0)
    let task = session.dataTask(with: request) { data, response, error in
      let result: Result<(Data, Int), GeocodingError>
      if let error {
        result = .failure(
          GeocodingError(
            .network, "the geocoding server did not answer: \(error.localizedDescription)"))
      } else {
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        result = .success((data ?? Data(), status))
      }
      outcome.withLock { $0 = result }
      done.signal()
    }
    task.resume()
    if done.wait(timeout: .now() + timeout + 1) == .timedOut {
      task.cancel()
      throw GeocodingError(.network, "the geocoding server did not answer in \(Int(timeout)) s")
    }
    guard let result = outcome.withLock({ $0 }) else {
      throw GeocodingError(.network, "the geocoding request ended without an answer")
    }
    let (data, status) = try result.get()
    guard status == 200 else {
      throw GeocodingError(.network, "the geocoding server answered HTTP \(status)")
    }
    do {
      return try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
    } catch {
      throw GeocodingError(.network, "the geocoding server's answer is not JSON")
    }
  }

  // MARK: Mapping

  private static let roadKeys = ["road", "pedestrian", "footway", "path", "square", "cycleway"]
  private static let localityKeys = ["city", "town", "village", "hamlet", "municipality"]
  private static let subLocalityKeys = ["suburb", "city_district", "quarter", "neighbourhood"]
  private static let areaKeys = ["state", "region", "province"]
  private static let subAreaKeys = ["county", "state_district"]
  private static let interestCategories: Set<String> = [
    "amenity", "tourism", "leisure", "historic", "building", "shop", "aeroway", "railway",
  ]
  private static let seaTypes: Set<String> = ["sea", "ocean", "bay", "strait", "coastline"]
  private static let inlandTypes: Set<String> = ["water", "lake", "river", "reservoir", "canal"]

  /// A placemark from one result object of Nominatim's JSON or JSONv2 output.
  static func place(from object: [String: Any]) -> GeocodedPlace? {
    guard let latitude = number(object["lat"]), let longitude = number(object["lon"]),
      latitude.isFinite, longitude.isFinite, abs(latitude) <= 90, abs(longitude) <= 180
    else { return nil }
    var place = GeocodedPlace(latitude: latitude, longitude: longitude)
    let address = object["address"] as? [String: Any] ?? [:]
    func first(_ keys: [String]) -> String? {
      for key in keys {
        if let value = address[key] as? String, !value.isEmpty { return value }
      }
      return nil
    }
    place.subThoroughfare = first(["house_number"])
    place.thoroughfare = first(roadKeys)
    place.locality = first(localityKeys)
    place.subLocality = first(subLocalityKeys)
    place.administrativeArea = first(areaKeys)
    place.subAdministrativeArea = first(subAreaKeys)
    place.postalCode = first(["postcode"])
    place.country = first(["country"])
    place.isoCountryCode = first(["country_code"])?.uppercased()
    if place.isoCountryCode == "US", let code = first(["ISO3166-2-lvl4"]),
      code.hasPrefix("US-")
    {
      place.administrativeAreaCode = String(code.dropFirst(3))
    }
    let category = (object["category"] as? String) ?? (object["class"] as? String) ?? ""
    let type = object["type"] as? String ?? ""
    let displayName = object["display_name"] as? String
    let name =
      (object["name"] as? String).flatMap { $0.isEmpty ? nil : $0 }
      ?? displayName?.split(separator: ",").first.map {
        String($0).trimmingCharacters(in: .whitespaces)
      }
    if category == "natural" || category == "waterway" || category == "water" {
      if seaTypes.contains(type) { place.ocean = name }
      if inlandTypes.contains(type) { place.inlandWater = name }
    }
    if interestCategories.contains(category), let name, name != place.thoroughfare {
      place.areasOfInterest = [name]
    }
    place.name = name ?? place.locality
    if let box = object["boundingbox"] as? [Any], box.count == 4 {
      let values = box.compactMap(number)
      if values.count == 4 {
        let south = values[0]
        let north = values[1]
        let west = values[2]
        let east = values[3]
        let height = (north - south) * 111_320
        let width = (east - west) * 111_320 * cos(latitude * .pi / 180)
        let radius = (height * height + width * width).squareRoot() / 2
        if radius.isFinite, radius > 0 { place.radius = radius }
      }
    }
    return place
  }

  private static func number(_ value: Any?) -> Double? {
    if let text = value as? String { return Double(text) }
    if let number = value as? NSNumber { return number.doubleValue }
    return nil
  }
}
