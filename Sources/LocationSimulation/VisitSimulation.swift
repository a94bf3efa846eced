import Foundation
import Geodesy
import LocationEngine
import LocationModel
import LocationServices
import LocationSources
import Synchronization

/// A GNSS receiver that follows a `SyntheticDay` with the errors of a real one, on the hub's clock:
/// power `.high`, 5 m nominal; after each start the first fix comes `timeToFix` seconds later, then
/// one per second.
///
/// Each fix is the truth plus white noise (σ 3 to 8 m per axis, per day; doubled indoors) plus a
/// drift that wanders slowly (a Gauss–Markov process per axis with a 5-minute time constant, σ 8 m
/// outdoors and 25 m indoors, as multipath gives), and reports the total σ as its accuracy. One fix
/// in 200 jumps 150 to 500 m while claiming 20 to 40 m (a reflection), and one start in five gives
/// first a coarse fix (150 to 300 m, claimed as such). During the day's outages it gives nothing.
final class SyntheticReceiver: LocationSource {
  private struct State {
    var generation = 0
    var pending: (any Cancellable)?
    var random: SeededRandom
    var drift = (east: 0.0, north: 0.0)
    var driftTime: Double?
  }

  let descriptor = SourceDescriptor(url: "sim-gnss://noisy", nominalAccuracy: 5, power: .high)
  let day: SyntheticDay
  let timeToFix: Double
  /// The hub monotonic instant of the day's start, and its wall-clock time.
  let origin: EngineInstant
  private let noise: Double
  private let state: Mutex<State>

  init(day: SyntheticDay, origin: EngineInstant, timeToFix: Double) {
    self.day = day
    self.origin = origin
    self.timeToFix = timeToFix
    var random = SeededRandom(seed: day.seed ^ 0x5EED_0F_F1C5)
    noise = random.uniform(3...8)
    state = Mutex(State(random: random))
  }

  func start(context: any SourceContext) {
    let generation = state.withLock { state -> Int in
      state.generation += 1
      return state.generation
    }
    schedule(after: timeToFix, first: true, generation: generation, context)
  }

  func stop() {
    state.withLock { state -> (any Cancellable)? in
      state.generation += 1
      defer { state.pending = nil }
      return state.pending
    }?.cancel()
  }

  private func schedule(
    after seconds: Double, first: Bool, generation: Int, _ context: any SourceContext
  ) {
    let token = context.schedule(after: seconds) { [self] in
      guard state.withLock({ $0.generation == generation }) else { return }
      let now = context.now
      let time = now.monotonic - origin.monotonic
      if !day.inOutage(time), let fix = makeFix(at: time, wall: now.wall, first: first) {
        context.emit(fix)
      }
      schedule(after: 1, first: false, generation: generation, context)
    }
    let stale = state.withLock { state -> Bool in
      guard state.generation == generation else { return true }
      state.pending = token
      return false
    }
    if stale { token.cancel() }
  }

  /// Five minutes: the drift's time constant.
  private static let driftTime = 300.0

  private func makeFix(at time: Double, wall: Double, first: Bool) -> Fix? {
    let truth = day.position(at: time)
    let (east, north, accuracy) = state.withLock { state -> (Double, Double, Double) in
      let driftSigma = truth.indoors ? 25.0 : 8.0
      // The exact Gauss–Markov step over the time since the last draw (any gap).
      let elapsed = state.driftTime.map { time - $0 } ?? .infinity
      let keep = exp(-elapsed / Self.driftTime)
      let fresh = driftSigma * (1 - keep * keep).squareRoot()
      state.drift.east = keep * state.drift.east + fresh * state.random.gaussian()
      state.drift.north = keep * state.drift.north + fresh * state.random.gaussian()
      state.driftTime = time
      let white = truth.indoors ? 2 * noise : noise
      var east = truth.east + state.drift.east + white * state.random.gaussian()
      var north = truth.north + state.drift.north + white * state.random.gaussian()
      var accuracy = (white * white + driftSigma * driftSigma).squareRoot()
      if first, state.random.chance(0.2) {
        accuracy = state.random.uniform(150...300)
        east += accuracy * state.random.gaussian()
        north += accuracy * state.random.gaussian()
      } else if state.random.chance(0.005) {
        let jump = state.random.uniform(150...500)
        let bearing = state.random.uniform(0...(2 * Double.pi))
        east += jump * sin(bearing)
        north += jump * cos(bearing)
        accuracy = state.random.uniform(20...40)
      }
      return (east, north, accuracy)
    }
    let point = day.plane.unproject(east: east, north: north)
    return Fix(
      latitude: point.latitude, longitude: point.longitude, horizontalAccuracy: accuracy,
      time: wall, quality: .simulated, isSimulated: true, source: descriptor.url)
  }
}

/// Replays seeded `SyntheticDay`s through a real `LocationHub` on a manual clock with
/// `startVisits`, and scores the visits against the days' truth.
package enum VisitSimulation {
  /// How the receiver runs.
  package enum Mode: String, Sendable, CaseIterable {
    /// Visit monitoring alone: the receiver is duty-cycled (`VisitDutyCycle`).
    case dutyCycled = "duty-cycled"
    /// Another client runs best-accuracy updates too: the receiver gives a fix every second.
    case continuous = "continuous 1 Hz"
  }

  /// How an event compares with the truth.
  package struct Score: Sendable, Equatable {
    /// Events the detector reported.
    package var detected = 0
    /// True events (arrivals or departures that the day has).
    package var truth = 0
    /// Reported events matched to a true one: the same place (within 150 m) and at most 5 minutes
    /// from it; each true event is matched at most once.
    package var matched = 0
    /// The matched events' absolute time errors, seconds.
    package var errors: [Double] = []
    /// The indices (in the day's reported visits) of the events matched to no true one.
    package var unmatched: [Int] = []

    /// Creates a score.
    package init(detected: Int = 0, truth: Int = 0) {
      self.detected = detected
      self.truth = truth
    }

    package var precision: Double { detected > 0 ? Double(matched) / Double(detected) : 1 }
    package var recall: Double { truth > 0 ? Double(matched) / Double(truth) : 1 }

    package mutating func add(_ other: Score) {
      detected += other.detected
      truth += other.truth
      matched += other.matched
      errors += other.errors
      unmatched += other.unmatched
    }
  }

  /// What one day measured.
  package struct Report: Sendable, Equatable {
    package var seed: UInt64
    /// The day's length, seconds.
    package var duration: Double
    package var stays: Int
    /// Stops that are no visits (traffic lights, drop-offs, crossings).
    package var stops: Int
    /// Reported events matched to no true one that lie at a stop (place and time).
    package var falseAtStops: Int
    /// The visits reported, times in seconds from the day's start.
    package var visits: [Visit]
    package var arrivals: Score
    package var departures: Score
    /// Seconds the receiver was on.
    package var onSeconds: Double

    package var onFraction: Double { duration > 0 ? onSeconds / duration : 0 }
  }

  /// The largest time error of a matched event, seconds (the 5 minutes).
  package static let tolerance = 300.0
  /// The largest distance between a reported visit and the true place, metres.
  package static let placeTolerance = VisitDetector.radius

  /// Runs one day.
  /// - Parameters:
  ///   - day: The day.
  ///   - mode: How the receiver runs.
  ///   - timeToFix: The receiver's seconds from a start to its first fix.
  /// - Returns: The scores.
  package static func run(_ day: SyntheticDay, mode: Mode = .dutyCycled, timeToFix: Double = 5)
    -> Report
  {
    let start = 1_767_247_200.0  // 2026-01-01T06:00:00Z
    let clock = ManualClock(wall: start)
    let receiver = SyntheticReceiver(day: day, origin: clock.now, timeToFix: timeToFix)
    let hub = LocationHub(
      app: "visit-simulation", sources: .objects({ [receiver] }),
      persistence: MemoryPersistence(), policy: .grant, clock: clock)
    hub.setAuthorization(AuthorizationSnapshot(status: AuthorizationStatus.authorizedAlways))
    let recorder = VisitRecorder(clock: clock)
    let id = hub.register(recorder)
    hub.startVisits(requester: id)
    if mode == .continuous {
      hub.startUpdates(id, UpdateRequest(desiredAccuracy: -1, distanceFilter: -1))
    }
    clock.advance(by: day.duration)
    let onSeconds = hub.sourceUsage.first { $0.url == receiver.descriptor.url }?.onSeconds ?? 0
    hub.send(.stopVisits)
    hub.unregister(id)
    let visits = recorder.visits.map { visit -> Visit in
      var local = visit
      local.arrival = visit.arrival.map { $0 - start }
      local.departure = visit.departure.map { $0 - start }
      return local
    }
    return score(visits, day, onSeconds: onSeconds)
  }

  /// Scores reported visits (times in seconds from the day's start) against a day.
  static func score(_ visits: [Visit], _ day: SyntheticDay, onSeconds: Double) -> Report {
    let places = visits.map { day.plane.project(latitude: $0.latitude, longitude: $0.longitude) }
    func distance(_ index: Int, _ east: Double, _ north: Double) -> Double {
      let de = places[index].east - east
      let dn = places[index].north - north
      return (de * de + dn * dn).squareRoot()
    }
    let arrivals = visits.indices.filter { visits[$0].departure == nil }
    let departures = visits.indices.filter { visits[$0].departure != nil }
    let arrivalScore = match(
      arrivals, truth: day.stays.compactMap { stay in stay.arrival.map { (stay, $0) } },
      time: { visits[$0].arrival }, distance: distance)
    let departureScore = match(
      departures, truth: day.stays.compactMap { stay in stay.departure.map { (stay, $0) } },
      time: { visits[$0].departure }, distance: distance)
    // An event matched to nothing whose place is a stop's, near the stop's time.
    var falseAtStops = 0
    for index in arrivalScore.unmatched + departureScore.unmatched {
      let visit = visits[index]
      let time = visit.departure ?? visit.arrival ?? -1
      if day.stops.contains(where: {
        distance(index, $0.east, $0.north) <= placeTolerance
          && time >= $0.start - tolerance && time <= $0.end + tolerance
      }) {
        falseAtStops += 1
      }
    }
    return Report(
      seed: day.seed, duration: day.duration, stays: day.stays.count, stops: day.stops.count,
      falseAtStops: falseAtStops, visits: visits, arrivals: arrivalScore,
      departures: departureScore, onSeconds: onSeconds)
  }

  /// Greedy matching, closest in time first, of reported events to true ones.
  private static func match(
    _ reported: [Int], truth: [(SyntheticDay.Stay, Double)], time: (Int) -> Double?,
    distance: (Int, Double, Double) -> Double
  ) -> Score {
    var candidates: [(error: Double, event: Int, truth: Int)] = []
    for event in reported {
      guard let eventTime = time(event) else { continue }
      for (index, (stay, trueTime)) in truth.enumerated()
      where distance(event, stay.east, stay.north) <= placeTolerance
        && abs(eventTime - trueTime) <= tolerance
      {
        candidates.append((abs(eventTime - trueTime), event, index))
      }
    }
    var usedEvents: Set<Int> = []
    var usedTruth: Set<Int> = []
    var score = Score(detected: reported.count, truth: truth.count)
    for candidate in candidates.sorted(by: { $0.error < $1.error })
    where !usedEvents.contains(candidate.event) && !usedTruth.contains(candidate.truth) {
      usedEvents.insert(candidate.event)
      usedTruth.insert(candidate.truth)
      score.matched += 1
      score.errors.append(candidate.error)
    }
    score.unmatched = reported.filter { !usedEvents.contains($0) }
    return score
  }
}

/// Collects the visits a hub delivers.
private final class VisitRecorder: HubClient {
  private let clock: ManualClock
  private let collected = Mutex<[Visit]>([])

  init(clock: ManualClock) { self.clock = clock }

  var visits: [Visit] { collected.withLock { $0 } }

  func hub(_ hub: LocationHub, deliver delivery: HubDelivery) {
    switch delivery {
    case .visit(let visit): collected.withLock { $0.append(visit) }
    case .locations, .error, .authorization, .regionEvents, .regionStarted, .regionFailed,
      .regionState, .heading, .headingInterference, .deferredFinished, .paused, .resumed,
      .beacons, .rangingFailed:
      break
    }
  }
}
