public import Contacts
import Foundation
package import Geocoding

/// A user-friendly description of a geographic coordinate, often containing the name of the
/// place, its address, and other relevant information.
///
/// On Linux the offline gazetteer (GeoNames places and Natural Earth outlines) fills the names of
/// the place, its administrative areas, country, sea and time zone; street, house number, postal
/// code and areas of interest come only from a street-level server (`CORELOCATION_GEOCODER`).
/// What the data cannot give is `nil`, never invented. Placemarks are immutable and thread-safe.
/// Two placemarks are equal only when they are the same object (NSObject identity), as on Apple
/// platforms.
open class CLPlacemark: NSObject, NSCopying, NSSecureCoding, @unchecked Sendable {
  // @unchecked Sendable (as Apple's SDK declares it): every stored property is a `let` of
  // immutable or Sendable values.
  let place: GeocodedPlace
  private let storedLocation: CLLocation?
  private let storedRegion: CLRegion?

  /// Creates a placemark from a geocoder's answer, located at `timestamp`.
  package init(place: GeocodedPlace, timestamp: Date = Date()) {
    self.place = place
    (storedLocation, storedRegion) = Self.locationAndRegion(of: place, at: timestamp)
    super.init()
  }

  /// The placemark's location (with the radius as its accuracy) and its circle, if it has one.
  private static func locationAndRegion(of place: GeocodedPlace, at timestamp: Date) -> (
    CLLocation, CLRegion?
  ) {
    let accuracy = place.radius ?? 0
    let location = CLLocation(
      coordinate: CLLocationCoordinate2D(latitude: place.latitude, longitude: place.longitude),
      altitude: 0, horizontalAccuracy: accuracy, verticalAccuracy: -1, timestamp: timestamp)
    let region = place.radius.map { radius in
      let center = CLLocationCoordinate2D(latitude: place.latitude, longitude: place.longitude)
      return CLCircularRegion(
        center: center, radius: radius,
        identifier: String(
          format: "<%+.8f,%+.8f> radius %.2f", center.latitude, center.longitude, radius))
    }
    return (location, region)
  }

  /// Creates a placemark that knows nothing: every field `nil` (what Apple's inherited `init()`
  /// gives; useful for subclasses in tests, which override the fields).
  public override init() {
    place = GeocodedPlace(latitude: .nan, longitude: .nan)
    storedLocation = nil
    storedRegion = nil
    super.init()
  }

  /// Initializes and returns a placemark object from another placemark object.
  ///
  /// - Parameter placemark: The placemark to copy.
  public init(placemark: CLPlacemark) {
    place = placemark.place
    storedLocation = placemark.storedLocation
    storedRegion = placemark.storedRegion
    super.init()
  }

  /// The location object containing latitude and longitude information: the place's position (for
  /// a reverse request at sea, the position asked about), with the radius of the place's
  /// ``region`` as its horizontal accuracy.
  open var location: CLLocation? { storedLocation }

  /// The geographic region associated with the placemark: for a place found by name, a circle
  /// around it of half the distance to the nearest other place (our rule); for a server's answer,
  /// the circle around its bounding box; `nil` for an offline reverse answer, which describes a
  /// point rather than a place.
  open var region: CLRegion? { storedRegion }

  /// The time zone associated with the placemark: the place's IANA zone, the nautical zone
  /// (`Etc/GMT+5` and so on) at sea far from land.
  open var timeZone: TimeZone? { place.timeZone.flatMap(TimeZone.init(identifier:)) }

  /// The name of the placemark: the locality, else the sea, else the administrative area, else
  /// the country (for forward answers, the name that matched).
  open var name: String? { place.name }
  /// The street address associated with the placemark (street-level servers only).
  open var thoroughfare: String? { place.thoroughfare }
  /// Additional street-level information for the placemark: the house number (street-level
  /// servers only).
  open var subThoroughfare: String? { place.subThoroughfare }
  /// The city associated with the placemark.
  open var locality: String? { place.locality }
  /// Additional city-level information for the placemark: the district.
  open var subLocality: String? { place.subLocality }
  /// The state or province associated with the placemark.
  open var administrativeArea: String? { place.administrativeArea }
  /// Additional administrative area information for the placemark: the county or district.
  open var subAdministrativeArea: String? { place.subAdministrativeArea }
  /// The postal code associated with the placemark (street-level servers only).
  open var postalCode: String? { place.postalCode }
  /// The abbreviated country or region name: the ISO 3166-1 alpha-2 code.
  open var isoCountryCode: String? { place.isoCountryCode }
  /// The name of the country or region associated with the placemark, in the preferred locale's
  /// language when one was given.
  open var country: String? { place.country }
  /// The name of the inland water body associated with the placemark.
  open var inlandWater: String? { place.inlandWater }
  /// The name of the ocean associated with the placemark: the sea, bay or ocean that holds the
  /// point.
  open var ocean: String? { place.ocean }
  /// The relevant areas of interest associated with the placemark (street-level servers only).
  open var areasOfInterest: [String]? { place.areasOfInterest }

  /// The postal address associated with the location, formatted for use with the Contacts
  /// framework; `nil` when the placemark has no address part (at sea).
  ///
  /// `street` is the house number and street in the country's order ("1 Infinite Loop",
  /// "Bahnhofstrasse 1"); `state` is the short code where the post uses one (US states).
  open var postalAddress: CNPostalAddress? {
    let street = Self.street(place)
    let parts = [
      street, place.subLocality, place.locality, place.subAdministrativeArea,
      place.administrativeArea, place.postalCode, place.country, place.isoCountryCode,
    ]
    guard parts.contains(where: { $0 != nil }) else { return nil }
    let address = CNMutablePostalAddress()
    address.street = street ?? ""
    address.subLocality = place.subLocality ?? ""
    address.city = place.locality ?? ""
    address.subAdministrativeArea = place.subAdministrativeArea ?? ""
    address.state = place.administrativeAreaCode ?? place.administrativeArea ?? ""
    address.postalCode = place.postalCode ?? ""
    address.country = place.country ?? ""
    address.isoCountryCode = place.isoCountryCode ?? ""
    return address.copy() as? CNPostalAddress
  }

  /// A dictionary containing the Address Book keys and values for the placemark (`Name`,
  /// `Thoroughfare`, `SubThoroughfare`, `Street`, `SubLocality`, `City`, `SubAdministrativeArea`,
  /// `State`, `ZIP`, `Country`, `CountryCode`, `FormattedAddressLines`).
  @available(*, deprecated, message: "Use @properties")
  open var addressDictionary: [AnyHashable: Any]? {
    var dictionary: [AnyHashable: Any] = [:]
    let entries: [(String, String?)] = [
      ("Name", place.name), ("Thoroughfare", place.thoroughfare),
      ("SubThoroughfare", place.subThoroughfare), ("Street", Self.street(place)),
      ("SubLocality", place.subLocality), ("City", place.locality),
      ("SubAdministrativeArea", place.subAdministrativeArea),
      ("State", place.administrativeAreaCode ?? place.administrativeArea),
      ("ZIP", place.postalCode), ("Country", place.country),
      ("CountryCode", place.isoCountryCode), ("Ocean", place.ocean),
      ("InlandWater", place.inlandWater),
    ]
    for (key, value) in entries { if let value { dictionary[key] = value } }
    if let address = postalAddress {
      let lines = CNPostalAddressFormatter.string(from: address, style: .mailingAddress)
        .split(separator: "\n").map(String.init)
      if !lines.isEmpty { dictionary["FormattedAddressLines"] = lines }
    }
    return dictionary.isEmpty ? nil : dictionary
  }

  /// Countries whose post writes the house number before the street.
  private static let numberFirst: Set<String> = [
    "US", "CA", "AU", "NZ", "GB", "IE", "FR", "LU", "IN", "PH", "SG", "MY", "ZA", "IL", "TH",
  ]

  private static func street(_ place: GeocodedPlace) -> String? {
    guard let thoroughfare = place.thoroughfare else { return place.subThoroughfare }
    guard let number = place.subThoroughfare else { return thoroughfare }
    return numberFirst.contains(place.isoCountryCode ?? "US")
      ? "\(number) \(thoroughfare)" : "\(thoroughfare) \(number)"
  }

  /// Apple's shape: the name and the address on one line, then the location and the region.
  open override var description: String {
    var parts: [String] = []
    if let name = place.name { parts.append(name) }
    if let address = postalAddress {
      let line = CNPostalAddressFormatter.string(from: address, style: .mailingAddress)
        .replacingOccurrences(of: "\n", with: ", ")
      if !line.isEmpty, line != place.name { parts.append(line) }
    }
    if let water = place.ocean ?? place.inlandWater, water != place.name { parts.append(water) }
    var text = parts.joined(separator: ", ")
    if let location = storedLocation {
      text += String(
        format: " @ <%+.8f,%+.8f> +/- %.2fm", location.coordinate.latitude,
        location.coordinate.longitude, location.horizontalAccuracy)
    }
    if let region = storedRegion { text += ", region \(region.description)" }
    if let zone = place.timeZone { text += ", time zone \(zone)" }
    return text
  }

  // MARK: NSCopying

  /// Returns a placemark with the same contents.
  ///
  /// - Parameter zone: Unused.
  /// - Returns: A `CLPlacemark`.
  open func copy(with zone: NSZone? = nil) -> Any {
    CLPlacemark(placemark: self)
  }

  // MARK: NSSecureCoding

  /// `true`: placemarks decode only through the secure-coding checks.
  public class var supportsSecureCoding: Bool { true }

  private static var stringKeys: [(String, WritableKeyPath<GeocodedPlace, String?>)] {
    [
      ("name", \.name), ("thoroughfare", \.thoroughfare), ("subThoroughfare", \.subThoroughfare),
      ("locality", \.locality), ("subLocality", \.subLocality),
      ("administrativeArea", \.administrativeArea),
      ("administrativeAreaCode", \.administrativeAreaCode),
      ("subAdministrativeArea", \.subAdministrativeArea), ("postalCode", \.postalCode),
      ("isoCountryCode", \.isoCountryCode), ("country", \.country), ("inlandWater", \.inlandWater),
      ("ocean", \.ocean), ("timeZone", \.timeZone),
    ]
  }

  /// Encodes every field with keyed coding.
  ///
  /// - Parameter coder: A keyed archiver.
  open func encode(with coder: NSCoder) {
    coder.encode(place.latitude, forKey: "latitude")
    coder.encode(place.longitude, forKey: "longitude")
    if let radius = place.radius { coder.encode(radius, forKey: "radius") }
    for (key, path) in Self.stringKeys {
      if let value = place[keyPath: path] { coder.encode(NSString(string: value), forKey: key) }
    }
    if let areas = place.areasOfInterest {
      coder.encode(NSString(string: areas.joined(separator: "\n")), forKey: "areasOfInterest")
    }
    if let location = storedLocation {
      coder.encode(location.timestamp.timeIntervalSinceReferenceDate, forKey: "timestamp")
    }
  }

  /// Decodes a placemark written by `encode(with:)`.
  ///
  /// - Parameter coder: A keyed unarchiver.
  /// - Returns: `nil` when the archive lacks the coordinate.
  public required init?(coder: NSCoder) {
    guard coder.allowsKeyedCoding, coder.containsValue(forKey: "latitude"),
      coder.containsValue(forKey: "longitude")
    else { return nil }
    var place = GeocodedPlace(
      latitude: coder.decodeDouble(forKey: "latitude"),
      longitude: coder.decodeDouble(forKey: "longitude"))
    if coder.containsValue(forKey: "radius") { place.radius = coder.decodeDouble(forKey: "radius") }
    for (key, path) in Self.stringKeys where coder.containsValue(forKey: key) {
      if let value = coder.decodeObject(of: NSString.self, forKey: key) {
        place[keyPath: path] = String(describing: value)
      }
    }
    if coder.containsValue(forKey: "areasOfInterest"),
      let areas = coder.decodeObject(of: NSString.self, forKey: "areasOfInterest")
    {
      place.areasOfInterest = String(describing: areas).split(separator: "\n").map(String.init)
    }
    let time = coder.decodeDouble(forKey: "timestamp")
    self.place = place
    (storedLocation, storedRegion) = Self.locationAndRegion(
      of: place, at: Date(timeIntervalSinceReferenceDate: time))
    super.init()
  }
}
