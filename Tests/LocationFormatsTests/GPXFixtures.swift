import Foundation
import LocationFormats
import TestSupport

/// The GPX fixtures from other tools, and decoded GPX rendered for the `.chk` expectations
/// written beside each fixture.
enum GPXFixtures {
  /// The GPX files from other tools' test suites (provenance and licence in
  /// `Tests/Fixtures/gpx/README.md`).
  static let otherTools = [
    "gpxpy-cerknicko-jezero.gpx", "gpxpy-gpx1.0_with_all_fields.gpx",
    "gpxpy-gpx1.1_with_all_fields.gpx", "gpxpy-route.gpx", "gpxpy-unicode_with_bom.gpx",
    "gpxpy-unicode_with_bom_noencoding.gpx", "gpxpy-track-with-empty-segment.gpx",
    "gpxpy-around-visnjan-with-car.gpx", "gpxpy-gpx_with_garmin_extension.gpx",
    "gpxpy-track-with-small-floats.gpx", "gpxpy-track_with_dilution_errors.gpx",
    "gpxgo-iso8859-1encoded.gpx",
  ]

  /// One line per point: kind, track, segment, line, latitude, longitude, altitude, time,
  /// speed, course, horizontal and vertical accuracy, quality, satellites.
  static func render(_ points: [GPXPoint]) -> String {
    var out = "# kind track segment line lat lon alt time speed course hacc vacc quality sats\n"
    for point in points {
      let fix = point.fix
      let fields: [String] = [
        "\(point.kind)", "\(point.track)", "\(point.segment)", "\(point.line)",
        "\(fix.latitude)", "\(fix.longitude)", fix.altitude.map { "\($0)" } ?? "-",
        point.time.map { "\($0)" } ?? "-", "\(fix.speed)", "\(fix.course)",
        "\(fix.horizontalAccuracy)", "\(fix.verticalAccuracy)", "\(fix.quality)",
        fix.satellitesUsed.map { "\($0)" } ?? "-",
      ]
      out += fields.joined(separator: " ") + "\n"
    }
    return out
  }
}
