import LocationModel
import Testing

@testable import LocationFormats

/// The GeoJSON track writer's features, as its documentation promises them: `[lon, lat]` with the
/// altitude third when known, `time` in UTC with milliseconds when it has a fraction, and each
/// measure only when known.
@Suite struct GeoJSONTrackWriterTests {
  @Test func aFixWithEveryMeasure() {
    let fix = Fix(
      latitude: 52.6171, longitude: -5.0000001, altitude: -0.4, horizontalAccuracy: 4.5,
      verticalAccuracy: 3, speed: 2.5, course: 0, time: 1_706_858_149.25)
    #expect(
      GeoJSONTrackWriter.feature(fix)
        == #"{"type":"Feature","geometry":{"type":"Point","coordinates":[-5.0000001,52.6171,-0.4]},"#
        + #""properties":{"time":"2024-02-02T07:15:49.250Z","horizontalAccuracy":4.5,"#
        + #""verticalAccuracy":3,"speed":2.5,"course":0}}"#)
  }

  @Test func unknownMeasuresAreLeftOut() {
    let fix = Fix(
      latitude: -90, longitude: 180, horizontalAccuracy: -1, speed: .nan, time: 1_706_858_149)
    #expect(
      GeoJSONTrackWriter.feature(fix)
        == #"{"type":"Feature","geometry":{"type":"Point","coordinates":[180,-90]},"#
        + #""properties":{"time":"2024-02-02T07:15:49Z"}}"#)
    let timeless = Fix(latitude: 1, longitude: 2, horizontalAccuracy: 5, time: .nan)
    #expect(
      GeoJSONTrackWriter.feature(timeless)
        == #"{"type":"Feature","geometry":{"type":"Point","coordinates":[2,1]},"#
        + #""properties":{"horizontalAccuracy":5}}"#)
  }

  @Test func aCollectionOfFeaturesIsOneJSONDocument() throws {
    let fixes = [
      Fix(latitude: 1, longitude: 2, horizontalAccuracy: 5, time: 0),
      Fix(latitude: 3, longitude: 4, horizontalAccuracy: 5, time: 1),
    ]
    let text =
      GeoJSONTrackWriter.header
      + fixes.map(GeoJSONTrackWriter.feature).joined(separator: GeoJSONTrackWriter.separator)
      + GeoJSONTrackWriter.footer
    let value = try JSONParser.parse(Array(text.utf8), strict: true)
    guard case .object(let root) = value, case .array(let features)? = root["features"] else {
      Issue.record("not a FeatureCollection: \(text)")
      return
    }
    #expect(root["type"] == .string("FeatureCollection"))
    #expect(features.count == 2)
  }
}
