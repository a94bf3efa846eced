import Foundation
import Geodesy
import LocationFormats
import LocationModel

/// A recorded track ready to replay: fixes in time order, with speed and course derived from
/// consecutive points where the recording has none.
///
/// Derived motion follows rules of our own: speed and course are derived only between
/// consecutive fixes of one segment (never across a GPX `<trkseg>` break, from one track or route
/// to the next, or from or to a time the recording does not have), and are left unknown (-1) when
/// the implied speed is above ``maximumDerivedSpeed``: such a step is a jump in the recording, not
/// a movement.
package struct ReplayTrack: Sendable {
  /// The fixes, in the recording's order.
  package var fixes: [Fix]
  /// Problems found in the file that did not stop the replay (a bad point, a bad sentence), with
  /// file and line.
  package var warnings: [FormatError]
  /// Heading samples (NMEA heading sentences), in time order; played between the fixes by time.
  package var headings: [HeadingSample] = []
  /// Whether the recording has timestamps. A track without any is played one point a second and
  /// stamped with the time of playing.
  package var hasTimes: Bool
  /// The indices into ``fixes`` of the fixes that begin a new segment (a GPX `<trkseg>`, track or
  /// route), other than the first fix. No motion is derived from the fix before each.
  package var segmentStarts: [Int]
  /// For a GPX file, what its played path is made of (see `GPXPath`); nil for NMEA.
  package var gpxPathKind: GPXPoint.Kind?
  /// For a GPX file, its valid points that are not played because they are not of the path's
  /// kind (waypoints when the file has a track, for example); zero for NMEA. A program tells its
  /// user with ``leftOutNotice``.
  package var leftOut = GPXPointCounts()

  /// What the replay leaves out of a GPX file, for its user (`7 waypoints not replayed: a track
  /// is present`); nil when it plays every valid point, and for NMEA.
  package var leftOutNotice: String? {
    guard let gpxPathKind else { return nil }
    var counts = leftOut
    counts[gpxPathKind] = fixes.count
    return GPXPath.leftOutNotice(for: counts)
  }

  /// The fastest speed derived from two consecutive fixes, in m/s: 340, the speed of sound at sea
  /// level. A faster step is taken as a jump in the recording (a gap, a point added by hand, a
  /// glitch), and the fix gets neither speed nor course from it. A speed the recording states is
  /// kept whatever its value.
  package static let maximumDerivedSpeed = 340.0

  /// Creates a track from fixes; derives missing speed and course (see the rules above).
  ///
  /// - Parameters:
  ///   - fixes: the fixes, in the recording's order.
  ///   - warnings: problems found in the file.
  ///   - hasTimes: whether the fixes' times are the recording's (no motion is derived when not).
  ///   - segmentStarts: indices of the fixes that begin a new segment (see ``segmentStarts``).
  package init(
    fixes: [Fix], warnings: [FormatError] = [], hasTimes: Bool = true, segmentStarts: [Int] = []
  ) {
    self.init(
      fixes: fixes, warnings: warnings, hasTimes: hasTimes, segmentStarts: segmentStarts,
      untimed: [])
  }

  /// Creates a track; `untimed` holds the indices of fixes whose time was made up (no motion is
  /// derived from or to them).
  init(
    fixes: [Fix], warnings: [FormatError], hasTimes: Bool, segmentStarts: [Int],
    untimed: Set<Int>
  ) {
    var unrelated = Set(segmentStarts)
    for index in untimed {
      unrelated.insert(index)
      unrelated.insert(index + 1)
    }
    self.fixes = hasTimes ? Self.derivingMotion(fixes, unrelated: unrelated) : fixes
    self.warnings = warnings
    self.hasTimes = hasTimes
    self.segmentStarts = segmentStarts
  }

  /// The recognised recording formats.
  package enum Format: String, Sendable {
    /// GPX 1.0 or 1.1.
    case gpx
    /// NMEA 0183 sentences, one per line.
    case nmea
  }

  /// Guesses the format from the first meaningful bytes: `<` is XML (GPX); `$` or `!` is NMEA.
  /// NMEA logs may start with `#` comment lines (as gpsd's captures do) or gpsd JSON lines.
  package static func detectFormat(_ bytes: [UInt8]) -> Format? {
    var index = 0
    // Skip a UTF-8 byte-order mark.
    if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
    while index < bytes.count {
      switch bytes[index] {
      case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"), UInt8(ascii: "\n"):
        index += 1
      case UInt8(ascii: "#"), UInt8(ascii: "{"):
        // Comments, and the JSON lines (`{"class":"VERSION"...`) that gpspipe puts before NMEA.
        while index < bytes.count, bytes[index] != UInt8(ascii: "\n") { index += 1 }
      case UInt8(ascii: "<"):
        return .gpx
      case UInt8(ascii: "$"), UInt8(ascii: "!"):
        return .nmea
      default:
        return nil
      }
    }
    return nil
  }

  /// Reads and decodes a recording.
  /// - Throws: `SourceError` naming the file (and line) when it cannot be read or holds neither a
  ///   fix nor a heading.
  package static func load(path: String) throws(SourceError) -> ReplayTrack {
    let bytes: [UInt8]
    do {
      bytes = try readFile(path)
    } catch {
      throw SourceError(
        .unavailable, "replay: cannot read \(path): \(error.message)", isPermanent: true)
    }
    guard let format = detectFormat(bytes) else {
      throw SourceError(
        .malformed,
        "replay: \(path) is neither GPX nor NMEA 0183 (it starts with neither '<' nor '$')",
        isPermanent: true)
    }
    let track: ReplayTrack
    do {
      track = try decode(bytes, format: format, file: path)
    } catch {
      throw SourceError(.malformed, "replay: \(error.description)", isPermanent: true)
    }
    guard !track.fixes.isEmpty || !track.headings.isEmpty else {
      throw SourceError(
        .malformed, "replay: \(path) holds no usable position or heading", isPermanent: true)
    }
    return track
  }

  /// Fills in speed and course from the previous point when a fix has none and both have times
  /// (geodesic distance over elapsed time; the azimuth of the geodesic at the current point,
  /// Karney 2013). Nothing is derived for a fix whose index is in `unrelated` (the first of a
  /// segment, or next to a made-up time), nor when the implied speed is above
  /// ``maximumDerivedSpeed``.
  static func derivingMotion(_ fixes: [Fix], unrelated: Set<Int> = []) -> [Fix] {
    guard fixes.count > 1 else { return fixes }
    var result = fixes
    for index in 1..<result.count where !unrelated.contains(index) {
      let previous = fixes[index - 1]
      let current = fixes[index]
      guard current.speed < 0 || current.course < 0 else { continue }
      let elapsed = current.time - previous.time
      guard elapsed > 0, previous.hasValidCoordinate, current.hasValidCoordinate else { continue }
      let line = Geodesic.wgs84.inverse(
        latitude1: previous.latitude, longitude1: previous.longitude,
        latitude2: current.latitude, longitude2: current.longitude)
      let speed = line.distance / elapsed
      guard speed <= maximumDerivedSpeed else { continue }
      if current.speed < 0 { result[index].speed = speed }
      if current.course < 0, line.distance > 0 {
        var course = line.azimuth2
        if course < 0 { course += 360 }
        result[index].course = course
      }
    }
    return result
  }
}

/// An error reading a file: the `errno` text.
struct FileReadError: Error {
  var message: String
}

/// Reads a whole file, or its first `limit` bytes.
func readFile(_ path: String, limit: Int = .max) throws(FileReadError) -> [UInt8] {
  let descriptor = open(path, O_RDONLY | O_CLOEXEC)
  guard descriptor >= 0 else { throw FileReadError(message: String(cString: strerror(errno))) }
  defer { close(descriptor) }
  var result: [UInt8] = []
  var chunk = [UInt8](repeating: 0, count: 1 << 16)
  while true {
    let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
    if count < 0 {
      if errno == EINTR { continue }
      throw FileReadError(message: String(cString: strerror(errno)))
    }
    if count == 0 { break }
    result.append(contentsOf: chunk[0..<count])
    if result.count >= limit { break }
  }
  return result
}
