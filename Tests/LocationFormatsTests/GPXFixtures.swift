import Foundation
import LocationFormats
import TestSupport

/// Locates and reads the files under `Tests/Fixtures/`, and renders decoded GPX for the `.chk`
/// expectations written beside each fixture.
enum Fixtures {
  /// `<package root>/Tests/Fixtures`.
  static let root: URL = Paths.fixtures

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

  /// The path of a fixture, e.g. `path("gpx", "truncated.gpx")`.
  static func path(_ folder: String, _ name: String) -> String {
    root.appendingPathComponent(folder).appendingPathComponent(name).path
  }

  /// The bytes of a fixture.
  static func bytes(_ folder: String, _ name: String) throws -> [UInt8] {
    [UInt8](try Data(contentsOf: URL(fileURLWithPath: path(folder, name))))
  }

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
