import Foundation
import TestSupport
import Testing

@testable import LocationFormats

@Suite struct GeoJSONRegionsTests {
  @Test func readsFeatureCollection() throws {
    let path = Paths.fixture("geojson", "regions.geojson")
    let regions = try GeoJSONRegions.parse(path: path)
    #expect(
      regions == [
        GeoJSONRegion(identifier: "office", latitude: 52.5186, longitude: 13.3762, radius: 150),
        GeoJSONRegion(
          identifier: "42", latitude: 52.52, longitude: 13.405, radius: 75.5, notifyOnEntry: false),
        GeoJSONRegion(
          identifier: "station", latitude: -45, longitude: -179.99, radius: 0, notifyOnExit: false),
      ])
  }

  @Test func polygonIsRejectedNamingTheFeature() throws {
    let path = Paths.fixture("geojson", "polygon_feature.geojson")
    let error = #expect(throws: FormatError.self) { _ = try GeoJSONRegions.parse(path: path) }
    #expect(error?.code == .invalidValue)
    #expect(error?.file == path)
    #expect(
      error?.message == "feature 1: the geometry is a Polygon; only Point features are regions")
  }

  @Test func singleFeatureIsAccepted() throws {
    let json = """
      {"type": "Feature", "id": 7, "properties": {"radius": 10},
       "geometry": {"type": "Point", "coordinates": [2.29, 48.85]}}
      """
    let regions = try GeoJSONRegions.parse(data: Data(json.utf8))
    #expect(regions.map(\.identifier) == ["7"])
    #expect(regions.first?.latitude == 48.85)
  }

  static func feature(_ body: String) -> String {
    "{\"type\": \"FeatureCollection\", \"features\": [{\"type\": \"Feature\", \"id\": \"ok\", "
      + "\"properties\": {\"radius\": 5}, \"geometry\": {\"type\": \"Point\", "
      + "\"coordinates\": [0, 0]}}, \(body)]}"
  }

  struct BadCase: Sendable, CustomTestStringConvertible {
    let json: String
    let code: FormatError.Code
    let message: String
    var testDescription: String { message }
  }

  static let badCases: [BadCase] = [
    BadCase(
      json: "{\"type\": \"FeatureCollection\",\n \"features\": [,]}", code: .malformed,
      message: "not JSON"),
    BadCase(json: "[1, 2]", code: .malformed, message: "not a JSON object"),
    BadCase(json: "{\"type\": \"Topology\"}", code: .malformed, message: "\"Topology\""),
    BadCase(
      json: "{\"type\": \"FeatureCollection\", \"features\": []}", code: .empty,
      message: "no features"),
    BadCase(
      json: feature(
        "{\"type\": \"Feature\", \"id\": \"x\", \"geometry\": {\"type\": \"Point\", \"coordinates\": [0, 0]}}"
      ),
      code: .missingField, message: "feature 1: no \"radius\""),
    BadCase(
      json: feature(
        "{\"type\": \"Feature\", \"properties\": {\"radius\": 1}, \"geometry\": {\"type\": \"Point\", \"coordinates\": [0, 0]}}"
      ),
      code: .missingField, message: "feature 1: no identifier"),
    BadCase(
      json: feature(
        "{\"type\": \"Feature\", \"id\": \"x\", \"properties\": {\"radius\": 1}, \"geometry\": {\"type\": \"Point\", \"coordinates\": [0, 91]}}"
      ),
      code: .invalidValue, message: "feature 1: latitude outside"),
    BadCase(
      json: feature(
        "{\"type\": \"Feature\", \"id\": \"x\", \"properties\": {\"radius\": -3}, \"geometry\": {\"type\": \"Point\", \"coordinates\": [0, 0]}}"
      ),
      code: .invalidValue, message: "feature 1: \"radius\" is not"),
    BadCase(
      json: feature(
        "{\"type\": \"Feature\", \"id\": \"x\", \"properties\": {\"radius\": true}, \"geometry\": {\"type\": \"Point\", \"coordinates\": [0, 0]}}"
      ),
      code: .invalidValue, message: "feature 1: \"radius\" is not"),
    BadCase(
      json: feature(
        "{\"type\": \"Feature\", \"id\": \"x\", \"properties\": {\"radius\": 1, \"notifyOnExit\": 1}, \"geometry\": {\"type\": \"Point\", \"coordinates\": [0, 0]}}"
      ),
      code: .invalidValue, message: "feature 1: \"notifyOnExit\" is not a boolean"),
    BadCase(
      json: feature(
        "{\"type\": \"Feature\", \"id\": \"ok\", \"properties\": {\"radius\": 1}, \"geometry\": {\"type\": \"Point\", \"coordinates\": [0, 0]}}"
      ),
      code: .invalidValue, message: "feature 1: identifier \"ok\" is already used by feature 0"),
    BadCase(
      json: feature(
        "{\"type\": \"Feature\", \"id\": \"x\", \"properties\": {\"radius\": 1}, \"geometry\": {\"type\": \"Point\", \"coordinates\": [\"0\", 0]}}"
      ),
      code: .invalidValue, message: "feature 1: a coordinate is not a number"),
    BadCase(
      json: feature(
        "{\"type\": \"Feature\", \"id\": \"x\", \"properties\": {\"radius\": 1}, \"geometry\": {\"type\": \"Point\", \"coordinates\": [0]}}"
      ),
      code: .invalidValue, message: "feature 1: \"coordinates\" is not [longitude, latitude]"),
    BadCase(json: feature("17"), code: .malformed, message: "feature 1: not an object"),
    BadCase(
      json: feature("{\"type\": \"Feature\", \"id\": \"x\", \"properties\": {\"radius\": 1}}"),
      code: .missingField, message: "feature 1: no \"geometry\" object"),
  ]

  @Test(arguments: badCases)
  func badFilesGiveClearErrors(_ bad: BadCase) {
    let error = #expect(throws: FormatError.self) {
      _ = try GeoJSONRegions.parse(data: Data(bad.json.utf8), file: "r.geojson")
    }
    #expect(error?.code == bad.code)
    #expect(error?.file == "r.geojson")
    #expect(error?.message.contains(bad.message) == true, "\(error?.message ?? "")")
  }

  @Test func invalidJSONNamesTheLine() {
    let error = #expect(throws: FormatError.self) {
      _ = try GeoJSONRegions.parse(data: Data("{\n\"type\":\n nope}".utf8), file: "r.geojson")
    }
    #expect(error?.line == 3)
  }
}
