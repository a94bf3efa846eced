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
  ///   (UTC), keeping its times of day. A heading sentence takes its epoch's time, else the time of
  ///   the fix before it; headings before the first fix are put one second per cycle before it (a
  ///   cycle ends at a fix, or when a sentence of the same talker and kind comes again). A log with
  ///   headings and no fix at all (a compass or an autopilot alone) plays its headings one second
  ///   per cycle, stamped when played.
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
      var untimed = UntimedHeadings()
      for output in outputs {
        switch output {
        case .fix(let fix):
          fixes.append(fix)
          untimed.endCycle()
        case .undatedFix(let fix):
          undated.append(fix)
          untimed.endCycle()
        case .heading(let heading):
          // A heading without a time of its own takes the time of the fix before it.
          let fallback = fixes.last?.time ?? .nan
          guard
            let sample = HeadingSample(
              nmea: heading, fallbackTime: fallback, source: file, isSimulated: true)
          else { continue }
          if sample.time.isFinite {
            headings.append(sample)
          } else {
            untimed.add(sample, key: "\(heading.talker)\(heading.kind)", fixesBefore: undated.count)
          }
        case .noFix: untimed.endCycle()
        case .satellites: break
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
        headings.append(contentsOf: untimed.dated(after: fixes))
      } else if let first = fixes.first {
        headings.append(contentsOf: untimed.dated(before: first.time))
      } else if let first = headings.min(by: { $0.time < $1.time }) {
        // Headings and no fix, some with a time (a ZDA from the same instrument).
        headings.append(contentsOf: untimed.dated(before: first.time))
      }
      var warnings: [FormatError] = []
      if let error = statistics.firstError(file: file) { warnings.append(error) }
      if fixes.isEmpty, headings.isEmpty, !untimed.samples.isEmpty {
        // A compass-only log (an autopilot's HDM lines, say): no time and no fix anywhere. Its
        // headings are paced as an untimed GPX path is, one second per cycle, and stamped when
        // played.
        var track = ReplayTrack(fixes: [], warnings: warnings, hasTimes: false)
        track.headings = untimed.paced()
        return track
      }
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

/// The heading sentences of an NMEA log that came before any time was known, grouped into cycles:
/// a cycle ends at a fix (or a no-fix epoch), or when a sentence of a talker and kind already in
/// the cycle comes again (a compass sending HDM ten times a second makes ten cycles a second).
struct UntimedHeadings {
  private(set) var samples: [(sample: HeadingSample, cycle: Int, fixesBefore: Int)] = []
  private var cycle = 0
  private var inCycle: Set<String> = []

  mutating func add(_ sample: HeadingSample, key: String, fixesBefore: Int) {
    if inCycle.contains(key) { endCycle() }
    inCycle.insert(key)
    samples.append((sample, cycle, fixesBefore))
  }

  mutating func endCycle() {
    guard !inCycle.isEmpty else { return }
    cycle += 1
    inCycle = []
  }

  /// The samples before a log's first dated fix, one second per cycle before `time`.
  func dated(before time: Double) -> [HeadingSample] {
    guard let last = samples.last?.cycle else { return [] }
    return samples.map { entry in
      var sample = entry.sample
      sample.time = time - Double(last + 1 - entry.cycle)
      return sample
    }
  }

  /// The samples of a log without dates, once its fixes are anchored: the time of the fix before
  /// each, or one second per cycle before the first fix.
  func dated(after fixes: [Fix]) -> [HeadingSample] {
    let leading = samples.filter { $0.fixesBefore == 0 }
    let lastLeading = leading.last?.cycle ?? 0
    return samples.map { entry in
      var sample = entry.sample
      if entry.fixesBefore > 0, entry.fixesBefore <= fixes.count {
        sample.time = fixes[entry.fixesBefore - 1].time
      } else {
        sample.time = (fixes.first?.time ?? 0) - Double(lastLeading + 1 - entry.cycle)
      }
      return sample
    }
  }

  /// A compass-only log without any time: cycle `n` at `n` seconds.
  func paced() -> [HeadingSample] {
    samples.map { entry in
      var sample = entry.sample
      sample.time = Double(entry.cycle)
      return sample
    }
  }
}
