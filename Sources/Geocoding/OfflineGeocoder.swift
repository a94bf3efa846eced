import Foundation

/// The offline gazetteer as a geocoder: the process's shared file (mapped at first use), or the
/// error that kept it from opening.
package struct OfflineGeocoder: PlaceGeocoder {
  private let source: @Sendable () -> Result<Gazetteer, GeocodingError>

  /// The process's shared gazetteer (`Gazetteer.shared`).
  package init() {
    source = { Gazetteer.shared }
  }

  /// A given gazetteer.
  package init(gazetteer: Gazetteer) {
    source = { .success(gazetteer) }
  }

  package func reverse(latitude: Double, longitude: Double, locale: Locale?) throws(GeocodingError)
    -> [GeocodedPlace]
  {
    try source().get().reverse(latitude: latitude, longitude: longitude, locale: locale)
  }

  package func forward(_ query: AddressQuery, locale: Locale?) throws(GeocodingError)
    -> [GeocodedPlace]
  {
    try source().get().forward(query, locale: locale)
  }
}
