import Foundation

/// The attribute that names, in a formatted attributed address, which property (one of the
/// `CNPostalAddress...Key` constants) a range of characters shows.
public let CNPostalAddressPropertyAttribute: String = "postalAddressProperty"
/// The attribute that gives, in a formatted attributed address, the localized name of the
/// property a range of characters shows.
public let CNPostalAddressLocalizedPropertyNameAttribute: String =
  "postalAddressLocalizedPropertyName"

/// Constants for postal formatting styles.
public enum CNPostalAddressFormatterStyle: Int, Sendable {
  /// Combines the postal address components into a multiline mailing address.
  case mailingAddress = 0
}

/// An object that you use to format a contact's postal addresses.
///
/// The layout is the postal convention of the address's country (`isoCountryCode`, else the
/// current locale's region): for example "1 Infinite Loop\nCupertino CA 95014\nUnited States"
/// for the United States, and "Bahnhofstrasse 1\n8001 Zürich\nSwitzerland" for most of
/// continental Europe. Empty parts and the lines they leave empty are dropped; the country line
/// is kept when the address has a country. The layouts are ours, from each country's published
/// postal rules (Universal Postal Union, "Postal addressing systems in member countries").
open class CNPostalAddressFormatter: Formatter, @unchecked Sendable {
  // @unchecked: `style` is the only state; like Apple's formatter, an instance is not to be
  // changed from several threads at once.

  /// The style to apply when formatting strings.
  open var style: CNPostalAddressFormatterStyle = .mailingAddress

  /// Creates a formatter with the mailing-address style.
  public override init() {
    super.init()
  }

  /// Decodes a formatter (its style).
  ///
  /// - Parameter coder: A keyed unarchiver.
  public required init?(coder: NSCoder) {
    super.init(coder: coder)
    style =
      CNPostalAddressFormatterStyle(rawValue: coder.decodeInteger(forKey: "style"))
      ?? .mailingAddress
  }

  /// Returns a postal address as a string and formatted for the specified style.
  ///
  /// - Parameters:
  ///   - postalAddress: The address.
  ///   - style: The style.
  /// - Returns: The lines of the address, separated by newlines.
  open class func string(from postalAddress: CNPostalAddress, style: CNPostalAddressFormatterStyle)
    -> String
  {
    lines(of: postalAddress).map { $0.map(\.text).joined() }.joined(separator: "\n")
  }

  /// Returns a postal address as an attributed string and formatted for the specified style.
  ///
  /// Each part carries `CNPostalAddressPropertyAttribute` (its key) and
  /// `CNPostalAddressLocalizedPropertyNameAttribute`, on top of the default attributes.
  ///
  /// - Parameters:
  ///   - postalAddress: The address.
  ///   - style: The style.
  ///   - attributes: Attributes for the whole string.
  /// - Returns: The formatted address.
  open class func attributedString(
    from postalAddress: CNPostalAddress, style: CNPostalAddressFormatterStyle,
    withDefaultAttributes attributes: [AnyHashable: Any] = [:]
  ) -> NSAttributedString {
    var defaults: [NSAttributedString.Key: Any] = [:]
    for (key, value) in attributes {
      if let key = key as? NSAttributedString.Key {
        defaults[key] = value
      } else if let key = key as? String {
        defaults[NSAttributedString.Key(key)] = value
      }
    }
    let result = NSMutableAttributedString(string: "")
    for (index, line) in lines(of: postalAddress).enumerated() {
      if index > 0 { result.append(NSAttributedString(string: "\n", attributes: defaults)) }
      for piece in line {
        var pieceAttributes = defaults
        if let key = piece.key {
          pieceAttributes[NSAttributedString.Key(CNPostalAddressPropertyAttribute)] = key
          pieceAttributes[NSAttributedString.Key(CNPostalAddressLocalizedPropertyNameAttribute)] =
            CNPostalAddress.localizedString(forKey: key)
        }
        result.append(NSAttributedString(string: piece.text, attributes: pieceAttributes))
      }
    }
    return result
  }

  /// Returns a formatted postal address in the formatter's style.
  ///
  /// - Parameter postalAddress: The address.
  /// - Returns: The lines of the address, separated by newlines.
  open func string(from postalAddress: CNPostalAddress) -> String {
    Self.string(from: postalAddress, style: style)
  }

  /// Returns a formatted postal address as an attributed string.
  ///
  /// - Parameters:
  ///   - postalAddress: The address.
  ///   - attributes: Attributes for the whole string.
  /// - Returns: The formatted address.
  open func attributedString(
    from postalAddress: CNPostalAddress, withDefaultAttributes attributes: [AnyHashable: Any] = [:]
  ) -> NSAttributedString {
    Self.attributedString(from: postalAddress, style: style, withDefaultAttributes: attributes)
  }

  /// Formats a `CNPostalAddress`; anything else gives `nil`.
  ///
  /// - Parameter obj: The value to format.
  /// - Returns: The formatted address.
  open override func string(for obj: Any?) -> String? {
    (obj as? CNPostalAddress).map { string(from: $0) }
  }

  /// Encodes the style.
  ///
  /// - Parameter coder: A keyed archiver.
  open override func encode(with coder: NSCoder) {
    super.encode(with: coder)
    coder.encode(style.rawValue, forKey: "style")
  }

  // MARK: Layouts

  /// One piece of a line: text and the key of the part it shows (`nil` for separators).
  struct Piece {
    var text: String
    var key: String?
  }

  /// A line template: part keys and literal separators.
  private enum Token {
    case part(String)
    case text(String)
  }

  private static let street = Token.part(CNPostalAddressStreetKey)
  private static let subLocality = Token.part(CNPostalAddressSubLocalityKey)
  private static let city = Token.part(CNPostalAddressCityKey)
  private static let county = Token.part(CNPostalAddressSubAdministrativeAreaKey)
  private static let state = Token.part(CNPostalAddressStateKey)
  private static let postalCode = Token.part(CNPostalAddressPostalCodeKey)
  private static let space = Token.text(" ")
  private static let comma = Token.text(", ")

  /// City, state and code on one line, code last (United States, Canada, Australia).
  private static let northAmerican: [[Token]] = [
    [street], [city, space, state, space, postalCode],
  ]
  /// Code before city (most of continental Europe, Latin America).
  private static let continental: [[Token]] = [
    [street], [postalCode, space, city],
  ]
  /// Code before city, then the province (Italy, Spain, Mexico, Brazil).
  private static let continentalWithProvince: [[Token]] = [
    [street], [postalCode, space, city, space, state],
  ]
  /// City, then code on its own line (United Kingdom, Ireland).
  private static let british: [[Token]] = [
    [street], [subLocality], [city], [county], [postalCode],
  ]
  /// Code first, largest area first (Japan, China, Korea, Taiwan).
  private static let eastAsian: [[Token]] = [
    [postalCode], [state, space, city, space, subLocality], [street],
  ]
  /// City with the state after a comma, code last (India and others).
  private static let cityStateCode: [[Token]] = [
    [street], [subLocality], [city, space, postalCode], [state],
  ]

  private static let layoutByCountry: [String: [[Token]]] = {
    var table: [String: [[Token]]] = [:]
    for code in ["US", "CA", "AU", "PR", "GU", "AS", "VI", "MP", "UM"] {
      table[code] = northAmerican
    }
    for code in ["GB", "IE", "IM", "JE", "GG", "GI", "FK", "SH"] { table[code] = british }
    for code in ["JP", "CN", "KR", "TW"] { table[code] = eastAsian }
    for code in ["IT", "ES", "MX", "BR"] { table[code] = continentalWithProvince }
    for code in ["IN", "NZ", "ZA", "SG", "MY", "PH", "TH", "ID", "PK", "BD", "LK", "NG", "KE"] {
      table[code] = cityStateCode
    }
    return table
  }()

  /// The lines of an address, each a list of pieces, empty parts and empty lines dropped.
  static func lines(of address: CNPostalAddress) -> [[Piece]] {
    let region =
      address.isoCountryCode.isEmpty
      ? (Locale.current.region?.identifier ?? "") : address.isoCountryCode.uppercased()
    let layout = layoutByCountry[region] ?? continental
    var lines: [[Piece]] = []
    for template in layout {
      var pieces: [Piece] = []
      var pendingSeparator: String?
      for token in template {
        switch token {
        case .text(let text):
          if !pieces.isEmpty { pendingSeparator = pendingSeparator ?? text }
        case .part(let key):
          let value = value(of: address, key: key).trimmingCharacters(in: .whitespacesAndNewlines)
          guard !value.isEmpty else { continue }
          if let separator = pendingSeparator { pieces.append(Piece(text: separator, key: nil)) }
          pendingSeparator = nil
          pieces.append(Piece(text: value, key: key))
        }
      }
      if !pieces.isEmpty { lines.append(pieces) }
    }
    let country = address.country.trimmingCharacters(in: .whitespacesAndNewlines)
    if !country.isEmpty { lines.append([Piece(text: country, key: CNPostalAddressCountryKey)]) }
    return lines
  }

  private static func value(of address: CNPostalAddress, key: String) -> String {
    switch key {
    case CNPostalAddressStreetKey: return address.street
    case CNPostalAddressSubLocalityKey: return address.subLocality
    case CNPostalAddressCityKey: return address.city
    case CNPostalAddressSubAdministrativeAreaKey: return address.subAdministrativeArea
    case CNPostalAddressStateKey: return address.state
    case CNPostalAddressPostalCodeKey: return address.postalCode
    default: return ""
    }
  }
}
