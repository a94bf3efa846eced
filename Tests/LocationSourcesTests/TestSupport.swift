import Foundation
import Geodesy
import LocationModel
import LocationSources
import Synchronization

/// Writes `text` to `name` in `directory` and returns the path.
func write(_ text: String, to name: String, in directory: String) throws -> String {
  let path = directory + "/" + name
  try Data(text.utf8).write(to: URL(fileURLWithPath: path))
  return path
}

/// A `SourceContext` on a manual clock: nothing runs until `advance(by:)`, which runs due actions
/// in deadline order, synchronously. It records what the source sends, with the monotonic time of
/// each emission. (LocationSourcesTests cannot use LocationServices' `ManualClock`.)
final class TestContext: SourceContext {
  struct Emission {
    var fix: Fix
    var at: Double
  }

  private struct State {
    var emissions: [Emission] = []
    var headings: [(sample: HeadingSample, at: Double)] = []
    var failures: [SourceError] = []
    var ends = 0
    var onEmit: (@Sendable (Int) -> Void)?
  }

  /// The runtime's manual clock, as a hub in a test would give it.
  let clock: ManualClock
  private let state = Mutex(State())

  /// A context at monotonic time 0 and the given wall-clock time.
  init(wall: Double = 1_767_225_600) {
    clock = ManualClock(wall: wall)
  }

  var now: EngineInstant { clock.now }

  func emit(_ fix: Fix) {
    let at = clock.now.monotonic
    let (count, hook) = state.withLock { state in
      state.emissions.append(Emission(fix: fix, at: at))
      return (state.emissions.count, state.onEmit)
    }
    hook?(count)
  }

  func emitHeading(_ sample: HeadingSample) {
    let at = clock.now.monotonic
    state.withLock { $0.headings.append((sample, at)) }
  }

  /// Calls `hook` with the number of fixes emitted so far after each emission.
  func onEmit(_ hook: @escaping @Sendable (Int) -> Void) {
    state.withLock { $0.onEmit = hook }
  }

  func fail(_ error: SourceError) { state.withLock { $0.failures.append(error) } }

  func end() { state.withLock { $0.ends += 1 } }

  func schedule(after seconds: Double, _ action: @escaping @Sendable () -> Void) -> any Cancellable
  {
    clock.schedule(at: clock.now.monotonic + seconds, action)
  }

  /// Moves time forward, running every action that falls due (including ones scheduled by them).
  func advance(by seconds: Double) { clock.advance(by: seconds) }

  /// Runs what is due now, at most `limit` actions (a guard against a source that keeps scheduling
  /// at the same instant).
  func runDue(limit: Int = 100_000) { clock.runDue(limit: limit) }

  var emissions: [Emission] { state.withLock { $0.emissions } }
  var fixes: [Fix] { emissions.map(\.fix) }
  /// The heading samples emitted, with the monotonic time of each.
  var headings: [(sample: HeadingSample, at: Double)] { state.withLock { $0.headings } }
  var failures: [SourceError] { state.withLock { $0.failures } }
  var ends: Int { state.withLock { $0.ends } }
  var pendingCount: Int { clock.pendingCount }
}

/// A track of `count` points heading due north from 52° N 5° E at `speed` m/s, `interval` seconds
/// apart, without speed or course.
func northTrack(count: Int, speed: Double, interval: Double = 1, start: Double = 1_600_000_000)
  -> [Fix]
{
  (0..<count).map { index in
    let point = Geodesic.wgs84.direct(
      latitude: 52, longitude: 5, azimuth: 0, distance: Double(index) * speed * interval)
    return Fix(
      latitude: point.latitude, longitude: point.longitude, horizontalAccuracy: 5,
      time: start + Double(index) * interval)
  }
}
