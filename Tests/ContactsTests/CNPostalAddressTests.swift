import Contacts
import Foundation
import Testing

@Suite struct CNPostalAddressTests {
  @Test func keysHaveApplesValues() {
    #expect(CNPostalAddressStreetKey == "street")
    #expect(CNPostalAddressSubLocalityKey == "subLocality")
    #expect(CNPostalAddressCityKey == "city")
    #expect(CNPostalAddressSubAdministrativeAreaKey == "subAdministrativeArea")
    #expect(CNPostalAddressStateKey == "state")
    #expect(CNPostalAddressPostalCodeKey == "postalCode")
    #expect(CNPostalAddressCountryKey == "country")
    #expect(CNPostalAddressISOCountryCodeKey == "ISOCountryCode")
    #expect(CNPostalAddressFormatterStyle.mailingAddress.rawValue == 0)
  }

  @Test func copiesAreEqualAndIndependent() throws {
    let address = CNMutablePostalAddress()
    address.city = "Zürich"
    address.isoCountryCode = "CH"
    let frozen = try #require(address.copy() as? CNPostalAddress)
    #expect(!(frozen is CNMutablePostalAddress))
    #expect(frozen == address)
    address.city = "Bern"
    #expect(frozen.city == "Zürich")
    let thawed = try #require(frozen.mutableCopy() as? CNMutablePostalAddress)
    thawed.postalCode = "8001"
    #expect(thawed != frozen)
    #expect(frozen.hash == (frozen.copy() as? CNPostalAddress)?.hash)
  }

  @Test func secureCodingRoundTrips() throws {
    let address = CNMutablePostalAddress()
    address.street = "Bahnhofstrasse 1"
    address.city = "Zürich"
    address.country = "Switzerland"
    let data = try NSKeyedArchiver.archivedData(
      withRootObject: address, requiringSecureCoding: true)
    let decoded = try #require(
      try NSKeyedUnarchiver.unarchivedObject(ofClass: CNPostalAddress.self, from: data))
    #expect(decoded == address)
    #expect(CNPostalAddress.supportsSecureCoding)
  }

  @Test func localizedNamesOfKeys() {
    #expect(CNPostalAddress.localizedString(forKey: CNPostalAddressPostalCodeKey) == "Postal Code")
    #expect(CNPostalAddress.localizedString(forKey: "unknown") == "unknown")
  }
}
