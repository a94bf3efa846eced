import Geodesy
import LocationFormats

extension ReplayTrack {
  /// Decodes a recording already in memory.
  /// - Throws: `FormatError` when nothing usable could be read (with file and line).
  static func decode(_ bytes: [UInt8], format: Format, file: String) throws(FormatError)
    -> ReplayTrack
  {
    switch format {
    case .gpx:
      // A file cut short (a recorder that lost power) still gives the points before the cut; the
      // error becomes a warning. Nothing usable at all is an error.
      let decoder = GPXDecoder(file: file)
      var failure: FormatError?
      do {
        try decoder.feed(bytes)
        try decoder.finish()
      } catch {
        failure = error
      }
      let points = decoder.takePoints()
      guard !points.isEmpty else {
        throw failure ?? FormatError(.empty, "no track, route or waypoint", file: file)
      }
      // Points without a time are played one second apart; a track without any time is stamped
      // with the time of playing (see `ReplaySource`).
      var fixes: [Fix] = []
      fixes.reserveCapacity(points.count)
      var timed = false
      var previous = 0.0
      for point in points {
        var fix = point.fix
        if let time = point.time {
          fix.time = time
          timed = true
        } else {
          fix.time = previous + 1
        }
        previous = fix.time
        fixes.append(fix)
      }
      return ReplayTrack(
        fixes: fixes, warnings: decoder.warnings + (failure.map { [$0] } ?? []), hasTimes: timed)
    case .nmea:
      let (outputs, statistics) = NMEADecoder.decodeLog(bytes)
      var fixes: [Fix] = []
      for output in outputs {
        if case .fix(let fix) = output { fixes.append(fix) }
      }
      var warnings: [FormatError] = []
      if let error = statistics.firstError(file: file) { warnings.append(error) }
      return ReplayTrack(fixes: fixes, warnings: warnings, hasTimes: true)
    }
  }
}
