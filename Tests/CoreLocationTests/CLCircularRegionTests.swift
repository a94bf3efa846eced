import CoreLocation
import Foundation
import Testing

@Suite struct CLCircularRegionTests {
  static let zurich = CLLocationCoordinate2D(latitude: 47.3769, longitude: 8.5417)

  static func region(
    _ identifier: String = "zurich", center: CLLocationCoordinate2D = zurich, radius: Double = 500
  ) -> CLCircularRegion {
    CLCircularRegion(center: center, radius: radius, identifier: identifier)
  }

  /// A point `metres` north of `coordinate` (one degree of latitude is about 111.2 km there).
  static func north(of coordinate: CLLocationCoordinate2D, metres: Double) -> CLLocationCoordinate2D
  {
    CLLocationCoordinate2D(
      latitude: coordinate.latitude + metres / 111_200, longitude: coordinate.longitude)
  }

  @Test func initializerAndDefaults() {
    let region = Self.region()
    #expect(region.identifier == "zurich")
    #expect(region.center.latitude == Self.zurich.latitude)
    #expect(region.center.longitude == Self.zurich.longitude)
    #expect(region.radius == 500)
    #expect(region.notifyOnEntry)
    #expect(region.notifyOnExit)
    region.notifyOnEntry = false
    region.notifyOnExit = false
    #expect(!region.notifyOnEntry)
    #expect(!region.notifyOnExit)
  }

  @Test func containsCentreAndNearbyPoints() {
    let region = Self.region()
    #expect(region.contains(Self.zurich))
    #expect(region.contains(Self.north(of: Self.zurich, metres: 400)))
    #expect(!region.contains(Self.north(of: Self.zurich, metres: 600)))
    #expect(!region.contains(CLLocationCoordinate2D(latitude: -47.3769, longitude: -171.4583)))
  }

  @Test func boundaryIsInside() {
    let centre = CLLocation(latitude: Self.zurich.latitude, longitude: Self.zurich.longitude)
    let point = Self.north(of: Self.zurich, metres: 500)
    let exact = centre.distance(
      from: CLLocation(latitude: point.latitude, longitude: point.longitude))
    let region = Self.region(radius: exact)
    #expect(region.contains(point))
  }

  @Test func zeroRadiusContainsOnlyTheCentre() {
    let region = Self.region(radius: 0)
    #expect(region.contains(Self.zurich))
    #expect(!region.contains(Self.north(of: Self.zurich, metres: 1)))
  }

  @Test(arguments: [
    CLLocationCoordinate2D(latitude: .nan, longitude: 8.5),
    CLLocationCoordinate2D(latitude: 47, longitude: .infinity),
    CLLocationCoordinate2D(latitude: 91, longitude: 8.5),
    kCLLocationCoordinate2DInvalid,
  ])
  func invalidCoordinatesAreOutside(coordinate: CLLocationCoordinate2D) {
    #expect(!Self.region(radius: 20_000_000).contains(coordinate))
  }

  @Test func regionAcrossTheAntimeridian() {
    let centre = CLLocationCoordinate2D(latitude: -16.5, longitude: 179.99)
    let region = Self.region(center: centre, radius: 5_000)
    #expect(region.contains(CLLocationCoordinate2D(latitude: -16.5, longitude: -179.99)))
  }

  @Test func equalityUsesIdentifierAndGeometry() {
    let a = Self.region()
    let b = Self.region()
    b.notifyOnEntry = false
    #expect(a == b)
    #expect(a.hashValue == b.hashValue)
    #expect(a != Self.region("other"))
    #expect(a != Self.region(radius: 501))
    #expect(a != Self.region(center: CLLocationCoordinate2D(latitude: 47, longitude: 8.5417)))
    let set: Set<CLRegion> = [a, b, Self.region("other")]
    #expect(set.count == 2)
  }

  @Test func circularRegionIsNotEqualToBaseRegion() {
    let base = deprecated.circularRegion(center: Self.zurich, radius: 500, identifier: "zurich")
    #expect(base != Self.region())
    #expect(Self.region() != base)
  }

  @Test func copyIsIndependent() throws {
    let region = Self.region()
    region.notifyOnExit = false
    let copy = try #require(region.copy() as? CLCircularRegion)
    #expect(copy !== region)
    #expect(copy == region)
    #expect(!copy.notifyOnExit)
    #expect(copy.notifyOnEntry)
    copy.notifyOnEntry = false
    #expect(region.notifyOnEntry)
  }

  @Test func secureCodingRoundTrip() throws {
    #expect(CLCircularRegion.supportsSecureCoding)
    let region = Self.region("home", radius: 123.5)
    region.notifyOnEntry = false
    let data = try NSKeyedArchiver.archivedData(withRootObject: region, requiringSecureCoding: true)
    let decoded = try #require(
      try NSKeyedUnarchiver.unarchivedObject(ofClass: CLCircularRegion.self, from: data))
    #expect(decoded == region)
    #expect(decoded.identifier == "home")
    #expect(decoded.radius == 123.5)
    #expect(decoded.center.latitude == Self.zurich.latitude)
    #expect(!decoded.notifyOnEntry)
    #expect(decoded.notifyOnExit)
  }

  @Test func description() {
    let region = Self.region("home", radius: 100)
    #expect(
      region.description
        == "CLCircularRegion (identifier:'home', center:<+47.37690000,+8.54170000>, radius:100.00m)"
    )
  }

  @Test func deprecatedBaseRegionAPI() throws {
    let region = deprecated.circularRegion(center: Self.zurich, radius: 500, identifier: "old")
    #expect(type(of: region) == CLRegion.self)
    #expect(region.identifier == "old")
    #expect(deprecated.center(of: region).latitude == Self.zurich.latitude)
    #expect(deprecated.radius(of: region) == 500)
    let containsCentre = deprecated.contains(region, Self.zurich)
    let containsFarPoint = deprecated.contains(region, Self.north(of: Self.zurich, metres: 600))
    #expect(containsCentre)
    #expect(!containsFarPoint)
    let copy = try #require(region.copy() as? CLRegion)
    #expect(copy == region)
    let data = try NSKeyedArchiver.archivedData(withRootObject: region, requiringSecureCoding: true)
    let decoded = try #require(
      try NSKeyedUnarchiver.unarchivedObject(ofClass: CLRegion.self, from: data))
    #expect(decoded == region)
  }

  @Test func circularRegionThroughItsBaseType() {
    let region: CLRegion = Self.region()
    let containsCentre = deprecated.contains(region, Self.zurich)
    #expect(containsCentre)
    #expect(deprecated.radius(of: region) == 500)
  }
}
