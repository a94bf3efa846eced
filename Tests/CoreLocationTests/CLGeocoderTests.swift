import Contacts
import CoreLocation
import CoreLocationTesting
import Foundation
import Synchronization
import Testing

/// What a completion handler received.
private final class Received: Sendable {
  private let calls = Mutex<[([CLPlacemark]?, CLError?)]>([])

  var handler: @Sendable ([CLPlacemark]?, (any Error)?) -> Void {
    { placemarks, error in
      self.calls.withLock { $0.append((placemarks, error as? CLError)) }
    }
  }

  var all: [([CLPlacemark]?, CLError?)] { calls.withLock { $0 } }
  var first: ([CLPlacemark]?, CLError?)? { all.first }
}

@Suite struct CLGeocoderTests {
  private let zurich = CLLocation(latitude: 47.3769, longitude: 8.5417)

  @Test func reverseInASimulatedWorldUsesTheGazetteerAndAnswersWhenDriven() throws {
    let world = SimulatedEnvironment()
    let geocoder = CLGeocoder()
    let received = Received()
    world.run { geocoder.reverseGeocodeLocation(zurich, completionHandler: received.handler) }
    #expect(geocoder.isGeocoding)
    #expect(received.all.isEmpty)
    world.pump()
    #expect(!geocoder.isGeocoding)
    let (placemarks, error) = try #require(received.first)
    #expect(error == nil)
    let placemark = try #require(placemarks?.first)
    #expect(placemark.locality == "Zürich")
    #expect(placemark.isoCountryCode == "CH")
    #expect(placemark.country == "Switzerland")
    #expect(placemark.timeZone?.identifier == "Europe/Zurich")
    #expect(placemark.thoroughfare == nil)
    let address = try #require(placemark.postalAddress)
    #expect(
      CNPostalAddressFormatter.string(from: address, style: .mailingAddress)
        == "Zürich\nSwitzerland")
  }

  @Test func preferredLocaleTranslatesTheCountry() throws {
    let world = SimulatedEnvironment()
    let received = Received()
    world.run {
      CLGeocoder().reverseGeocodeLocation(
        zurich, preferredLocale: Locale(identifier: "fr_FR"), completionHandler: received.handler)
    }
    world.pump()
    #expect(received.first?.0?.first?.country == "Suisse")
  }

  @Test func cancelGeocodeCallsTheHandlerWithCanceled() throws {
    let world = SimulatedEnvironment()
    let geocoder = CLGeocoder()
    let received = Received()
    world.run { geocoder.geocodeAddressString("Zurich", completionHandler: received.handler) }
    geocoder.cancelGeocode()
    #expect(!geocoder.isGeocoding)
    world.pump()
    #expect(received.all.count == 1)
    #expect(received.first?.0 == nil)
    #expect(received.first?.1?.code == .geocodeCanceled)
    geocoder.cancelGeocode()  // nothing pending: nothing happens
    world.pump()
    #expect(received.all.count == 1)
  }

  @Test func aSecondRequestCancelsTheFirst() throws {
    let world = SimulatedEnvironment()
    let geocoder = CLGeocoder()
    let first = Received()
    let second = Received()
    world.run {
      geocoder.geocodeAddressString("Zurich", completionHandler: first.handler)
      geocoder.geocodeAddressString("Munich", completionHandler: second.handler)
    }
    world.pump()
    #expect(first.first?.1?.code == .geocodeCanceled)
    #expect(second.first?.0?.first?.locality == "Munich")
  }

  @Test func badInputIsNoResult() throws {
    let world = SimulatedEnvironment()
    let received = Received()
    world.run {
      CLGeocoder().reverseGeocodeLocation(
        CLLocation(latitude: .nan, longitude: 8), completionHandler: received.handler)
    }
    world.pump()
    #expect(received.first?.1?.code == .geocodeFoundNoResult)
    let empty = Received()
    world.run { CLGeocoder().geocodeAddressString("", completionHandler: empty.handler) }
    world.pump()
    #expect(empty.first?.1?.code == .geocodeFoundNoResult)
  }

  @Test func streetsTheDataLacksGiveAPartialResult() throws {
    let world = SimulatedEnvironment()
    let received = Received()
    world.run {
      CLGeocoder().geocodeAddressString(
        "Bahnhofstrasse 1, Zürich", completionHandler: received.handler)
    }
    world.pump()
    #expect(received.first?.0?.first?.locality == "Zürich")
    #expect(received.first?.1?.code == .geocodeFoundPartialResult)
  }

  @Test func preferredRegionRanksFirst() throws {
    let world = SimulatedEnvironment()
    let received = Received()
    let texas = CLCircularRegion(
      center: CLLocationCoordinate2D(latitude: 33.66, longitude: -95.55), radius: 50_000,
      identifier: "texas")
    world.run {
      CLGeocoder().geocodeAddressString("Paris", in: texas, completionHandler: received.handler)
    }
    world.pump()
    let placemarks = try #require(received.first?.0)
    #expect(placemarks.first?.administrativeArea == "Texas")
    #expect(placemarks.contains { $0.isoCountryCode == "FR" })
  }

  @Test func postalAddressesAreGeocodedByTheirCity() throws {
    let world = SimulatedEnvironment()
    let received = Received()
    let address = CNMutablePostalAddress()
    address.city = "Springfield"
    address.state = "IL"
    address.isoCountryCode = "US"
    world.run { CLGeocoder().geocodePostalAddress(address, completionHandler: received.handler) }
    world.pump()
    #expect(received.first?.0?.first?.administrativeArea == "Illinois")
    #expect(received.first?.1 == nil)
  }

  @Test func deprecatedAddressDictionaryStillWorks() throws {
    let world = SimulatedEnvironment()
    let received = Received()
    world.run {
      deprecatedGeocoding.geocode(
        CLGeocoder(), ["City": "Cambridge", "Country": "UK"], received.handler)
    }
    world.pump()
    #expect(received.first?.0?.first?.isoCountryCode == "GB")
  }

  @Test func scriptedPlacemarksAnswerAndRequestsAreRecorded() throws {
    let world = SimulatedEnvironment()
    world.geocoder.setPlacemarks([
      SimulatedPlacemark(
        coordinate: CLLocationCoordinate2D(latitude: 52.37, longitude: 4.90), radius: 2_000,
        name: "Dam Square", thoroughfare: "Dam", subThoroughfare: "1", locality: "Amsterdam",
        postalCode: "1012 JS", isoCountryCode: "NL", country: "Netherlands",
        areasOfInterest: ["Royal Palace"], timeZone: "Europe/Amsterdam")
    ])
    let reverse = Received()
    let forward = Received()
    let nowhere = Received()
    world.run {
      CLGeocoder().reverseGeocodeLocation(
        CLLocation(latitude: 52.371, longitude: 4.901), completionHandler: reverse.handler)
    }
    world.pump()
    world.run { CLGeocoder().geocodeAddressString("amsterdam", completionHandler: forward.handler) }
    world.pump()
    world.run {
      CLGeocoder().reverseGeocodeLocation(
        CLLocation(latitude: 48.85, longitude: 2.35), completionHandler: nowhere.handler)
    }
    world.pump()
    let placemark = try #require(reverse.first?.0?.first)
    #expect(placemark.name == "Dam Square")
    #expect(placemark.areasOfInterest == ["Royal Palace"])
    let address = try #require(placemark.postalAddress)
    #expect(
      CNPostalAddressFormatter.string(from: address, style: .mailingAddress)
        == "Dam 1\n1012 JS Amsterdam\nNetherlands")
    #expect(forward.first?.0?.first?.locality == "Amsterdam")
    #expect(nowhere.first?.1?.code == .geocodeFoundNoResult)
    #expect(world.geocoder.requests.count == 3)
    #expect(world.geocoder.requests[1] == .forward("amsterdam"))
  }

  @Test func scriptedFailures() throws {
    let world = SimulatedEnvironment()
    world.geocoder.failRequests(with: .network)
    let received = Received()
    world.run { CLGeocoder().reverseGeocodeLocation(zurich, completionHandler: received.handler) }
    world.pump()
    #expect(received.first?.1?.code == .network)
    #expect(received.first?.1?.errorCode == 2)
  }

  @Test func asyncFormsReturnOnTheCallersTask() async throws {
    let world = SimulatedEnvironment()
    let placemarks = try await world.runAsync {
      try await CLGeocoder().geocodeAddressString("Paris, Texas")
    }
    #expect(placemarks.first?.administrativeArea == "Texas")
    await #expect(throws: CLError.self) {
      try await world.runAsync { try await CLGeocoder().geocodeAddressString("xq zzkw vvq") }
    }
  }

  @Test func asyncFormsWorkOutsideASimulation() async throws {
    let geocoder = CLGeocoder()
    let placemarks = try await geocoder.reverseGeocodeLocation(
      CLLocation(latitude: 48.8566, longitude: 2.3522), preferredLocale: Locale(identifier: "de"))
    #expect(placemarks.first?.locality == "Paris")
    #expect(placemarks.first?.country == "Frankreich")
    let munich = try await geocoder.geocodeAddressString("München")
    #expect(munich.first?.isoCountryCode == "DE")
    do {
      _ = try await geocoder.reverseGeocodeLocation(CLLocation(latitude: 100, longitude: 0))
      Issue.record("an invalid coordinate gave an answer")
    } catch let error as CLError {
      #expect(error.code == .geocodeFoundNoResult)
    }
  }
}

/// Calls the deprecated API without deprecation warnings (the test build treats warnings as
/// errors).
protocol GeocoderDeprecatedAPI {
  static func geocode(
    _ geocoder: CLGeocoder, _ dictionary: [AnyHashable: Any],
    _ handler: @escaping @Sendable ([CLPlacemark]?, (any Error)?) -> Void)
  static func addressDictionary(_ placemark: CLPlacemark) -> [AnyHashable: Any]?
}

/// The shim as its protocol type, so calls go through the (non-deprecated) requirements.
var deprecatedGeocoding: any GeocoderDeprecatedAPI.Type { GeocoderDeprecatedShim.self }

enum GeocoderDeprecatedShim: GeocoderDeprecatedAPI {
  @available(*, deprecated)
  static func geocode(
    _ geocoder: CLGeocoder, _ dictionary: [AnyHashable: Any],
    _ handler: @escaping @Sendable ([CLPlacemark]?, (any Error)?) -> Void
  ) {
    geocoder.geocodeAddressDictionary(dictionary, completionHandler: handler)
  }

  @available(*, deprecated)
  static func addressDictionary(_ placemark: CLPlacemark) -> [AnyHashable: Any]? {
    placemark.addressDictionary
  }
}
