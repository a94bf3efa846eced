public import Contacts
import Foundation
internal import Geocoding
internal import GeocodingService
import LocationServices
import Synchronization

/// A block to be called when a geocoding request is complete.
///
/// The placemarks are `nil` when the request was canceled or failed. When only part of a forward
/// query matched (a street the offline data does not have), the placemarks found for the rest come
/// with the error `CLError.geocodeFoundPartialResult`.
public typealias CLGeocodeCompletionHandler = ([CLPlacemark]?, (any Error)?) -> Void

/// An interface for converting between geographic coordinates and place names.
///
/// On Linux the answers come from the offline gazetteer shipped with the package (no network, no
/// one learns where the user is), or, when `CORELOCATION_GEOCODER` names a Nominatim server, from
/// that server, with the gazetteer answering when it does not. The rules by which the gazetteer
/// answers are in the README ("Geocoding"). Behaviour beyond Apple's documentation:
/// - One request at a time: starting a request while one is pending cancels the pending one, whose
///   completion handler receives `CLError.geocodeCanceled`; `cancelGeocode()` does the same.
/// - Completion handlers run on the main queue (in a `CoreLocationTesting` simulated environment,
///   when the environment is driven); the `async` forms return on the caller's task and a
///   canceled task cancels its request.
/// - Errors: no match, and bad input (a NaN or out-of-range coordinate, an empty or absurd
///   string), give `CLError.geocodeFoundNoResult`; so does a missing or corrupt gazetteer file
///   (with the reason in `NSLocalizedDescriptionKey`). A server that cannot be reached, with no
///   gazetteer to fall back on, or too many requests to it, give `CLError.network`.
open class CLGeocoder: NSObject {
  private let requests = GeocoderRequests()

  /// Creates a geocoder.
  public override init() {
    super.init()
  }

  /// A Boolean value indicating whether the receiver is in the middle of geocoding its value.
  open var isGeocoding: Bool { requests.isPending }

  /// Cancels a pending geocoding request; its completion handler receives
  /// `CLError.geocodeCanceled`. Without a pending request, does nothing.
  open func cancelGeocode() {
    requests.cancel()
  }

  // MARK: Reverse geocoding

  /// Submits a reverse-geocoding request for the specified location.
  ///
  /// - Parameters:
  ///   - location: The location object containing the coordinate data to look up.
  ///   - completionHandler: The handler to execute with the results, on the main queue.
  open func reverseGeocodeLocation(
    _ location: CLLocation,
    completionHandler: @escaping @Sendable ([CLPlacemark]?, (any Error)?) -> Void
  ) {
    reverseGeocodeLocation(location, preferredLocale: nil, completionHandler: completionHandler)
  }

  /// Submits a reverse-geocoding request for the specified location and locale.
  ///
  /// - Parameters:
  ///   - location: The location object containing the coordinate data to look up.
  ///   - locale: The locale whose language country names are given in; `nil` for the data's
  ///     (English).
  ///   - completionHandler: The handler to execute with the results, on the main queue.
  open func reverseGeocodeLocation(
    _ location: CLLocation, preferredLocale locale: Locale?,
    completionHandler: @escaping @Sendable ([CLPlacemark]?, (any Error)?) -> Void
  ) {
    requests.start(.reverse(location.coordinate, locale), delivery: .handler(completionHandler))
  }

  /// Submits a reverse-geocoding request for the specified location.
  ///
  /// - Parameter location: The location to look up.
  /// - Returns: The placemarks.
  /// - Throws: `CLError`.
  open func reverseGeocodeLocation(_ location: CLLocation) async throws -> [CLPlacemark] {
    try await requests.run(.reverse(location.coordinate, nil))
  }

  /// Submits a reverse-geocoding request for the specified location and locale.
  ///
  /// - Parameters:
  ///   - location: The location to look up.
  ///   - locale: The language of country names; `nil` for the data's.
  /// - Returns: The placemarks.
  /// - Throws: `CLError`.
  open func reverseGeocodeLocation(_ location: CLLocation, preferredLocale locale: Locale?)
    async throws -> [CLPlacemark]
  {
    try await requests.run(.reverse(location.coordinate, locale))
  }

  // MARK: Forward geocoding

  /// Submits a forward-geocoding request using the specified string.
  ///
  /// - Parameters:
  ///   - addressString: A place name, optionally qualified ("Paris, Texas").
  ///   - completionHandler: The handler to execute with the results, on the main queue.
  open func geocodeAddressString(
    _ addressString: String,
    completionHandler: @escaping @Sendable ([CLPlacemark]?, (any Error)?) -> Void
  ) {
    geocodeAddressString(
      addressString, in: nil, preferredLocale: nil, completionHandler: completionHandler)
  }

  /// Submits a forward-geocoding request using the specified string and region information.
  ///
  /// - Parameters:
  ///   - addressString: A place name, optionally qualified.
  ///   - region: A region whose places come first (a `CLCircularRegion`).
  ///   - completionHandler: The handler to execute with the results, on the main queue.
  open func geocodeAddressString(
    _ addressString: String, in region: CLRegion?,
    completionHandler: @escaping @Sendable ([CLPlacemark]?, (any Error)?) -> Void
  ) {
    geocodeAddressString(
      addressString, in: region, preferredLocale: nil, completionHandler: completionHandler)
  }

  /// Submits a forward-geocoding request using the specified address string and locale
  /// information.
  ///
  /// - Parameters:
  ///   - addressString: A place name, optionally qualified.
  ///   - region: A region whose places come first.
  ///   - locale: The language of country names, which the query may also use.
  ///   - completionHandler: The handler to execute with the results, on the main queue.
  open func geocodeAddressString(
    _ addressString: String, in region: CLRegion?, preferredLocale locale: Locale?,
    completionHandler: @escaping @Sendable ([CLPlacemark]?, (any Error)?) -> Void
  ) {
    requests.start(
      .forward(Self.query(addressString, region: region), locale),
      delivery: .handler(completionHandler))
  }

  /// Submits a forward-geocoding request for a string, preferring a circle.
  ///
  /// - Parameters:
  ///   - addressString: A place name, optionally qualified.
  ///   - centroid: The centre of the circle to prefer.
  ///   - radius: Its radius in metres.
  ///   - locale: The language of country names.
  ///   - completionHandler: The handler to execute with the results, on the main queue.
  open func geocodeAddressString(
    _ addressString: String, inRegionCenteredAt centroid: CLLocationCoordinate2D,
    inRegionRadius radius: CLLocationDistance, preferredLocale locale: Locale?,
    completionHandler: @escaping @Sendable ([CLPlacemark]?, (any Error)?) -> Void
  ) {
    var query = AddressQuery(text: addressString)
    query.preferredRegion = (centroid.latitude, centroid.longitude, radius)
    requests.start(.forward(query, locale), delivery: .handler(completionHandler))
  }

  /// Submits a forward-geocoding request using the specified string.
  ///
  /// - Parameter addressString: A place name, optionally qualified.
  /// - Returns: The placemarks, best first.
  /// - Throws: `CLError`.
  open func geocodeAddressString(_ addressString: String) async throws -> [CLPlacemark] {
    try await requests.run(.forward(Self.query(addressString, region: nil), nil))
  }

  /// Submits a forward-geocoding request using the specified string and region information.
  ///
  /// - Parameters:
  ///   - addressString: A place name, optionally qualified.
  ///   - region: A region whose places come first.
  /// - Returns: The placemarks, best first.
  /// - Throws: `CLError`.
  open func geocodeAddressString(_ addressString: String, in region: CLRegion?) async throws
    -> [CLPlacemark]
  {
    try await requests.run(.forward(Self.query(addressString, region: region), nil))
  }

  /// Submits a forward-geocoding request using the specified address string and locale
  /// information.
  ///
  /// - Parameters:
  ///   - addressString: A place name, optionally qualified.
  ///   - region: A region whose places come first.
  ///   - locale: The language of country names.
  /// - Returns: The placemarks, best first.
  /// - Throws: `CLError`.
  open func geocodeAddressString(
    _ addressString: String, in region: CLRegion?, preferredLocale locale: Locale?
  ) async throws -> [CLPlacemark] {
    try await requests.run(.forward(Self.query(addressString, region: region), locale))
  }

  /// Submits a forward-geocoding request for a string, preferring a circle.
  ///
  /// - Parameters:
  ///   - addressString: A place name, optionally qualified.
  ///   - centroid: The centre of the circle to prefer.
  ///   - radius: Its radius in metres.
  ///   - locale: The language of country names.
  /// - Returns: The placemarks, best first.
  /// - Throws: `CLError`.
  open func geocodeAddressString(
    _ addressString: String, inRegionCenteredAt centroid: CLLocationCoordinate2D,
    inRegionRadius radius: CLLocationDistance, preferredLocale locale: Locale?
  ) async throws -> [CLPlacemark] {
    var query = AddressQuery(text: addressString)
    query.preferredRegion = (centroid.latitude, centroid.longitude, radius)
    return try await requests.run(.forward(query, locale))
  }

  // MARK: Postal addresses

  /// Submits a forward-geocoding request using the specified Contacts framework information.
  ///
  /// Offline, the city (else the county, state or country) is looked up, qualified by the state
  /// and country; an address with a street is answered at the city with
  /// `CLError.geocodeFoundPartialResult`.
  ///
  /// - Parameters:
  ///   - postalAddress: A postal address.
  ///   - completionHandler: The handler to execute with the results, on the main queue.
  open func geocodePostalAddress(
    _ postalAddress: CNPostalAddress,
    completionHandler: @escaping @Sendable ([CLPlacemark]?, (any Error)?) -> Void
  ) {
    geocodePostalAddress(postalAddress, preferredLocale: nil, completionHandler: completionHandler)
  }

  /// Submits a forward-geocoding request using the specified locale and Contacts framework
  /// information.
  ///
  /// - Parameters:
  ///   - postalAddress: A postal address.
  ///   - locale: The language of country names.
  ///   - completionHandler: The handler to execute with the results, on the main queue.
  open func geocodePostalAddress(
    _ postalAddress: CNPostalAddress, preferredLocale locale: Locale?,
    completionHandler: @escaping @Sendable ([CLPlacemark]?, (any Error)?) -> Void
  ) {
    requests.start(
      .forward(Self.query(postalAddress), locale), delivery: .handler(completionHandler))
  }

  /// Submits a forward-geocoding request using the specified Contacts framework information.
  ///
  /// - Parameter postalAddress: A postal address.
  /// - Returns: The placemarks, best first.
  /// - Throws: `CLError`.
  open func geocodePostalAddress(_ postalAddress: CNPostalAddress) async throws -> [CLPlacemark] {
    try await requests.run(.forward(Self.query(postalAddress), nil))
  }

  /// Submits a forward-geocoding request using the specified locale and Contacts framework
  /// information.
  ///
  /// - Parameters:
  ///   - postalAddress: A postal address.
  ///   - locale: The language of country names.
  /// - Returns: The placemarks, best first.
  /// - Throws: `CLError`.
  open func geocodePostalAddress(_ postalAddress: CNPostalAddress, preferredLocale locale: Locale?)
    async throws -> [CLPlacemark]
  {
    try await requests.run(.forward(Self.query(postalAddress), locale))
  }

  /// Submits a forward-geocoding request using the specified address dictionary (Address Book
  /// keys: `Street`, `City`, `State`, `ZIP`, `Country`, `CountryCode`, `SubAdministrativeArea`).
  ///
  /// - Parameters:
  ///   - addressDictionary: The address.
  ///   - completionHandler: The handler to execute with the results, on the main queue.
  @available(*, deprecated, message: "Use -geocodePostalAddress:completionHandler:")
  open func geocodeAddressDictionary(
    _ addressDictionary: [AnyHashable: Any],
    completionHandler: @escaping @Sendable ([CLPlacemark]?, (any Error)?) -> Void
  ) {
    requests.start(
      .forward(Self.query(addressDictionary), nil), delivery: .handler(completionHandler))
  }

  /// Submits a forward-geocoding request using the specified address dictionary.
  ///
  /// - Parameter addressDictionary: The address (Address Book keys).
  /// - Returns: The placemarks, best first.
  /// - Throws: `CLError`.
  @available(*, deprecated, message: "Use -geocodePostalAddress:completionHandler:")
  open func geocodeAddressDictionary(_ addressDictionary: [AnyHashable: Any]) async throws
    -> [CLPlacemark]
  {
    try await requests.run(.forward(Self.query(addressDictionary), nil))
  }

  // MARK: Queries

  private static func query(_ text: String, region: CLRegion?) -> AddressQuery {
    var query = AddressQuery(text: text)
    if let circle = region as? CLCircularRegion {
      query.preferredRegion = (circle.center.latitude, circle.center.longitude, circle.radius)
    }
    return query
  }

  private static func query(_ address: CNPostalAddress) -> AddressQuery {
    func value(_ text: String) -> String? { text.isEmpty ? nil : text }
    return AddressQuery(
      street: value(address.street), city: value(address.city),
      subAdministrativeArea: value(address.subAdministrativeArea), state: value(address.state),
      postalCode: value(address.postalCode), country: value(address.country),
      isoCountryCode: value(address.isoCountryCode))
  }

  private static func query(_ dictionary: [AnyHashable: Any]) -> AddressQuery {
    func value(_ key: String) -> String? {
      (dictionary[key] as? String).flatMap { $0.isEmpty ? nil : $0 }
    }
    return AddressQuery(
      street: value("Street"), city: value("City"),
      subAdministrativeArea: value("SubAdministrativeArea"), state: value("State"),
      postalCode: value("ZIP"), country: value("Country"), isoCountryCode: value("CountryCode"))
  }
}

/// A geocoding request.
enum GeocodeRequest: Sendable {
  case reverse(CLLocationCoordinate2D, Locale?)
  case forward(AddressQuery, Locale?)
}

/// The requests of one geocoder: at most one pending, the geocoder and delivery of its
/// environment, cancellation.
final class GeocoderRequests: Sendable {
  enum Delivery: Sendable {
    case handler(@Sendable ([CLPlacemark]?, (any Error)?) -> Void)
    case continuation(@Sendable (Result<[CLPlacemark], CLError>) -> Void)
  }

  private struct Pending {
    var id: UInt64
    var delivery: Delivery
    var target: Target
  }

  /// Where the answer goes: the main queue, or a simulated environment's scheduler.
  private enum Target: Sendable {
    case mainQueue
    case scheduler(any DeliveryScheduler)
  }

  private let state = Mutex<(next: UInt64, pending: Pending?)>((1, nil))

  var isPending: Bool { state.withLock { $0.pending != nil } }

  /// Starts a request, canceling the pending one.
  @discardableResult
  func start(_ request: GeocodeRequest, delivery: Delivery) -> UInt64 {
    let simulated = HubEnvironment.simulated
    let target: Target = simulated?.scheduler.map { .scheduler($0) } ?? .mainQueue
    let geocoder: any PlaceGeocoder = simulated?.geocoder ?? GeocoderSelection.live
    let (id, replaced) = state.withLock { state -> (UInt64, Pending?) in
      let id = state.next
      state.next += 1
      let replaced = state.pending
      state.pending = Pending(id: id, delivery: delivery, target: target)
      return (id, replaced)
    }
    if let replaced { Self.deliver(.failure(CLError(.geocodeCanceled)), to: replaced) }
    if case .scheduler(let scheduler) = target {
      // Simulated worlds look the answer up at once and deliver it when the world is driven
      // (until then the request is pending and can be canceled); `async` callers get it at once.
      let result = Self.perform(request, geocoder: geocoder)
      if case .continuation = delivery {
        finish(id, result)
      } else {
        scheduler.schedule { self.finish(id, result) }
      }
    } else {
      DispatchQueue.global(qos: .userInitiated).async {
        self.finish(id, Self.perform(request, geocoder: geocoder))
      }
    }
    return id
  }

  /// Runs a request for an `async` caller.
  func run(_ request: GeocodeRequest) async throws -> [CLPlacemark] {
    let box = Mutex<UInt64?>(nil)
    return try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation {
        (continuation: CheckedContinuation<[CLPlacemark], any Error>) in
        let id = start(
          request,
          delivery: .continuation { result in continuation.resume(with: result.mapError { $0 }) })
        box.withLock { $0 = id }
      }
    } onCancel: {
      if let id = box.withLock({ $0 }) { cancel(id: id) }
    }
  }

  /// Cancels the pending request, if any.
  func cancel() {
    if let pending = state.withLock({ state -> Pending? in
      defer { state.pending = nil }
      return state.pending
    }) {
      Self.deliver(.failure(CLError(.geocodeCanceled)), to: pending)
    }
  }

  private func cancel(id: UInt64) {
    if let pending = state.withLock({ state -> Pending? in
      guard state.pending?.id == id else { return nil }
      defer { state.pending = nil }
      return state.pending
    }) {
      Self.deliver(.failure(CLError(.geocodeCanceled)), to: pending)
    }
  }

  private func finish(_ id: UInt64, _ result: Result<[CLPlacemark], CLError>) {
    if let pending = state.withLock({ state -> Pending? in
      guard state.pending?.id == id else { return nil }
      defer { state.pending = nil }
      return state.pending
    }) {
      Self.deliver(result, to: pending)
    }
  }

  private static func deliver(_ result: Result<[CLPlacemark], CLError>, to pending: Pending) {
    switch pending.delivery {
    case .continuation(let resume):
      resume(result)
    case .handler(let handler):
      let work: @Sendable () -> Void = {
        switch result {
        case .success(let placemarks):
          let partial = placemarks.contains { $0.place.isPartialMatch }
          handler(placemarks, partial ? CLError(.geocodeFoundPartialResult) : nil)
        case .failure(let error):
          handler(nil, error)
        }
      }
      switch pending.target {
      case .mainQueue: DispatchQueue.main.async(execute: work)
      case .scheduler(let scheduler): scheduler.schedule(work)
      }
    }
  }

  private static func perform(_ request: GeocodeRequest, geocoder: any PlaceGeocoder)
    -> Result<[CLPlacemark], CLError>
  {
    do throws(GeocodingError) {
      let places: [GeocodedPlace]
      switch request {
      case .reverse(let coordinate, let locale):
        places = try geocoder.reverse(
          latitude: coordinate.latitude, longitude: coordinate.longitude, locale: locale)
      case .forward(let query, let locale):
        places = try geocoder.forward(query, locale: locale)
      }
      guard !places.isEmpty else { return .failure(CLError(.geocodeFoundNoResult)) }
      let now = Date()
      return .success(places.map { CLPlacemark(place: $0, timestamp: now) })
    } catch {
      let info: [String: Any] = [NSLocalizedDescriptionKey: error.description]
      switch error.code {
      case .noResult, .dataUnavailable:
        return .failure(CLError(.geocodeFoundNoResult, userInfo: info))
      case .canceled:
        return .failure(CLError(.geocodeCanceled, userInfo: info))
      case .network:
        return .failure(CLError(.network, userInfo: info))
      }
    }
  }
}
