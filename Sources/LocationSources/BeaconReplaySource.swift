import LocationFormats
import LocationModel
import Synchronization

/// `beacons+replay://`: a recording of Bluetooth LE advertisements (`BeaconRecording`, JSON lines)
/// played on the runtime's clock as iBeacon advertisements.
///
/// - What: the recording's iBeacon advertisements, in file order; its other records (other
///   companies, Apple's other advertisement types) are not played. Lines the decoder skips are
///   kept in ``problems`` and counted in ``problemCount`` for the program to tell its user.
/// - Timing: as `ReplaySource`: the gaps between the recorded times, divided by `speed`; with
///   `instant`, everything at once in batches (so that `stop()` takes effect between them). A time
///   a little before the one before it (within the decoder's tolerance) is played at once, and the
///   times after it keep their offsets from the start.
/// - Time: each advertisement is stamped with the runtime's wall-clock time when it is played, not
///   the recorded one, so that what is ranged from it is "now" (a recording is played as if heard
///   live). This differs from `ReplaySource`, whose fixes keep a recording's timestamps.
/// - At the end: `loop` starts again 1 / `speed` seconds after the last advertisement; otherwise
///   the source reports that it has ended.
/// - Failures, all permanent: `.unavailable` for a file that cannot be read or is larger than
///   ``maximumFileSize``; `.malformed` for one that holds no iBeacon advertisement.
package final class BeaconReplaySource: LocationSource {
  private struct State {
    var recording: BeaconRecording?
    /// Each advertisement's playing offset from the first, seconds of recording time.
    var offsets: [Double] = []
    var context: (any SourceContext)?
    var pending: (any Cancellable)?
    var generation = 0
  }

  /// Advertisements emitted per scheduled step in `instant` mode.
  static let instantBatch = 256
  /// The largest recording read, in bytes (about 300 000 lines; an hour of a busy room).
  package static let maximumFileSize = 64 << 20

  /// What the source is: `beacons+replay://<path>`, advertisements only, at no power cost.
  package let descriptor: SourceDescriptor
  private let path: String
  private let options: SourceURL.ReplayOptions
  private let state = Mutex(State())

  /// Creates a replay of the recording at `path`; the file is read when the source starts.
  package init(path: String, options: SourceURL.ReplayOptions) {
    self.path = path
    self.options = options
    self.descriptor = Self.descriptor(
      url: "beacons+" + SourceURL.replay(path: path, options: options).text)
  }

  /// Creates a replay of a recording already in memory (tests, benchmarks).
  package init(recording: BeaconRecording, name: String, options: SourceURL.ReplayOptions) {
    self.path = name
    self.options = options
    self.descriptor = Self.descriptor(url: name)
    state.withLock { $0.recording = recording }
  }

  /// The problems the decoder found in the recording (the first ones, with file and line); empty
  /// before the source has started.
  package var problems: [FormatError] { state.withLock { $0.recording?.problems ?? [] } }

  /// How many lines (and malformed iBeacon frames) the decoder skipped.
  package var problemCount: Int { state.withLock { $0.recording?.problemCount ?? 0 } }

  /// What every beacon replay is: advertisements only, at no power cost.
  private static func descriptor(url: String) -> SourceDescriptor {
    SourceDescriptor(
      url: url, nominalAccuracy: .infinity, power: .none, producesLocation: false,
      producesBeacons: true)
  }

  /// Reads and decodes the recording (the first time only; a restart plays it again from the
  /// beginning) and plays it into `context`, or reports why it cannot.
  package func start(context: any SourceContext) {
    let recording: BeaconRecording
    if let cached = state.withLock({ $0.recording }) {
      recording = cached
    } else {
      do {
        recording = try load()
      } catch {
        context.fail(error)
        return
      }
    }
    guard !recording.advertisements.isEmpty else {
      context.fail(Self.nothingToPlay(recording, path: path))
      return
    }
    let generation = state.withLock { state -> Int in
      state.recording = recording
      state.offsets = Self.offsets(recording.advertisements)
      state.context = context
      state.generation += 1
      return state.generation
    }
    step(index: 0, generation: generation)
  }

  /// Stops playing: the pending step is cancelled and nothing more reaches the context.
  package func stop() {
    let pending = state.withLock { state -> (any Cancellable)? in
      state.generation += 1
      state.context = nil
      defer { state.pending = nil }
      return state.pending
    }
    pending?.cancel()
  }

  /// Reads and decodes the file.
  private func load() throws(SourceError) -> BeaconRecording {
    let bytes: [UInt8]
    do {
      bytes = try readFile(path, limit: Self.maximumFileSize + 1)
    } catch {
      throw SourceError(
        .unavailable, "beacon replay: cannot read \(path): \(error.message)", isPermanent: true)
    }
    guard bytes.count <= Self.maximumFileSize else {
      throw SourceError(
        .unavailable,
        "beacon replay: \(path) is larger than \(Self.maximumFileSize >> 20) MiB",
        isPermanent: true)
    }
    return BeaconRecording.decode(bytes, file: path)
  }

  /// The failure of a recording without an advertisement to play, naming the first problem.
  private static func nothingToPlay(_ recording: BeaconRecording, path: String) -> SourceError {
    var message: String
    if recording.records.isEmpty {
      message = "beacon replay: \(path) holds no well-formed advertisement line"
    } else {
      message =
        "beacon replay: \(path) holds no iBeacon advertisement among its "
        + "\(recording.records.count) records"
    }
    if let first = recording.problems.first {
      message += " (\(recording.problemCount) lines skipped; the first: \(first))"
    }
    return SourceError(.malformed, message, isPermanent: true)
  }

  /// Each advertisement's offset from the first in recording time: the latest time so far minus
  /// the first time, so that one slightly out of order is played at once without delaying the
  /// rest.
  private static func offsets(_ advertisements: [BeaconAdvertisement]) -> [Double] {
    guard let first = advertisements.first?.time else { return [] }
    var latest = first
    return advertisements.map { advertisement in
      latest = max(latest, advertisement.time)
      return latest - first
    }
  }

  /// The playing speed: the option when it is a positive number, else real time.
  private var speed: Double {
    options.speed > 0 && options.speed.isFinite ? options.speed : 1
  }

  /// Emits the advertisement at `index` (or a batch in instant mode) and schedules the next step.
  private func step(index: Int, generation: Int) {
    guard
      let (advertisements, offsets, context) = state.withLock({
        state -> ([BeaconAdvertisement], [Double], any SourceContext)? in
        guard state.generation == generation, let recording = state.recording,
          let context = state.context
        else { return nil }
        return (recording.advertisements, state.offsets, context)
      })
    else { return }
    guard index < advertisements.count else {
      if options.loop {
        schedule(after: options.instant ? 0 : 1 / speed, index: 0, generation, context)
      } else {
        context.end()
      }
      return
    }
    let end = options.instant ? min(advertisements.count, index + Self.instantBatch) : index + 1
    for position in index..<end {
      var advertisement = advertisements[position]
      advertisement.time = context.now.wall
      context.emitAdvertisement(advertisement)
    }
    var delay = 0.0
    if !options.instant, end < advertisements.count {
      delay = (offsets[end] - offsets[end - 1]) / speed
    }
    schedule(after: delay, index: end, generation, context)
  }

  /// Schedules the step at `index`, unless the source was stopped meanwhile.
  private func schedule(
    after delay: Double, index: Int, _ generation: Int, _ context: any SourceContext
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
}
