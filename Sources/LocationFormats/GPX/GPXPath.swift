/// How many valid points of each kind a GPX document holds.
package struct GPXPointCounts: Sendable, Equatable {
  /// Valid `<trkpt>` elements.
  package var track: Int
  /// Valid `<rtept>` elements.
  package var route: Int
  /// Valid `<wpt>` elements.
  package var waypoint: Int

  /// Creates counts.
  package init(track: Int = 0, route: Int = 0, waypoint: Int = 0) {
    self.track = track
    self.route = route
    self.waypoint = waypoint
  }

  /// Counts the points of a list by kind.
  ///
  /// - Parameter points: the points to count.
  package init(counting points: some Sequence<GPXPoint>) {
    self.init()
    for point in points { self[point.kind] += 1 }
  }

  /// The count of one kind.
  package subscript(kind: GPXPoint.Kind) -> Int {
    get {
      switch kind {
      case .track: return track
      case .route: return route
      case .waypoint: return waypoint
      }
    }
    set {
      switch kind {
      case .track: track = newValue
      case .route: route = newValue
      case .waypoint: waypoint = newValue
      }
    }
  }

  /// All points, whatever their kind.
  package var total: Int { track + route + waypoint }
}

/// The path a GPX document describes: the points a replay plays, and what it leaves out.
///
/// In GPX a track (`<trk>`) is a recorded path, a route (`<rte>`) a planned path and a waypoint
/// (`<wpt>`) a marked place. The rule, ours (GPX does not say how to replay a file), and the same
/// one other GPX readers follow when they take the tracks as the path:
/// - the path is every track point, in document order (all tracks, all segments);
/// - if the document has no valid track point, every route point, in document order (all routes);
/// - if it has neither, every waypoint, in document order.
///
/// Kinds are never mixed: a waypoint is not part of a track's path, so a hike's points of
/// interest do not become jumps before the walk starts. ``leftOut`` counts the valid points of the
/// other kinds, so that a program can tell its user (``leftOutNotice``).
package struct GPXPath: Sendable, Equatable {
  /// What the path is made of.
  package var kind: GPXPoint.Kind
  /// The path's points, in document order.
  package var points: [GPXPoint]
  /// The document's valid points of the other kinds, which are not in the path.
  package var leftOut: GPXPointCounts

  /// Chooses the path among a document's points (see the rule above).
  ///
  /// - Parameter points: every valid point of a document, in document order.
  package init(points: [GPXPoint]) {
    let counts = GPXPointCounts(counting: points)
    let kind = Self.kind(for: counts)
    self.kind = kind
    self.points = points.filter { $0.kind == kind }
    var leftOut = counts
    leftOut[kind] = 0
    self.leftOut = leftOut
  }

  /// The kind of point the path of a document with these counts is made of: `.track` when it has
  /// any track point, else `.route` when it has any route point, else `.waypoint`.
  ///
  /// - Parameter counts: the document's valid points by kind.
  package static func kind(for counts: GPXPointCounts) -> GPXPoint.Kind {
    if counts.track > 0 { return .track }
    if counts.route > 0 { return .route }
    return .waypoint
  }

  /// Where a segment of the path begins: the indices into ``points`` of every point that starts a
  /// new track segment (`<trkseg>`), track or route, other than the first point. Moving from the
  /// point before such an index to it is a gap in the recording or a new plan, not a movement.
  /// Waypoints are one segment.
  package var segmentStarts: [Int] {
    guard points.count > 1 else { return [] }
    return (1..<points.count).filter { index in
      points[index].track != points[index - 1].track
        || points[index].segment != points[index - 1].segment
    }
  }

  /// What a replay of this path leaves out, for its user: `7 waypoints not replayed: a track is
  /// present`; nil when nothing is left out.
  package var leftOutNotice: String? { Self.leftOutNotice(kind: kind, leftOut: leftOut) }

  /// The notice of ``leftOutNotice`` for a document with these counts (as from
  /// ``GPXDecoder/countPoints(path:)``), without decoding the points again.
  ///
  /// - Parameter counts: the document's valid points by kind.
  /// - Returns: the notice, or nil when the path is every valid point of the document.
  package static func leftOutNotice(for counts: GPXPointCounts) -> String? {
    let kind = kind(for: counts)
    var leftOut = counts
    leftOut[kind] = 0
    return leftOutNotice(kind: kind, leftOut: leftOut)
  }

  private static func leftOutNotice(kind: GPXPoint.Kind, leftOut: GPXPointCounts) -> String? {
    var parts: [String] = []
    if leftOut.waypoint > 0 {
      parts.append("\(leftOut.waypoint) waypoint" + (leftOut.waypoint == 1 ? "" : "s"))
    }
    if leftOut.route > 0 {
      parts.append("\(leftOut.route) route point" + (leftOut.route == 1 ? "" : "s"))
    }
    if leftOut.track > 0 {
      parts.append("\(leftOut.track) track point" + (leftOut.track == 1 ? "" : "s"))
    }
    let present: String
    switch kind {
    case .track: present = "a track is present"
    case .route: present = "a route is present"
    // A path of waypoints means that the document has nothing else.
    case .waypoint: return nil
    }
    guard !parts.isEmpty else { return nil }
    return parts.joined(separator: " and ") + " not replayed: " + present
  }
}

extension GPXDocument {
  /// The document's valid points by kind.
  package var pointCounts: GPXPointCounts { GPXPointCounts(counting: points) }

  /// The path a replay plays (see ``GPXPath``).
  package var path: GPXPath { GPXPath(points: points) }
}
