import Foundation

/// One answer of a geocoder, in the shape of Apple's `CLPlacemark`: what the data knows about a
/// place or a point, with `nil` for what it does not.
package struct GeocodedPlace: Sendable, Equatable {
  /// The placemark's location (the place's, for a place; the point asked about, at sea).
  package var latitude: Double
  package var longitude: Double
  /// The radius in metres of the circle around the location that the answer stands for.
  package var radius: Double?
  package var name: String?
  package var thoroughfare: String?
  package var subThoroughfare: String?
  package var locality: String?
  package var subLocality: String?
  package var administrativeArea: String?
  /// The administrative area's short code where the country's post uses one (US states).
  package var administrativeAreaCode: String?
  package var subAdministrativeArea: String?
  package var postalCode: String?
  package var isoCountryCode: String?
  package var country: String?
  package var inlandWater: String?
  package var ocean: String?
  package var areasOfInterest: [String]?
  /// An IANA time zone identifier.
  package var timeZone: String?
  /// Whether only part of a forward query matched (a street the data does not have, say).
  package var isPartialMatch = false

  /// Creates an answer at a location with nothing else known.
  package init(latitude: Double, longitude: Double) {
    self.latitude = latitude
    self.longitude = longitude
  }
}

/// What a forward geocoding request asks for: free text, or the parts of a postal address, and a
/// region to prefer.
package struct AddressQuery: Sendable, Equatable {
  /// Free text ("Zürich", "Paris, Texas").
  package var text: String?
  package var street: String?
  package var city: String?
  package var subAdministrativeArea: String?
  package var state: String?
  package var postalCode: String?
  package var country: String?
  package var isoCountryCode: String?
  /// A circle whose places come first: centre latitude and longitude, radius in metres.
  package var preferredRegion: (latitude: Double, longitude: Double, radius: Double)?

  /// A free-text query.
  package init(text: String) {
    self.text = text
  }

  /// A structured query.
  package init(
    street: String? = nil, city: String? = nil, subAdministrativeArea: String? = nil,
    state: String? = nil, postalCode: String? = nil, country: String? = nil,
    isoCountryCode: String? = nil
  ) {
    self.street = street
    self.city = city
    self.subAdministrativeArea = subAdministrativeArea
    self.state = state
    self.postalCode = postalCode
    self.country = country
    self.isoCountryCode = isoCountryCode
  }

  /// The query as one line of text, most specific part first ("Cupertino, CA, United States").
  package var singleLine: String {
    if let text { return text }
    let parts = [street, city, subAdministrativeArea, state, postalCode, country ?? isoCountryCode]
    return parts.compactMap { $0?.isEmpty == false ? $0 : nil }.joined(separator: ", ")
  }

  package static func == (lhs: AddressQuery, rhs: AddressQuery) -> Bool {
    lhs.text == rhs.text && lhs.street == rhs.street && lhs.city == rhs.city
      && lhs.subAdministrativeArea == rhs.subAdministrativeArea && lhs.state == rhs.state
      && lhs.postalCode == rhs.postalCode && lhs.country == rhs.country
      && lhs.isoCountryCode == rhs.isoCountryCode
      && lhs.preferredRegion?.latitude == rhs.preferredRegion?.latitude
      && lhs.preferredRegion?.longitude == rhs.preferredRegion?.longitude
      && lhs.preferredRegion?.radius == rhs.preferredRegion?.radius
  }
}

/// A geocoder: the offline gazetteer, a Nominatim server, or a scripted one in a simulated world.
/// Calls block until the answer is known; callers run them off the main thread.
package protocol PlaceGeocoder: Sendable {
  /// The places at or nearest a point, best first.
  ///
  /// - Parameters:
  ///   - latitude: Degrees.
  ///   - longitude: Degrees.
  ///   - locale: The locale whose language country names should be in (`nil`: the data's).
  /// - Throws: `GeocodingError`.
  func reverse(latitude: Double, longitude: Double, locale: Locale?) throws(GeocodingError)
    -> [GeocodedPlace]

  /// The places that match a query, best first.
  ///
  /// - Parameters:
  ///   - query: The text or address.
  ///   - locale: The locale whose language country names should be in (`nil`: the data's).
  /// - Throws: `GeocodingError`.
  func forward(_ query: AddressQuery, locale: Locale?) throws(GeocodingError) -> [GeocodedPlace]
}
