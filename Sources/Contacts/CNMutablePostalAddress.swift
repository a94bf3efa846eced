import Foundation

/// A mutable representation of the postal address for a contact.
///
/// Like Apple's, it is not to be changed from several threads at once.
open class CNMutablePostalAddress: CNPostalAddress, @unchecked Sendable {
  // @unchecked: see CNPostalAddress; mutation is the caller's to serialize.
  /// The street name in a postal address.
  open override var street: String {
    get { storage.street }
    set { storage.street = newValue }
  }
  /// Additional information associated with the location, typically defined at the city or town
  /// level, in a postal address.
  open override var subLocality: String {
    get { storage.subLocality }
    set { storage.subLocality = newValue }
  }
  /// The city name in a postal address.
  open override var city: String {
    get { storage.city }
    set { storage.city = newValue }
  }
  /// The subadministrative area (such as a county or other region) in a postal address.
  open override var subAdministrativeArea: String {
    get { storage.subAdministrativeArea }
    set { storage.subAdministrativeArea = newValue }
  }
  /// The state name in a postal address.
  open override var state: String {
    get { storage.state }
    set { storage.state = newValue }
  }
  /// The postal code in a postal address.
  open override var postalCode: String {
    get { storage.postalCode }
    set { storage.postalCode = newValue }
  }
  /// The country or region name in a postal address.
  open override var country: String {
    get { storage.country }
    set { storage.country = newValue }
  }
  /// The ISO 3166-1 alpha-2 country code in a postal address.
  open override var isoCountryCode: String {
    get { storage.isoCountryCode }
    set { storage.isoCountryCode = newValue }
  }

  /// Creates an empty mutable address.
  public override init() {
    super.init()
  }

  override init(parts: Parts) {
    super.init(parts: parts)
  }

  /// Decodes an address written by `encode(with:)`.
  ///
  /// - Parameter coder: A keyed unarchiver.
  public required init?(coder: NSCoder) {
    super.init(coder: coder)
  }
}
