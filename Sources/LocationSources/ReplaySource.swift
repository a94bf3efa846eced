import Geodesy
import Synchronization

/// `replay://`: a recorded track (GPX or NMEA) played on the runtime's clock.
///
/// - What: from an NMEA log, its fixes and heading sentences (a log of headings alone plays its
///   headings, one second per cycle when it has no times); from a GPX file, its path (`GPXPath`): the track points (all tracks, all segments, in
///   document order), else the route points, else the waypoints, never a mix; the points left out
///   are counted in ``ReplayTrack/leftOut`` for the program to tell its user. Speed and course are
///   derived as ``ReplayTrack`` says (never across a segment break, never above 340 m/s).
/// - Timing: the gaps between the recording's timestamps, divided by `speed`; with `instant`, every
///   fix at once (in batches, so that `stop()` takes effect between them). Points without a time are
///   played one second apart.
/// - Fixes keep the recording's timestamps (so a 2015 log reports 2015) and carry
///   `isSimulated == true`, which the public API shows as
///   `sourceInformation.isSimulatedBySoftware`.
/// - At the end: `loop` starts again; otherwise the source reports that it has ended.
package final class ReplaySource: LocationSource {
  private struct State {
    var track: ReplayTrack?
    var context: (any SourceContext)?
    var pending: (any Cancellable)?
    var generation = 0
    /// The next heading sample to play.
    var headingIndex = 0
  }

  /// Fixes emitted per scheduled step in `instant` mode.
  static let instantBatch = 256

  package let descriptor: SourceDescriptor
  private let path: String
  private let options: SourceURL.ReplayOptions
  private let state = Mutex(State())

  /// Creates a replay of the file at `path`.
  package init(path: String, options: SourceURL.ReplayOptions) {
    self.path = path
    self.options = options
    // An NMEA log may carry heading sentences; a GPX track never does.
    let head = (try? readFile(path, limit: 4096)) ?? []
    self.descriptor = SourceDescriptor(
      url: SourceURL.replay(path: path, options: options).text, nominalAccuracy: .infinity,
      power: .none, producesHeading: ReplayTrack.detectFormat(head) == .nmea)
  }

  /// Creates a replay of fixes already in memory (tests, benchmarks).
  package init(track: ReplayTrack, name: String, options: SourceURL.ReplayOptions) {
    self.path = name
    self.options = options
    self.descriptor = SourceDescriptor(
      url: name, nominalAccuracy: .infinity, power: .none, producesHeading: !track.headings.isEmpty)
    state.withLock { $0.track = track }
  }

  package func start(context: any SourceContext) {
    let cached = state.withLock { $0.track }
    let track: ReplayTrack
    if let cached {
      track = cached
    } else {
      do {
        track = try ReplayTrack.load(path: path)
      } catch {
        context.fail(error)
        return
      }
    }
    let generation = state.withLock { state -> Int in
      state.track = track
      state.context = context
      state.generation += 1
      return state.generation
    }
    step(index: 0, generation: generation)
  }

  package func stop() {
    let pending = state.withLock { state -> (any Cancellable)? in
      state.generation += 1
      state.context = nil
      defer { state.pending = nil }
      return state.pending
    }
    pending?.cancel()
  }

  /// Emits the fix at `index` (or a batch in instant mode) and schedules the next step.
  private func step(index: Int, generation: Int) {
    guard
      let (track, context) = state.withLock({ state -> (ReplayTrack, any SourceContext)? in
        guard state.generation == generation, let track = state.track, let context = state.context
        else { return nil }
        return (track, context)
      })
    else { return }
    let fixes = track.fixes
    if index == 0 { state.withLock { $0.headingIndex = 0 } }
    if fixes.isEmpty, !track.headings.isEmpty {
      stepHeadings(index: index, generation: generation, track, context)
      return
    }
    guard index < fixes.count else {
      emitHeadings(through: .infinity, track, context)
      if options.loop, !fixes.isEmpty {
        schedule(
          after: options.instant ? 0 : 1 / options.speed, index: 0, generation: generation, context)
      } else {
        context.end()
      }
      return
    }
    let end = options.instant ? min(fixes.count, index + Self.instantBatch) : index + 1
    for position in index..<end {
      var fix = fixes[position]
      emitHeadings(through: fix.time, track, context)
      if !track.hasTimes { fix.time = context.now.wall }
      fix.isSimulated = true
      if case .autonomous = fix.quality { fix.quality = .simulated }
      context.emit(fix)
    }
    var delay = 0.0
    if !options.instant, end < fixes.count {
      let gap = track.hasTimes ? fixes[end].time - fixes[end - 1].time : 1
      delay = (gap.isFinite && gap >= 0 ? gap : 1) / options.speed
    }
    schedule(after: delay, index: end, generation: generation, context)
  }

  private func schedule(
    after delay: Double, index: Int, generation: Int, _ context: any SourceContext
  ) {
    let token = context.schedule(after: delay) { [self] in
      step(index: index, generation: generation)
    }
    let stale = state.withLock { state -> Bool in
      guard state.generation == generation else { return true }
      state.pending = token
      return false
    }
    if stale { token.cancel() }
  }

  /// A log of headings alone (a compass or an autopilot): plays the sample at `index` (a batch in
  /// instant mode) and schedules the next by the gap between their times (one second per cycle
  /// in a log without times, which are stamped when played).
  private func stepHeadings(
    index: Int, generation: Int, _ track: ReplayTrack, _ context: any SourceContext
  ) {
    let headings = track.headings
    guard index < headings.count else {
      if options.loop {
        schedule(
          after: options.instant ? 0 : 1 / options.speed, index: 0, generation: generation, context)
      } else {
        context.end()
      }
      return
    }
    let end = options.instant ? min(headings.count, index + Self.instantBatch) : index + 1
    for position in index..<end {
      var sample = headings[position]
      if !track.hasTimes { sample.time = context.now.wall }
      sample.isSimulated = true
      context.emitHeading(sample)
    }
    var delay = 0.0
    if !options.instant, end < headings.count {
      let gap = headings[end].time - headings[end - 1].time
      delay = (gap.isFinite && gap >= 0 ? gap : 1) / options.speed
    }
    schedule(after: delay, index: end, generation: generation, context)
  }

  /// Plays the heading samples up to a time (headings sit between fixes by their timestamps).
  private func emitHeadings(
    through time: Double, _ track: ReplayTrack, _ context: any SourceContext
  ) {
    guard !track.headings.isEmpty else { return }
    let range = state.withLock { state -> Range<Int> in
      var end = state.headingIndex
      while end < track.headings.count, track.headings[end].time <= time { end += 1 }
      defer { state.headingIndex = end }
      return state.headingIndex..<end
    }
    for index in range {
      var sample = track.headings[index]
      sample.isSimulated = true
      context.emitHeading(sample)
    }
  }
}
