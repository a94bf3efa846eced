import Contacts
import CoreLocation
import CoreLocationTesting
import Foundation
import Testing

@Suite struct CLPlacemarkTests {
  private func placemark(_ place: SimulatedPlacemark) throws -> CLPlacemark {
    let world = SimulatedEnvironment()
    world.geocoder.setPlacemarks([place])
    let box = PlacemarkBox()
    world.run {
      CLGeocoder().reverseGeocodeLocation(
        CLLocation(latitude: place.coordinate.latitude, longitude: place.coordinate.longitude)
      ) { placemarks, _ in box.set(placemarks?.first) }
    }
    world.pump()
    return try #require(box.value)
  }

  private let cupertino = SimulatedPlacemark(
    coordinate: CLLocationCoordinate2D(latitude: 37.3318, longitude: -122.0312), radius: 150,
    name: "Apple Park", thoroughfare: "Infinite Loop", subThoroughfare: "1", locality: "Cupertino",
    administrativeArea: "CA", subAdministrativeArea: "Santa Clara", postalCode: "95014",
    isoCountryCode: "US", country: "United States", timeZone: "America/Los_Angeles")

  @Test func fieldsLocationRegionAndTimeZone() throws {
    let mark = try placemark(cupertino)
    #expect(mark.name == "Apple Park")
    #expect(mark.locality == "Cupertino")
    #expect(mark.location?.coordinate.latitude == 37.3318)
    #expect(mark.location?.horizontalAccuracy == 150)
    let region = try #require(mark.region as? CLCircularRegion)
    #expect(region.radius == 150)
    #expect(mark.timeZone == TimeZone(identifier: "America/Los_Angeles"))
    #expect(mark.inlandWater == nil && mark.ocean == nil)
    #expect(mark.description.contains("Apple Park, 1 Infinite Loop, Cupertino CA 95014"))
    #expect(mark.description.contains("@ <+37.33180000,-122.03120000>"))
  }

  @Test func postalAddressFollowsTheCountry() throws {
    let address = try #require(try placemark(cupertino).postalAddress)
    #expect(address.street == "1 Infinite Loop")
    #expect(address.city == "Cupertino")
    #expect(address.state == "CA")
    #expect(
      CNPostalAddressFormatter.string(from: address, style: .mailingAddress)
        == "1 Infinite Loop\nCupertino CA 95014\nUnited States")
  }

  @Test func atSeaThereIsNoPostalAddress() throws {
    let sea = SimulatedPlacemark(
      coordinate: CLLocationCoordinate2D(latitude: 30, longitude: -40), radius: 100_000,
      name: "North Atlantic Ocean", ocean: "North Atlantic Ocean")
    let mark = try placemark(sea)
    #expect(mark.postalAddress == nil)
    #expect(mark.ocean == "North Atlantic Ocean")
  }

  @Test func copiesAndInitPlacemarkKeepEveryField() throws {
    let mark = try placemark(cupertino)
    let copy = try #require(mark.copy() as? CLPlacemark)
    let other = CLPlacemark(placemark: mark)
    for candidate in [copy, other] {
      #expect(candidate.name == mark.name)
      #expect(candidate.postalAddress == mark.postalAddress)
      #expect(candidate.location?.coordinate.longitude == mark.location?.coordinate.longitude)
      #expect(candidate.timeZone == mark.timeZone)
    }
  }

  @Test func secureCodingRoundTrips() throws {
    let mark = try placemark(cupertino)
    let data = try NSKeyedArchiver.archivedData(withRootObject: mark, requiringSecureCoding: true)
    let decoded = try #require(
      try NSKeyedUnarchiver.unarchivedObject(ofClass: CLPlacemark.self, from: data))
    #expect(decoded.name == "Apple Park")
    #expect(decoded.subThoroughfare == "1")
    #expect(decoded.postalCode == "95014")
    #expect(decoded.region?.identifier == mark.region?.identifier)
    #expect(decoded.location?.timestamp == mark.location?.timestamp)
    #expect(CLPlacemark.supportsSecureCoding)
  }

  @Test func deprecatedAddressDictionary() throws {
    let mark = try placemark(cupertino)
    let found = deprecatedGeocoding.addressDictionary(mark)
    let dictionary = try #require(found)
    #expect(dictionary["City"] as? String == "Cupertino")
    #expect(dictionary["ZIP"] as? String == "95014")
    #expect(dictionary["Street"] as? String == "1 Infinite Loop")
    #expect((dictionary["FormattedAddressLines"] as? [String])?.count == 3)
  }
}

private final class PlacemarkBox: @unchecked Sendable {
  // @unchecked: written once by the completion handler on the test's own thread (the simulated
  // world runs handlers when it is pumped), read after.
  private(set) var value: CLPlacemark?
  func set(_ placemark: CLPlacemark?) { value = placemark }
}
