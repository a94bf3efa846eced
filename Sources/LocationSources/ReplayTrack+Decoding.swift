import Foundation
import Geodesy
import LocationFormats
import LocationModel

extension ReplayTrack {
  /// Decodes a recording already in memory.
  ///
  /// - GPX: a document that is not well-formed XML is refused (with file and line): a broken
  ///   document may hold anything after the break. Points with bad coordinates are skipped with a
  ///   warning. The played path is `GPXPath`'s: the track points (all tracks, all segments, in
  ///   document order), else the route points, else the waypoints; the valid points of the other
  ///   kinds are counted in ``leftOut`` and not played. Points of the path without a time are
  ///   played one second after the one before (before the first timed point: one second before
  ///   it); a path without any time is stamped when played. Segment, track and route boundaries
  ///   are ``segmentStarts``.
  /// - NMEA: bad sentences are skipped and counted (the first is reported as a warning with its
  ///   line). A log that never gives a date (no RMC or ZDA) is dated with the day it is played
  ///   (UTC), keeping its times of day.
  /// - Throws: `FormatError` when nothing usable could be read (with file and line).
  static func decode(_ bytes: [UInt8], format: Format, file: String) throws(FormatError)
    -> ReplayTrack
  {
    switch format {
    case .gpx:
      let document = try GPXDecoder.decode(data: bytes, file: file)
      return ReplayTrack(gpx: document.path, warnings: document.warnings)
    case .nmea:
      let (outputs, statistics) = NMEADecoder.decodeLog(bytes)
      var fixes: [Fix] = []
      var undated: [Fix] = []
      var headings: [HeadingSample] = []
      for output in outputs {
        switch output {
        case .fix(let fix): fixes.append(fix)
        case .undatedFix(let fix): undated.append(fix)
        case .heading(let heading):
          // A heading before the log's first dated epoch takes the time of the fix before it.
          if let sample = HeadingSample(
            nmea: heading, fallbackTime: fixes.last?.time ?? .nan, source: file, isSimulated: true),
            sample.time.isFinite
          {
            headings.append(sample)
          }
        case .noFix, .satellites: break
        }
      }
      if fixes.isEmpty, !undated.isEmpty {
        // `undatedFix` holds seconds since midnight: anchor them to today (UTC).
        let midnight = (Date().timeIntervalSince1970 / 86_400).rounded(.down) * 86_400
        fixes = undated.map { fix in
          var fix = fix
          fix.time += midnight
          return fix
        }
      }
      var warnings: [FormatError] = []
      if let error = statistics.firstError(file: file) { warnings.append(error) }
      var track = ReplayTrack(fixes: fixes, warnings: warnings, hasTimes: true)
      track.headings = headings.sorted { $0.time < $1.time }
      return track
    }
  }

  /// Creates a track from the path of a GPX document (see `GPXPath`): its points in order, with
  /// made-up times for the points that have none (one second after the point before; before the
  /// first timed point, one second before it; a path without any time is stamped when played),
  /// its segment boundaries, and the count of the points it leaves out.
  ///
  /// - Parameters:
  ///   - path: the path, as `GPXDocument.path` chose it.
  ///   - warnings: the document's warnings.
  package init(gpx path: GPXPath, warnings: [FormatError] = []) {
    var fixes = path.points.map(\.fix)
    let times = path.points.map(\.time)
    let hasTimes: Bool
    var untimed = Set<Int>()
    if let firstTimed = times.firstIndex(where: { $0 != nil }) {
      hasTimes = true
      var previous = times[firstTimed] ?? 0
      for index in fixes.indices {
        if index < firstTimed {
          fixes[index].time = previous - Double(firstTimed - index)
          untimed.insert(index)
        } else if let time = times[index] {
          fixes[index].time = time
          previous = time
        } else {
          previous += 1
          fixes[index].time = previous
          untimed.insert(index)
        }
      }
    } else {
      hasTimes = false
      for index in fixes.indices { fixes[index].time = Double(index) }
    }
    self.init(
      fixes: fixes, warnings: warnings, hasTimes: hasTimes, segmentStarts: path.segmentStarts,
      untimed: untimed)
    gpxPathKind = path.kind
    leftOut = path.leftOut
  }
}
