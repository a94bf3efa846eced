import LocationFormats
import LocationModel

/// A `history` request (`locationctl export`): one page of the device's track history, in time
/// order. Added later in version 1: an older daemon answers `unknownType`.
package struct DaemonHistoryQuery: Sendable, Equatable {
  /// The earliest time, included, seconds since 1970; nil: from the first point.
  package var since: Double?
  /// The latest time, excluded; nil: to the last point.
  package var until: Double?
  /// Points after this one (the previous page's `next`); nil: the first page.
  package var after: DaemonHistoryCursor?
  /// The most points wanted; the daemon sends at most ``maximumPoints`` whatever is asked.
  package var limit: Int

  /// The most points one reply carries: 130 to 220 bytes each, so a reply stays under 512 KB,
  /// far within a client's line limit (64 MiB) and a connection's queue (1 MiB by default).
  package static let maximumPoints = 2000

  /// Creates a query.
  package init(
    since: Double? = nil, until: Double? = nil, after: DaemonHistoryCursor? = nil,
    limit: Int = DaemonHistoryQuery.maximumPoints
  ) {
    self.since = since
    self.until = until
    self.after = after
    self.limit = limit
  }
}

/// Where a page ended: its last point's time and sequence (the order of recording).
package struct DaemonHistoryCursor: Sendable, Equatable {
  /// The last point's time, seconds since 1970.
  package var time: Double
  /// The last point's sequence.
  package var sequence: Int64

  /// Creates a cursor.
  package init(time: Double, sequence: Int64) {
    self.time = time
    self.sequence = sequence
  }
}

/// The answer to `history`: a page of points, oldest first.
package struct DaemonHistoryPage: Sendable, Equatable {
  /// The points: time, coordinate, altitude (when known), horizontal and vertical accuracy,
  /// speed and course (negative: unknown); the other members of `Fix` are unknown.
  package var points: [Fix]
  /// Where the next page starts; nil when this is the last.
  package var next: DaemonHistoryCursor?

  /// Creates a page.
  package init(points: [Fix], next: DaemonHistoryCursor? = nil) {
    self.points = points
    self.next = next
  }
}

extension DaemonHistoryQuery: WireObject {
  package static var wireBlank: DaemonHistoryQuery { DaemonHistoryQuery() }

  /// `since`, `until` and `after` (null or absent: none), `limit` (default the maximum).
  package mutating func wire(_ c: inout WireCoder) throws(DaemonProtocolError) {
    try c.optional("since", &since)
    try c.optional("until", &until)
    try c.optional("after", &after)
    try c.field("limit", &limit, default: Self.maximumPoints)
    guard c.isDecoding else { return }
    for (key, value) in [("since", since), ("until", until), ("after.time", after?.time)] {
      if let value, !value.isFinite { throw c.malformed(key, "must be a finite number") }
    }
    guard limit > 0 else { throw c.malformed("limit", "must be a positive integer") }
  }
}

extension DaemonHistoryCursor: WireObject {
  package static var wireBlank: DaemonHistoryCursor { DaemonHistoryCursor(time: 0, sequence: 0) }

  package mutating func wire(_ c: inout WireCoder) throws(DaemonProtocolError) {
    try c.field("time", &time)
    try c.field("sequence", &sequence)
  }
}

extension DaemonHistoryPage: WireObject {
  package static var wireBlank: DaemonHistoryPage { DaemonHistoryPage(points: []) }

  /// `points` (each `{"time","latitude","longitude","altitude"?,"horizontalAccuracy",
  /// "verticalAccuracy","speed","course"}`) and `next` (null on the last page).
  package mutating func wire(_ c: inout WireCoder) throws(DaemonProtocolError) {
    var wired = points.map(TrackPoint.init)
    try c.field("points", &wired, default: [])
    points = wired.map(\.fix)
    try c.optional("next", &next)
  }

  /// One point on the wire: only the members the history keeps, so a page stays small.
  struct TrackPoint: WireObject {
    var fix: Fix

    static var wireBlank: TrackPoint {
      TrackPoint(fix: Fix(latitude: 0, longitude: 0, horizontalAccuracy: -1, time: 0))
    }

    mutating func wire(_ c: inout WireCoder) throws(DaemonProtocolError) {
      try c.field("time", &fix.time)
      try c.field("latitude", &fix.latitude)
      try c.field("longitude", &fix.longitude)
      try c.omittable("altitude", &fix.altitude)
      try c.field("horizontalAccuracy", &fix.horizontalAccuracy, default: -1)
      try c.field("verticalAccuracy", &fix.verticalAccuracy, default: -1)
      try c.field("speed", &fix.speed, default: -1)
      try c.field("course", &fix.course, default: -1)
    }
  }
}
