import Geodesy
import LocationModel

/// One point of a GPX file: a track point, a route point or a waypoint, with its measured fields.
///
/// The decoder sets only what the file says. It never derives speed or course from neighbouring
/// points and never marks the fix as simulated: both are the replay source's business.
package struct GPXPoint: Sendable, Equatable {
  /// Which GPX element the point came from.
  package enum Kind: Sendable, Equatable, CaseIterable {
    /// `<trkpt>`: a recorded track point.
    case track
    /// `<rtept>`: a planned route point.
    case route
    /// `<wpt>`: a stand-alone waypoint.
    case waypoint
  }

  /// Which GPX element the point came from.
  package var kind: Kind
  /// 0-based index of the `<trk>` (for track points) or `<rte>` (for route points) in the
  /// document; 0 for waypoints.
  package var track: Int
  /// 0-based index of the `<trkseg>` within its track; 0 for route points and waypoints.
  ///
  /// Segments mark gaps in recording (the receiver lost its fix or was switched off).
  package var segment: Int
  /// The measured fields.
  ///
  /// `latitude`, `longitude` are always valid. `altitude` is `<ele>` (metres; GPX says nothing of
  /// the datum, and devices write heights above mean sea level). `speed` and `course` are -1 when
  /// the file has none. `time` is NaN when the point has no `<time>` (see ``time``).
  /// `horizontalAccuracy` and `verticalAccuracy` follow the rules of ``GPXDecoder``.
  package var fix: Fix
  /// The point's `<time>` in seconds since 1970-01-01T00:00:00Z, or nil when it has none.
  package var time: Double?
  /// The `<hdop>` value, if the file has one.
  package var hdop: Double?
  /// The `<vdop>` value, if the file has one.
  package var vdop: Double?
  /// The `<pdop>` value, if the file has one.
  package var pdop: Double?
  /// 1-based line in the file of the end of the point's start tag.
  package var line: Int

  /// Creates a point.
  package init(
    kind: Kind,
    track: Int,
    segment: Int,
    fix: Fix,
    time: Double?,
    hdop: Double? = nil,
    vdop: Double? = nil,
    pdop: Double? = nil,
    line: Int
  ) {
    self.kind = kind
    self.track = track
    self.segment = segment
    self.fix = fix
    self.time = time
    self.hdop = hdop
    self.vdop = vdop
    self.pdop = pdop
    self.line = line
  }
}

/// A decoded GPX file: its points in document order, and the problems that did not stop decoding.
package struct GPXDocument: Sendable {
  /// Every valid point, in document order (waypoints, routes and tracks interleaved as written).
  /// A replay plays only ``path``: the tracks, else the routes, else the waypoints.
  package var points: [GPXPoint]
  /// Points that were skipped (bad or missing coordinates) and values that were ignored (a time
  /// or elevation that does not parse), each with its line; plus libxml2's non-fatal
  /// diagnostics. At most ``GPXDecoder/maximumWarnings`` are kept.
  package var warnings: [FormatError]
  /// The `version` attribute of the root `<gpx>` element, if any (`"1.1"`, `"1.0"`).
  package var version: String?
  /// The `creator` attribute of the root `<gpx>` element, if any (the device or program).
  package var creator: String?

  /// Creates a document.
  package init(
    points: [GPXPoint], warnings: [FormatError] = [], version: String? = nil,
    creator: String? = nil
  ) {
    self.points = points
    self.warnings = warnings
    self.version = version
    self.creator = creator
  }

  /// The track points only (`<trkpt>`), in order: a recording's path, when it has one (see
  /// ``path`` for the rule a replay follows).
  package var trackPoints: [GPXPoint] { points.filter { $0.kind == .track } }
}
