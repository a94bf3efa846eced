import CoreLocation
import Foundation
internal import Geodesy
internal import LocationModel
internal import LocationSources

extension SimulatedEnvironment {
  /// Replays a recording through the scripted source on the environment's clock, by the rules of
  /// a `replay://` source: a GPX file's path is its tracks' points (all tracks, all segments, in
  /// document order), else its routes' points, else its waypoints, never a mix; speed and course
  /// missing from the file are derived from the point before, except across a segment break,
  /// from or to a point without a time, or above 340 m/s. An NMEA 0183 log plays its fixes.
  ///
  /// The first location is delivered at once; each next one when the clock has advanced by the
  /// recording's gap divided by `speed` (one second when the recording has no times). Locations
  /// are stamped with the environment's time when they are delivered, so that they agree with
  /// `now`, and are marked simulated. As with `deliver(_:)`, a location that comes while the
  /// scripted source is not running is dropped.
  ///
  /// - Parameters:
  ///   - path: a GPX 1.0/1.1 file or an NMEA 0183 log.
  ///   - speed: how many times faster than recorded (greater than 0; 1 by default).
  /// - Returns: how many locations the replay delivers, over what time, and what it leaves out.
  /// - Throws: `CLError.locationUnknown` naming the file when it cannot be read or holds no
  ///   position.
  @discardableResult
  public func replay(contentsOf path: String, speed: Double = 1) throws -> SimulatedReplay {
    let track: ReplayTrack
    do {
      track = try ReplayTrack.load(path: path)
    } catch {
      throw CLError(.locationUnknown, userInfo: [NSLocalizedDescriptionKey: error.message])
    }
    let pace = speed > 0 && speed.isFinite ? speed : 1
    let offsets = Self.offsets(track, pace: pace)
    play(track.fixes, offsets: offsets, from: 0)
    pump()
    return SimulatedReplay(
      locationCount: track.fixes.count, duration: offsets.last ?? 0,
      leftOutNotice: track.leftOutNotice)
  }

  /// The time of each fix after the first, in simulated seconds (a gap that is not a number or
  /// runs backwards counts one second, as in `ReplaySource`).
  private static func offsets(_ track: ReplayTrack, pace: Double) -> [Double] {
    var offsets: [Double] = []
    offsets.reserveCapacity(track.fixes.count)
    var total = 0.0
    for index in track.fixes.indices {
      if index > 0 {
        let gap = track.hasTimes ? track.fixes[index].time - track.fixes[index - 1].time : 1
        total += (gap.isFinite && gap >= 0 ? gap : 1) / pace
      }
      offsets.append(total)
    }
    return offsets
  }

  /// Delivers the fix at `index` and schedules the next (one clock entry at a time, however long
  /// the recording).
  private func play(_ fixes: [Fix], offsets: [Double], from index: Int) {
    guard index < fixes.count else { return }
    var fix = fixes[index]
    fix.time = clock.now.wall
    fix.isSimulated = true
    if fix.quality == .autonomous { fix.quality = .simulated }
    source.emit(fix: fix)
    let next = index + 1
    guard next < fixes.count else { return }
    let deadline = clock.now.monotonic + offsets[next] - offsets[index]
    _ = clock.schedule(at: deadline) { [self] in
      play(fixes, offsets: offsets, from: next)
    }
  }
}
