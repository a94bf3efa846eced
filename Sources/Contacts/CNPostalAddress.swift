import Foundation

/// The key of a postal address's street (the property name, as on Apple platforms).
public let CNPostalAddressStreetKey: String = "street"
/// The key of a postal address's sub-locality.
public let CNPostalAddressSubLocalityKey: String = "subLocality"
/// The key of a postal address's city.
public let CNPostalAddressCityKey: String = "city"
/// The key of a postal address's sub-administrative area.
public let CNPostalAddressSubAdministrativeAreaKey: String = "subAdministrativeArea"
/// The key of a postal address's state.
public let CNPostalAddressStateKey: String = "state"
/// The key of a postal address's postal code.
public let CNPostalAddressPostalCodeKey: String = "postalCode"
/// The key of a postal address's country or region name.
public let CNPostalAddressCountryKey: String = "country"
/// The key of a postal address's ISO 3166-1 alpha-2 country code.
public let CNPostalAddressISOCountryCodeKey: String = "ISOCountryCode"

/// An immutable representation of the postal address for a contact.
///
/// Every part is a string, empty when unknown. Two addresses are equal when all their parts are
/// equal. `CNPostalAddress` is thread-safe; its mutable subclass, like Apple's, is not to be
/// changed from several threads at once.
open class CNPostalAddress: NSObject, NSCopying, NSMutableCopying, NSSecureCoding,
  @unchecked Sendable
{
  // @unchecked: an immutable address never changes its parts after init; CNMutablePostalAddress
  // changes them only through its setters, which callers must not race (Apple's rule too).
  var storage: Parts

  struct Parts: Hashable {
    var street = ""
    var subLocality = ""
    var city = ""
    var subAdministrativeArea = ""
    var state = ""
    var postalCode = ""
    var country = ""
    var isoCountryCode = ""
  }

  /// Creates an empty address.
  public override init() {
    storage = Parts()
    super.init()
  }

  init(parts: Parts) {
    storage = parts
    super.init()
  }

  /// The street name in a postal address.
  open var street: String { storage.street }
  /// Additional information associated with the location, typically defined at the city or town
  /// level, in a postal address.
  open var subLocality: String { storage.subLocality }
  /// The city name in a postal address.
  open var city: String { storage.city }
  /// The subadministrative area (such as a county or other region) in a postal address.
  open var subAdministrativeArea: String { storage.subAdministrativeArea }
  /// The state name in a postal address.
  open var state: String { storage.state }
  /// The postal code in a postal address.
  open var postalCode: String { storage.postalCode }
  /// The country or region name in a postal address.
  open var country: String { storage.country }
  /// The ISO country code for the country or region in a postal address, using the ISO 3166-1
  /// alpha-2 standard.
  open var isoCountryCode: String { storage.isoCountryCode }

  /// Returns the localized name for the property associated with the specified key.
  ///
  /// Our rule: English names ("Street", "City", "State", "Postal Code", ...), whatever the
  /// locale; an unknown key is returned as it is.
  ///
  /// - Parameter key: One of the `CNPostalAddress...Key` constants.
  /// - Returns: The property's name for people.
  open class func localizedString(forKey key: String) -> String {
    switch key {
    case CNPostalAddressStreetKey: return "Street"
    case CNPostalAddressSubLocalityKey: return "Neighborhood"
    case CNPostalAddressCityKey: return "City"
    case CNPostalAddressSubAdministrativeAreaKey: return "County"
    case CNPostalAddressStateKey: return "State"
    case CNPostalAddressPostalCodeKey: return "Postal Code"
    case CNPostalAddressCountryKey: return "Country"
    case CNPostalAddressISOCountryCodeKey: return "Country Code"
    default: return key
    }
  }

  // MARK: Equality

  /// Returns whether the other object is a postal address with the same parts.
  ///
  /// - Parameter object: The object to compare with.
  /// - Returns: `true` when every part is equal.
  open override func isEqual(_ object: Any?) -> Bool {
    guard let other = object as? CNPostalAddress else { return false }
    return storage == other.storage
  }

  /// The hash of the parts.
  open override var hash: Int { storage.hashValue }

  /// The parts, for debugging.
  open override var description: String {
    let parts: [(String, String)] = [
      ("street", street), ("subLocality", subLocality), ("city", city),
      ("subAdministrativeArea", subAdministrativeArea), ("state", state),
      ("postalCode", postalCode), ("country", country), ("countryCode", isoCountryCode),
    ]
    let shown = parts.map { "\($0.0)=\($0.1)" }.joined(separator: ", ")
    return "<\(String(describing: type(of: self))): \(shown)>"
  }

  // MARK: Copying

  /// Returns an immutable copy.
  ///
  /// - Parameter zone: Unused.
  /// - Returns: A `CNPostalAddress`.
  open func copy(with zone: NSZone? = nil) -> Any {
    CNPostalAddress(parts: storage)
  }

  /// Returns a mutable copy.
  ///
  /// - Parameter zone: Unused.
  /// - Returns: A `CNMutablePostalAddress`.
  open func mutableCopy(with zone: NSZone? = nil) -> Any {
    CNMutablePostalAddress(parts: storage)
  }

  // MARK: NSSecureCoding

  /// `true`: addresses decode only through the secure-coding checks.
  public class var supportsSecureCoding: Bool { true }

  private static var codingKeys: [(String, WritableKeyPath<Parts, String>)] {
    [
      (CNPostalAddressStreetKey, \.street), (CNPostalAddressSubLocalityKey, \.subLocality),
      (CNPostalAddressCityKey, \.city),
      (CNPostalAddressSubAdministrativeAreaKey, \.subAdministrativeArea),
      (CNPostalAddressStateKey, \.state), (CNPostalAddressPostalCodeKey, \.postalCode),
      (CNPostalAddressCountryKey, \.country), (CNPostalAddressISOCountryCodeKey, \.isoCountryCode),
    ]
  }

  /// Encodes every part under its key.
  ///
  /// - Parameter coder: A keyed archiver.
  open func encode(with coder: NSCoder) {
    for (key, path) in Self.codingKeys {
      coder.encode(NSString(string: storage[keyPath: path]), forKey: key)
    }
  }

  /// Decodes an address written by `encode(with:)`; missing parts are empty.
  ///
  /// - Parameter coder: A keyed unarchiver.
  public required init?(coder: NSCoder) {
    guard coder.allowsKeyedCoding else { return nil }
    var parts = Parts()
    for (key, path) in Self.codingKeys where coder.containsValue(forKey: key) {
      if let value = coder.decodeObject(of: NSString.self, forKey: key) {
        parts[keyPath: path] = String(describing: value)
      }
    }
    storage = parts
    super.init()
  }
}
