import CoreLocation
import Foundation
import Testing

@Suite struct CLLocationCoordinate2DTests {
  @Test func defaultInitializerIsZeroZero() {
    let coordinate = CLLocationCoordinate2D()
    #expect(coordinate.latitude == 0)
    #expect(coordinate.longitude == 0)
  }

  @Test func makeKeepsValuesUnchanged() {
    let coordinate = CLLocationCoordinate2DMake(12.5, -45.25)
    #expect(coordinate.latitude == 12.5)
    #expect(coordinate.longitude == -45.25)
    let outOfRange = CLLocationCoordinate2DMake(100, 400)
    #expect(outOfRange.latitude == 100)
    #expect(outOfRange.longitude == 400)
  }

  @Test func invalidConstantIsMinus180AndInvalid() {
    #expect(kCLLocationCoordinate2DInvalid.latitude == -180)
    #expect(kCLLocationCoordinate2DInvalid.longitude == -180)
    #expect(!CLLocationCoordinate2DIsValid(kCLLocationCoordinate2DInvalid))
  }

  @Test(arguments: [
    (0.0, 0.0, true),
    (90.0, 180.0, true),
    (-90.0, -180.0, true),
    (90.0, -180.0, true),
    (45.5, 179.999_999, true),
    (91.0, 0.0, false),
    (-90.000_001, 0.0, false),
    (0.0, 180.000_001, false),
    (0.0, -181.0, false),
    (Double.nan, 0.0, false),
    (0.0, Double.nan, false),
    (Double.infinity, 0.0, false),
    (0.0, -Double.infinity, false),
  ])
  func validity(latitude: Double, longitude: Double, valid: Bool) {
    let coordinate = CLLocationCoordinate2D(latitude: latitude, longitude: longitude)
    #expect(CLLocationCoordinate2DIsValid(coordinate) == valid)
  }
}
