import CoreLocation
import Foundation
internal import Geocoding
import Synchronization

/// A place that a simulated world's geocoder knows, with the fields a `CLPlacemark` will have.
public struct SimulatedPlacemark: Sendable {
  /// Where the place is.
  public var coordinate: CLLocationCoordinate2D
  /// The radius in metres of the circle the place covers: reverse requests inside it are answered
  /// with this place (1,000 m when `nil`), and it is the placemark's region.
  public var radius: CLLocationDistance?
  /// The placemark's `name` (its locality when `nil`).
  public var name: String?
  /// The street.
  public var thoroughfare: String?
  /// The house number.
  public var subThoroughfare: String?
  /// The city.
  public var locality: String?
  /// The district.
  public var subLocality: String?
  /// The state or province.
  public var administrativeArea: String?
  /// The county or district.
  public var subAdministrativeArea: String?
  /// The postal code.
  public var postalCode: String?
  /// The ISO 3166-1 alpha-2 country code.
  public var isoCountryCode: String?
  /// The country's name.
  public var country: String?
  /// The inland water body.
  public var inlandWater: String?
  /// The ocean or sea.
  public var ocean: String?
  /// Points of interest.
  public var areasOfInterest: [String]?
  /// An IANA time zone identifier.
  public var timeZone: String?

  /// Creates a place; every field but the coordinate is optional.
  public init(
    coordinate: CLLocationCoordinate2D, radius: CLLocationDistance? = nil, name: String? = nil,
    thoroughfare: String? = nil, subThoroughfare: String? = nil, locality: String? = nil,
    subLocality: String? = nil, administrativeArea: String? = nil,
    subAdministrativeArea: String? = nil, postalCode: String? = nil,
    isoCountryCode: String? = nil, country: String? = nil, inlandWater: String? = nil,
    ocean: String? = nil, areasOfInterest: [String]? = nil, timeZone: String? = nil
  ) {
    self.coordinate = coordinate
    self.radius = radius
    self.name = name
    self.thoroughfare = thoroughfare
    self.subThoroughfare = subThoroughfare
    self.locality = locality
    self.subLocality = subLocality
    self.administrativeArea = administrativeArea
    self.subAdministrativeArea = subAdministrativeArea
    self.postalCode = postalCode
    self.isoCountryCode = isoCountryCode
    self.country = country
    self.inlandWater = inlandWater
    self.ocean = ocean
    self.areasOfInterest = areasOfInterest
    self.timeZone = timeZone
  }

  var geocodedPlace: GeocodedPlace {
    var place = GeocodedPlace(latitude: coordinate.latitude, longitude: coordinate.longitude)
    place.radius = radius ?? 1_000
    place.name = name ?? locality
    place.thoroughfare = thoroughfare
    place.subThoroughfare = subThoroughfare
    place.locality = locality
    place.subLocality = subLocality
    place.administrativeArea = administrativeArea
    place.subAdministrativeArea = subAdministrativeArea
    place.postalCode = postalCode
    place.isoCountryCode = isoCountryCode
    place.country = country
    place.inlandWater = inlandWater
    place.ocean = ocean
    place.areasOfInterest = areasOfInterest
    place.timeZone = timeZone
    return place
  }
}

/// A request that a `CLGeocoder` made in a simulated world.
public enum SimulatedGeocodeRequest: Sendable, Equatable {
  /// A reverse request for a coordinate.
  case reverse(latitude: CLLocationDegrees, longitude: CLLocationDegrees)
  /// A forward request, as one line of text (a postal address's parts joined by ", ").
  case forward(String)
}

/// The geocoder of a simulated world: what every `CLGeocoder` created or used inside the world
/// answers.
///
/// With no placemarks set (the default), the offline gazetteer answers, as outside a simulation.
/// With placemarks: a reverse request gets the nearest placemark whose circle (`radius`) holds
/// the point; a forward request gets, in the order given, the placemarks whose name, locality,
/// sub-locality, administrative area, country, ISO code or postal code matches the text before
/// the first comma (case and diacritics do not matter). No match is
/// `CLError.geocodeFoundNoResult`. `failRequests(with:)` makes every request fail instead.
/// Answers are delivered when the world is driven (`pump()`, `advance(by:)`).
public final class SimulatedGeocoder: Sendable {
  private struct State {
    var placemarks: [SimulatedPlacemark] = []
    var failure: CLError.Code?
    var requests: [SimulatedGeocodeRequest] = []
  }

  private let state = Mutex(State())

  init() {}

  /// Sets the places the world knows (an empty array returns to the offline gazetteer).
  ///
  /// - Parameter placemarks: The places.
  public func setPlacemarks(_ placemarks: [SimulatedPlacemark]) {
    state.withLock { $0.placemarks = placemarks }
  }

  /// Makes every request fail with `code` (`.network`, `.geocodeFoundNoResult`, ...), or, with
  /// `nil`, answer again.
  ///
  /// - Parameter code: The error code, or `nil`.
  public func failRequests(with code: CLError.Code?) {
    state.withLock { $0.failure = code }
  }

  /// The requests made so far, oldest first.
  public var requests: [SimulatedGeocodeRequest] { state.withLock { $0.requests } }

  var adapter: any PlaceGeocoder { Adapter(owner: self) }

  private struct Adapter: PlaceGeocoder {
    let owner: SimulatedGeocoder

    func reverse(latitude: Double, longitude: Double, locale: Locale?) throws(GeocodingError)
      -> [GeocodedPlace]
    {
      let (placemarks, failure) = owner.state.withLock { state in
        state.requests.append(.reverse(latitude: latitude, longitude: longitude))
        return (state.placemarks, state.failure)
      }
      if let failure { throw Self.error(failure) }
      guard !placemarks.isEmpty else {
        return try OfflineGeocoder().reverse(
          latitude: latitude, longitude: longitude, locale: locale)
      }
      let point = CLLocation(latitude: latitude, longitude: longitude)
      let near = placemarks.map { placemark -> (SimulatedPlacemark, Double) in
        let centre = CLLocation(
          latitude: placemark.coordinate.latitude, longitude: placemark.coordinate.longitude)
        return (placemark, point.distance(from: centre))
      }
      .filter { $0.1 <= ($0.0.radius ?? 1_000) }
      .sorted { $0.1 < $1.1 }
      guard let nearest = near.first else {
        throw GeocodingError(.noResult, "no simulated placemark holds the point")
      }
      return [nearest.0.geocodedPlace]
    }

    func forward(_ query: AddressQuery, locale: Locale?) throws(GeocodingError) -> [GeocodedPlace] {
      let line = query.singleLine
      let (placemarks, failure) = owner.state.withLock { state in
        state.requests.append(.forward(line))
        return (state.placemarks, state.failure)
      }
      if let failure { throw Self.error(failure) }
      guard !placemarks.isEmpty else { return try OfflineGeocoder().forward(query, locale: locale) }
      let key = PlaceNameKey.fold(String(line.split(separator: ",").first ?? ""))
      let matches = placemarks.filter { placemark in
        let names = [
          placemark.name, placemark.locality, placemark.subLocality, placemark.administrativeArea,
          placemark.country, placemark.isoCountryCode, placemark.postalCode,
        ]
        return !key.isEmpty && names.contains { $0.map(PlaceNameKey.fold) == key }
      }
      guard !matches.isEmpty else {
        throw GeocodingError(.noResult, "no simulated placemark matches")
      }
      return matches.map(\.geocodedPlace)
    }

    private static func error(_ code: CLError.Code) -> GeocodingError {
      switch code {
      case .network: return GeocodingError(.network, "simulated network failure")
      case .geocodeCanceled: return GeocodingError(.canceled, "simulated cancellation")
      default: return GeocodingError(.noResult, "simulated failure")
      }
    }
  }
}
