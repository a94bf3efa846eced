import Geodesy
import LocationFormats

extension ReplayTrack {
  /// Decodes a recording already in memory.
  /// - Throws: `FormatError` when nothing usable could be read (with file and line).
  static func decode(_ bytes: [UInt8], format: Format, file: String) throws(FormatError) -> ReplayTrack {
    switch format {
    case .gpx:
      let document = try GPXDecoder.decode(data: bytes, file: file)
      return ReplayTrack(fixes: document.points.map(\.fix), warnings: document.warnings)
    case .nmea:
      let (outputs, statistics) = NMEADecoder.decodeLog(bytes, options: .init())
      var fixes: [Fix] = []
      for output in outputs {
        if case .fix(let fix) = output { fixes.append(fix) }
      }
      var warnings: [FormatError] = []
      if let line = statistics.firstBadLine {
        warnings.append(
          FormatError(
            .malformed, "\(statistics.malformed + statistics.checksumErrors) bad sentence(s) skipped",
            file: file, line: line))
      }
      return ReplayTrack(fixes: fixes, warnings: warnings)
    }
  }
}
