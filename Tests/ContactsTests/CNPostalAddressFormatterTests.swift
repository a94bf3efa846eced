import Contacts
import Foundation
import Testing

@Suite struct CNPostalAddressFormatterTests {
  private func address(
    street: String = "", city: String = "", state: String = "", postalCode: String = "",
    country: String = "", isoCountryCode: String = ""
  ) -> CNPostalAddress {
    let address = CNMutablePostalAddress()
    address.street = street
    address.city = city
    address.state = state
    address.postalCode = postalCode
    address.country = country
    address.isoCountryCode = isoCountryCode
    return address
  }

  @Test func unitedStatesPutsTheCodeAfterTheState() {
    let text = CNPostalAddressFormatter.string(
      from: address(
        street: "1 Infinite Loop", city: "Cupertino", state: "CA", postalCode: "95014",
        country: "United States", isoCountryCode: "US"),
      style: .mailingAddress)
    #expect(text == "1 Infinite Loop\nCupertino CA 95014\nUnited States")
  }

  @Test func switzerlandPutsTheCodeBeforeTheCity() {
    let text = CNPostalAddressFormatter.string(
      from: address(
        street: "Bahnhofstrasse 1", city: "Zürich", postalCode: "8001", country: "Switzerland",
        isoCountryCode: "CH"),
      style: .mailingAddress)
    #expect(text == "Bahnhofstrasse 1\n8001 Zürich\nSwitzerland")
  }

  @Test func emptyPartsLeaveNoBlankLinesOrSeparators() {
    let text = CNPostalAddressFormatter.string(
      from: address(city: "Springfield", state: "Illinois", isoCountryCode: "US"),
      style: .mailingAddress)
    #expect(text == "Springfield Illinois")
    #expect(CNPostalAddressFormatter.string(from: CNPostalAddress(), style: .mailingAddress) == "")
  }

  @Test func attributedStringNamesEachPart() throws {
    let formatted = CNPostalAddressFormatter().attributedString(
      from: address(city: "Zürich", postalCode: "8001", isoCountryCode: "CH"),
      withDefaultAttributes: [:])
    #expect(formatted.string == "8001 Zürich")
    let key = NSAttributedString.Key(CNPostalAddressPropertyAttribute)
    let first = formatted.attribute(key, at: 0, effectiveRange: nil) as? String
    let last = formatted.attribute(key, at: 6, effectiveRange: nil) as? String
    #expect(first == CNPostalAddressPostalCodeKey)
    #expect(last == CNPostalAddressCityKey)
  }

  @Test func formatterStringForRejectsOtherValues() {
    #expect(CNPostalAddressFormatter().string(for: "not an address") == nil)
  }
}
