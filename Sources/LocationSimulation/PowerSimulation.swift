import Geodesy
import LocationEngine
import LocationModel
import LocationServices
import LocationSources
import Synchronization

/// A synthetic movement: legs of staying put and of travelling in a straight line (a geodesic) at a
/// constant speed, from a start point. The truth against which power and lateness are measured.
package struct PowerTrace: Sendable {
  /// One part of the movement.
  package enum Leg: Sendable, Equatable {
    /// Stay at the current position for this many seconds.
    case stay(seconds: Double)
    /// Travel `metres` at `speed` (m/s) on the azimuth `bearing` (degrees from north).
    case travel(metres: Double, speed: Double, bearing: Double)
  }

  /// Where the device is at one instant.
  package struct Position: Sendable, Equatable {
    /// Degrees.
    package var latitude: Double
    /// Degrees.
    package var longitude: Double
    /// Metres per second (0 when staying).
    package var speed: Double
    /// Degrees from north; -1 when staying.
    package var course: Double
  }

  private struct Segment: Sendable {
    var start: Double
    var duration: Double
    var latitude: Double
    var longitude: Double
    var speed: Double
    var bearing: Double
  }

  /// The trace's name (for reports).
  package let name: String
  /// Its length, seconds.
  package let duration: Double
  private let segments: [Segment]

  /// Creates a trace.
  /// - Parameters:
  ///   - name: A name for reports.
  ///   - latitude: Start latitude, degrees.
  ///   - longitude: Start longitude, degrees.
  ///   - legs: The movement, in order. Legs with a non-positive or non-finite length or speed are
  ///     skipped.
  package init(name: String, latitude: Double, longitude: Double, legs: [Leg]) {
    self.name = name
    var segments: [Segment] = []
    var time = 0.0
    var latitude = latitude
    var longitude = longitude
    for leg in legs {
      switch leg {
      case .stay(let seconds):
        guard seconds > 0, seconds.isFinite else { continue }
        segments.append(
          Segment(
            start: time, duration: seconds, latitude: latitude, longitude: longitude, speed: 0,
            bearing: -1))
        time += seconds
      case .travel(let metres, let speed, let bearing):
        guard metres > 0, metres.isFinite, speed > 0, speed.isFinite else { continue }
        let seconds = metres / speed
        segments.append(
          Segment(
            start: time, duration: seconds, latitude: latitude, longitude: longitude, speed: speed,
            bearing: bearing))
        let end = Geodesic.wgs84.direct(
          latitude: latitude, longitude: longitude, azimuth: bearing, distance: metres)
        latitude = end.latitude
        longitude = end.longitude
        time += seconds
      }
    }
    if segments.isEmpty {
      segments.append(
        Segment(
          start: 0, duration: 0, latitude: latitude, longitude: longitude, speed: 0, bearing: -1))
    }
    self.segments = segments
    self.duration = time
  }

  /// The position `time` seconds after the start (clamped to the trace).
  package func position(at time: Double) -> Position {
    var low = 0
    var high = segments.count - 1
    while low < high {
      let middle = (low + high + 1) / 2
      if segments[middle].start <= time { low = middle } else { high = middle - 1 }
    }
    let segment = segments[low]
    let elapsed = min(max(time - segment.start, 0), segment.duration)
    guard segment.speed > 0 else {
      return Position(
        latitude: segment.latitude, longitude: segment.longitude, speed: 0, course: -1)
    }
    let point = Geodesic.wgs84.direct(
      latitude: segment.latitude, longitude: segment.longitude, azimuth: segment.bearing,
      distance: segment.speed * elapsed)
    let moving = elapsed < segment.duration
    let course = point.azimuth < 0 ? point.azimuth + 360 : point.azimuth
    return Position(
      latitude: point.latitude, longitude: point.longitude, speed: moving ? segment.speed : 0,
      course: moving ? course : -1)
  }
}

/// A simulated GNSS receiver following a `PowerTrace` on the hub's clock: power `.high`, 5 m
/// nominal accuracy; after each start the first fix comes `timeToFix` seconds later, then one fix
/// per `interval`. Used to measure how long power management keeps a receiver on.
package final class SimulatedReceiver: LocationSource {
  private struct State {
    var generation = 0
    var pending: (any Cancellable)?
    var starts = 0
  }

  /// A high-power source named `sim-gnss://receiver`.
  package let descriptor = SourceDescriptor(
    url: "sim-gnss://receiver", nominalAccuracy: 5, power: .high)
  /// The trace followed.
  package let trace: PowerTrace
  /// Seconds from a start to the first fix (a hot start is a few seconds).
  package let timeToFix: Double
  /// Seconds between fixes while on.
  package let interval: Double
  /// The hub monotonic instant at which the trace starts.
  package let origin: Double
  /// The quality of its fixes (`simulated`; `autonomous` where Wi-Fi learns from them).
  package let quality: FixQuality
  private let state = Mutex(State())

  /// Creates a receiver.
  /// - Parameters:
  ///   - trace: The movement to report.
  ///   - origin: The hub monotonic instant of the trace's start.
  ///   - timeToFix: Seconds from a start to the first fix.
  ///   - interval: Seconds between fixes.
  ///   - quality: The quality of its fixes.
  package init(
    trace: PowerTrace, origin: Double, timeToFix: Double = 5, interval: Double = 1,
    quality: FixQuality = .simulated
  ) {
    self.trace = trace
    self.quality = quality
    self.origin = origin
    self.timeToFix = timeToFix
    self.interval = interval
  }

  /// How many times the receiver was switched on.
  package var starts: Int { state.withLock { $0.starts } }

  package func start(context: any SourceContext) {
    let generation = state.withLock { state -> Int in
      state.generation += 1
      state.starts += 1
      return state.generation
    }
    schedule(after: timeToFix, generation: generation, context)
  }

  package func stop() {
    state.withLock { state -> (any Cancellable)? in
      state.generation += 1
      defer { state.pending = nil }
      return state.pending
    }?.cancel()
  }

  private func schedule(after seconds: Double, generation: Int, _ context: any SourceContext) {
    let token = context.schedule(after: seconds) { [self] in
      guard state.withLock({ $0.generation == generation }) else { return }
      let now = context.now
      let truth = trace.position(at: now.monotonic - origin)
      context.emit(
        Fix(
          latitude: truth.latitude, longitude: truth.longitude, horizontalAccuracy: 5,
          speed: truth.speed, course: truth.course, time: now.wall, quality: quality,
          isSimulated: true))
      schedule(after: interval, generation: generation, context)
    }
    let stale = state.withLock { state -> Bool in
      guard state.generation == generation else { return true }
      state.pending = token
      return false
    }
    if stale { token.cancel() }
  }
}

/// Replays a `PowerTrace` through a real `LocationHub` on a manual clock with a
/// `SimulatedReceiver`, and measures what issue 7 asks: the seconds the receiver was on, the
/// deliveries, and how late the app heard of movement.
package enum PowerSimulation {
  /// How the client asks for locations.
  package enum Mode: String, Sendable, CaseIterable {
    /// `startUpdatingLocation` at best accuracy, `pausesLocationUpdatesAutomatically = false`.
    case continuous
    /// `startMonitoringSignificantLocationChanges`.
    case significantChange = "significant change"
    /// `startUpdatingLocation` at best accuracy with automatic pausing (`activityType .other`).
    case autoPause = "auto-pause"
    /// `startMonitoringVisits` (`VisitDutyCycle`); visits are not locations, so no deliveries.
    case visits
  }

  /// What one run measured.
  package struct Report: Sendable, Equatable {
    /// The trace's length, seconds.
    package var duration: Double
    /// Seconds the receiver was on.
    package var onSeconds: Double
    /// Times the receiver was switched on.
    package var starts: Int
    /// Locations delivered to the client.
    package var deliveries: Int
    /// The worst time between the device first being 500 m from the last delivered location and
    /// the next delivery, seconds (0 when it never moved 500 m).
    package var worstDelay500m: Double
    /// The worst time between the start of a movement while paused and the resume, seconds.
    package var worstResumeDelay: Double
    /// Movements that began while paused.
    package var resumes: Int
    /// Pauses.
    package var pauses: Int
    /// Seconds the Wi-Fi scanner was on (0 without Wi-Fi).
    package var scannerOnSeconds = 0.0
    /// The median distance, metres, between the delivered locations and the truth at their time.
    package var medianError = 0.0
    /// Delivered locations located from Wi-Fi scans.
    package var wifiDeliveries = 0

    /// On-time as a fraction of the trace.
    package var onFraction: Double { duration > 0 ? onSeconds / duration : 0 }
  }

  /// Runs one trace in one mode.
  /// - Parameters:
  ///   - trace: The movement.
  ///   - mode: How the client asks.
  ///   - timeToFix: The receiver's seconds from a start to its first fix.
  ///   - step: Seconds between the simulation's observations of the truth (1 s).
  ///   - wifi: A Wi-Fi scanner beside the receiver and the machine's knowledge (nil: none); its
  ///     receiver's fixes are then `autonomous`, so that the knowledge learns from them.
  /// - Returns: The measurements.
  package static func run(
    _ trace: PowerTrace, mode: Mode, timeToFix: Double = 5, step: Double = 1, wifi: Wifi? = nil
  ) -> Report {
    let clock = wifi.map { ManualClock(wall: $0.wallStart) } ?? ManualClock()
    let wallStart = clock.now.wall - clock.now.monotonic
    let receiver = SimulatedReceiver(
      trace: trace, origin: 0, timeToFix: timeToFix,
      quality: wifi == nil ? .simulated : .autonomous)
    let scanner = wifi.map {
      SimulatedScanner(trace: trace, field: $0.field, origin: 0, seed: $0.seed)
    }
    let sources: [any LocationSource] = [receiver] + (scanner.map { [$0] } ?? [])
    let hub = LocationHub(
      app: "power-simulation", sources: .objects({ sources }),
      persistence: MemoryPersistence(), policy: .grant, clock: clock, wifi: wifi?.knowledge)
    hub.setAuthorization(
      AuthorizationSnapshot(status: AuthorizationStatus.authorizedAlways))
    let recorder = Recorder(clock: clock)
    let id = hub.register(recorder)
    switch mode {
    case .continuous:
      hub.startUpdates(id, UpdateRequest(desiredAccuracy: -1, distanceFilter: -1))
    case .significantChange:
      hub.startSignificantChanges(id)
    case .autoPause:
      hub.startUpdates(
        id,
        UpdateRequest(
          desiredAccuracy: -1, distanceFilter: -1, pausesAutomatically: true, activity: .other))
    case .visits:
      hub.startVisits(requester: id)
    }
    var lateness = Lateness()
    var errors: [Double] = []
    var wifiDeliveries = 0
    var time = 0.0
    while time < trace.duration {
      clock.advance(by: step)
      time = clock.now.monotonic
      let events = recorder.take()
      for case .location(let fix) in events {
        let truth = trace.position(at: fix.time - wallStart)
        errors.append(
          Geodesic.wgs84.distance(
            latitude1: fix.latitude, longitude1: fix.longitude, latitude2: truth.latitude,
            longitude2: truth.longitude))
        if fix.quality == .network { wifiDeliveries += 1 }
      }
      lateness.observe(trace.position(at: time), at: time, events)
    }
    let usage = hub.sourceUsage
    let onSeconds = usage.first { $0.url == receiver.descriptor.url }?.onSeconds ?? 0
    hub.unregister(id)
    var report = Report(
      duration: trace.duration, onSeconds: onSeconds, starts: receiver.starts,
      deliveries: lateness.deliveries, worstDelay500m: lateness.worstDelay,
      worstResumeDelay: lateness.worstResume, resumes: lateness.resumes,
      pauses: lateness.pauses)
    if let scanner {
      report.scannerOnSeconds =
        usage.first { $0.url == scanner.descriptor.url }?.onSeconds ?? 0
    }
    errors.sort()
    report.medianError = errors.isEmpty ? 0 : errors[errors.count / 2]
    report.wifiDeliveries = wifiDeliveries
    return report
  }

  /// The three reference traces of issue 7, in the Netherlands (any place would do).
  package static var referenceTraces: [PowerTrace] { [commute, stationaryDay, walk] }

  /// A 2-hour commute with stops: 15 minutes at home, a 20 km drive with a minute at each of ten
  /// traffic lights, 26 minutes at work, the drive back, 11 minutes at home.
  package static var commute: PowerTrace {
    var legs: [PowerTrace.Leg] = [.stay(seconds: 900)]
    // 20 km at 50 km/h in 2 km blocks, a 60 s stop at each light.
    for _ in 0..<10 {
      legs += [.travel(metres: 2000, speed: 13.9, bearing: 60), .stay(seconds: 60)]
    }
    legs.append(.stay(seconds: 1560))
    for _ in 0..<10 {
      legs += [.travel(metres: 2000, speed: 13.9, bearing: 240), .stay(seconds: 60)]
    }
    legs.append(.stay(seconds: 662))
    return PowerTrace(name: "commute 2 h", latitude: 52.09, longitude: 5.12, legs: legs)
  }

  /// A 6-hour day mostly stationary at two places: nearly three hours at each, a 15 km drive
  /// between them, and a short walk at lunch.
  package static var stationaryDay: PowerTrace {
    PowerTrace(
      name: "stationary day 6 h", latitude: 52.37, longitude: 4.89,
      legs: [
        .stay(seconds: 9000), .travel(metres: 15_000, speed: 12.5, bearing: 180),
        .stay(seconds: 5400), .travel(metres: 400, speed: 1.4, bearing: 90),
        .travel(metres: 400, speed: 1.4, bearing: 270), .stay(seconds: 5428),
      ])
  }

  /// A 1-hour walk with a 5-minute stop halfway.
  package static var walk: PowerTrace {
    PowerTrace(
      name: "walk 1 h", latitude: 52.16, longitude: 4.49,
      legs: [
        .travel(metres: 2310, speed: 1.4, bearing: 30), .stay(seconds: 300),
        .travel(metres: 2310, speed: 1.4, bearing: 120),
      ])
  }
}

/// Collects deliveries with the instant they were made.
private final class Recorder: HubClient {
  enum Event {
    case location(Fix)
    case paused
    case resumed
  }

  private let clock: ManualClock
  private let events = Mutex<[Event]>([])

  init(clock: ManualClock) { self.clock = clock }

  func hub(_ hub: LocationHub, deliver delivery: HubDelivery) {
    switch delivery {
    case .locations(let fixes): events.withLock { $0 += fixes.map(Event.location) }
    case .paused: events.withLock { $0.append(.paused) }
    case .resumed: events.withLock { $0.append(.resumed) }
    default: break
    }
  }

  func take() -> [Event] {
    events.withLock { events in
      defer { events = [] }
      return events
    }
  }
}

/// The lateness measures, from the truth and the deliveries of each step.
private struct Lateness {
  var deliveries = 0
  var worstDelay = 0.0
  var worstResume = 0.0
  var resumes = 0
  var pauses = 0
  /// The last delivered location.
  private var reference: Fix?
  /// When the truth first lay 500 m from `reference`.
  private var movedAt: Double?
  /// Paused, and where the device was then.
  private var pausedAt: PowerTrace.Position?
  /// When the device first moved while paused.
  private var movingSince: Double?

  mutating func observe(_ truth: PowerTrace.Position, at time: Double, _ events: [Recorder.Event]) {
    for event in events {
      switch event {
      case .location(let fix):
        deliveries += 1
        if let movedAt { worstDelay = max(worstDelay, time - movedAt) }
        reference = fix
        movedAt = nil
      case .paused:
        pauses += 1
        pausedAt = truth
        movingSince = nil
      case .resumed:
        if let movingSince {
          resumes += 1
          worstResume = max(worstResume, time - movingSince)
        }
        pausedAt = nil
        movingSince = nil
      }
    }
    if let reference, movedAt == nil,
      Geodesic.wgs84.distance(
        latitude1: reference.latitude, longitude1: reference.longitude,
        latitude2: truth.latitude, longitude2: truth.longitude) >= SignificantChange.minimumDistance
    {
      movedAt = time
    }
    if pausedAt != nil, movingSince == nil, truth.speed > 0 { movingSince = time }
  }
}
