import LocationModel

/// Writes fixes as a GeoJSON (RFC 7946) FeatureCollection of Point features, one per fix, in
/// order, for `locationctl export --geojson`.
///
/// Our choice: points rather than one LineString, so that every point keeps its own time and
/// measures (a LineString has one set of properties for the whole line), any number of points is
/// valid GeoJSON (a LineString needs two), and the document is written as it comes, without
/// holding the track. Each feature is
///
///     {"type":"Feature","geometry":{"type":"Point","coordinates":[LON,LAT,ALT]},
///      "properties":{"time":"2026-12-01T10:00:00Z","horizontalAccuracy":4.5,...}}
///
/// `coordinates` is `[longitude, latitude]` and the altitude (metres above mean sea level) third
/// when known (RFC 7946, 3.1.1). `properties` has `time` (UTC, ISO 8601, milliseconds when the
/// time has a fraction), and `horizontalAccuracy`, `verticalAccuracy` (metres, 68 %), `speed`
/// (m/s) and `course` (degrees from true north) when known (not negative). One feature per line.
///
/// Write ``header``, the features joined by ``separator``, then ``footer``.
package enum GeoJSONTrackWriter {
  /// The text before the first feature.
  package static let header = "{\"type\":\"FeatureCollection\",\"features\":[\n"
  /// The text between two features.
  package static let separator = ",\n"
  /// The text after the last feature.
  package static let footer = "\n]}\n"

  /// One feature, without a separator.
  /// - Parameter fix: The point; its coordinate must be valid and its numbers finite.
  /// - Returns: The feature's JSON text.
  package static func feature(_ fix: Fix) -> String {
    var coordinates =
      "[\(JSONObjectWriter.number(fix.longitude)),\(JSONObjectWriter.number(fix.latitude))"
    if let altitude = fix.altitude, altitude.isFinite {
      coordinates += ",\(JSONObjectWriter.number(altitude))"
    }
    coordinates += "]"
    var properties = JSONObjectWriter()
    properties.add("time", GPXTrackWriter.isoTime(fix.time))
    // A measure when known (not negative); no array of pairs built for every point.
    func measure(_ name: String, _ value: Double) {
      if value >= 0 && value.isFinite { properties.add(name, value) }
    }
    measure("horizontalAccuracy", fix.horizontalAccuracy)
    measure("verticalAccuracy", fix.verticalAccuracy)
    measure("speed", fix.speed)
    measure("course", fix.course)
    return "{\"type\":\"Feature\",\"geometry\":{\"type\":\"Point\",\"coordinates\":"
      + coordinates + "},\"properties\":" + properties.result + "}"
  }
}
