import Geodesy
import LocationModel
import Testing

@testable import LocationEngine

/// One engine driven by hand for the power tests: a clock in seconds from an origin (the same
/// offset on both clocks), one running source, one client.
private struct PowerRig {
  static let origin = EngineInstant(monotonic: 1000, wall: 1_767_225_600)
  /// Metres per degree of latitude near 45° N (WGS-84 meridian arc), for placing fixes.
  static let metresPerDegree = 111_132.0

  var engine: LocationEngine
  /// Seconds since the origin.
  var time = 0.0
  let client = ClientID(1)

  /// An engine with one source of the given power (2: a receiver; 0: a file) and one client.
  init(allowed: Bool = true, power: Int = SourceInfo.highPower, nominalAccuracy: Double = 5) {
    engine = LocationEngine(allowed: allowed)
    let name = power >= SourceInfo.highPower ? "gpsd://receiver" : "static:///file"
    _ = engine.handle(
      .sourcesChanged([SourceInfo(name: name, nominalAccuracy: nominalAccuracy, power: power)]),
      at: Self.origin)
    _ = engine.handle(.addClient(client), at: Self.origin)
  }

  var now: EngineInstant { Self.origin.advanced(by: time) }

  /// The monotonic reading `seconds` after the origin.
  static func monotonic(_ seconds: Double) -> Double { origin.monotonic + seconds }

  /// Handles an event at `seconds` after the origin (now when nil).
  mutating func send(_ event: EngineEvent, at seconds: Double? = nil) -> [EngineEffect] {
    if let seconds { time = seconds }
    return engine.handle(event, at: now)
  }

  /// A fix `north` metres north of 45° N 7° E, stamped with the current wall-clock time.
  func fix(north: Double, accuracy: Double = 5, speed: Double = -1) -> Fix {
    Fix(
      latitude: 45 + north / Self.metresPerDegree, longitude: 7, horizontalAccuracy: accuracy,
      speed: speed, time: now.wall)
  }

  /// Sends a fix `north` metres north at `seconds` after the origin.
  mutating func fix(
    north: Double, at seconds: Double, accuracy: Double = 5, speed: Double = -1
  ) -> [EngineEffect] {
    time = seconds
    return engine.handle(.fix(fix(north: north, accuracy: accuracy, speed: speed)), at: now)
  }
}

/// What a list of effects says.
extension Array where Element == EngineEffect {
  /// The locations delivered, flattened.
  fileprivate var delivered: [Fix] {
    flatMap { effect -> [Fix] in
      if case .deliverLocations(_, let fixes) = effect { return fixes }
      return []
    }
  }

  /// The errors delivered.
  fileprivate var errors: [EngineError] {
    compactMap { effect in
      if case .deliverError(_, let error) = effect { return error }
      return nil
    }
  }

  /// The last demand change, if any (`.some(nil)`: sources stop).
  fileprivate var demand: Double?? {
    for effect in reversed() {
      if case .demandSources(let accuracy) = effect { return .some(accuracy) }
    }
    return .none
  }

  /// The deadline a timer was armed for, if it was.
  fileprivate func armed(_ timer: EngineTimer) -> Double? {
    for effect in reversed() {
      if case .armTimer(timer, let deadline) = effect { return deadline }
    }
    return nil
  }

  /// Whether the timer was cancelled.
  fileprivate func cancelled(_ timer: EngineTimer) -> Bool { contains(.cancelTimer(timer)) }

  /// The position of the first effect that matches.
  fileprivate func index(of match: (EngineEffect) -> Bool) -> Int? { firstIndex(where: match) }
}

private func isDelivery(_ effect: EngineEffect) -> Bool {
  if case .deliverLocations = effect { return true }
  return false
}

private func isPause(_ effect: EngineEffect) -> Bool {
  if case .pauseUpdates = effect { return true }
  return false
}

private func isResume(_ effect: EngineEffect) -> Bool {
  if case .resumeUpdates = effect { return true }
  return false
}

private func isDeferredFinish(_ effect: EngineEffect) -> Bool {
  if case .deferredFinished = effect { return true }
  return false
}

// MARK: - Significant change

/// `startMonitoringSignificantLocationChanges()` in the step function: `SignificantChange` decides
/// deliveries, `DutyCycle` runs the sources (LocationEngine+Power.swift).
@Suite struct PowerWiringSignificantChangeTests {
  @Test func firstFixIsDeliveredAtOnceAndTheBurstEnds() {
    var rig = PowerRig()
    let started = rig.send(.startSignificantChanges(rig.client), at: 0)
    #expect(started.delivered.isEmpty)
    #expect(started.armed(.dutyGiveUp(rig.client)) == PowerRig.monotonic(120))
    #expect(started.demand == .some(LocationEngine.significantChangeAccuracy))
    let first = rig.fix(north: 0, at: 4)
    #expect(first.delivered.count == 1)
    #expect(first.cancelled(.dutyGiveUp(rig.client)))
    #expect(first.armed(.dutyWake(rig.client)) == PowerRig.monotonic(4 + 300))
    #expect(first.demand == .some(nil))
  }

  /// Later fixes: at least 500 m from the last delivery and at least 300 s after it.
  @Test(arguments: [
    (seconds: 10.0, north: 5000.0, delivered: false),
    (seconds: 299.0, north: 2000.0, delivered: false),
    (seconds: 300.0, north: 450.0, delivered: false),
    (seconds: 300.0, north: 550.0, delivered: true),
    (seconds: 1200.0, north: 450.0, delivered: false),
    (seconds: 1200.0, north: 5000.0, delivered: true),
  ])
  func laterFixesFollowTheRule(seconds: Double, north: Double, delivered: Bool) {
    var rig = PowerRig()
    _ = rig.send(.startSignificantChanges(rig.client), at: 0)
    #expect(rig.fix(north: 0, at: 0).delivered.count == 1)
    let later = rig.fix(north: north, at: seconds)
    #expect(later.delivered.count == (delivered ? 1 : 0))
  }

  /// The reference is the last delivered fix, not the last fix seen.
  @Test func distanceCountsFromTheLastDelivery() {
    var rig = PowerRig()
    _ = rig.send(.startSignificantChanges(rig.client), at: 0)
    _ = rig.fix(north: 0, at: 0)
    #expect(rig.fix(north: 400, at: 300).delivered.isEmpty)
    #expect(rig.fix(north: 800, at: 400).delivered.count == 1)  // 800 m from the first
    #expect(rig.fix(north: 1200, at: 800).delivered.isEmpty)  // 400 m from the last delivery
    #expect(rig.fix(north: 1400, at: 900).delivered.count == 1)
  }

  /// The significant-change client's own settings play no part: a coarse fix is delivered, and a
  /// streaming request's distance filter on the same client does not hold back its deliveries.
  @Test func desiredAccuracyAndDistanceFilterDoNotApply() {
    var rig = PowerRig(power: 0, nominalAccuracy: 2000)
    _ = rig.send(.startSignificantChanges(rig.client), at: 0)
    #expect(rig.fix(north: 0, at: 0, accuracy: 2500).delivered.count == 1)
    _ = rig.send(
      .startUpdates(rig.client, UpdateRequest(desiredAccuracy: 10, distanceFilter: 10_000)))
    let moved = rig.fix(north: 600, at: 300, accuracy: 2500)
    #expect(moved.contains { $0 == .deliverLocations(rig.client, moved.delivered) })
    #expect(moved.delivered.count == 1)
  }

  /// A manager running both standard updates and significant change gets each location once.
  @Test func bothServicesDeliverEachLocationOnce() {
    var rig = PowerRig()
    _ = rig.send(.startSignificantChanges(rig.client), at: 0)
    _ = rig.send(.startUpdates(rig.client, UpdateRequest()), at: 0)
    #expect(rig.fix(north: 0, at: 1).delivered.count == 1)
    #expect(rig.fix(north: 700, at: 400).delivered.count == 1)
  }

  /// Demand: 5 km during a burst; between bursts none with a receiver, and with cheap sources
  /// their own nominal accuracy (5 m here), which keeps them running (nothing is saved by stopping
  /// them) without recalling a receiver.
  @Test(arguments: [
    (power: 2, offBetween: true), (power: 1, offBetween: false), (power: 0, offBetween: false),
  ])
  func demandFollowsTheBurstsWithAReceiverOnly(power: Int, offBetween: Bool) {
    var rig = PowerRig(power: power)
    let accuracy = LocationEngine.significantChangeAccuracy
    #expect(rig.send(.startSignificantChanges(rig.client), at: 0).demand == .some(accuracy))
    let between: Double? = offBetween ? nil : 5
    let first = rig.fix(north: 0, at: 5)
    #expect(first.demand == .some(between))
    let woken = rig.send(.timerFired(.dutyWake(rig.client)), at: 305)
    #expect(woken.demand == .some(accuracy))
    #expect(woken.armed(.dutyGiveUp(rig.client)) == PowerRig.monotonic(305 + 120))
    let gaveUp = rig.send(.timerFired(.dutyGiveUp(rig.client)), at: 425)
    #expect(gaveUp.demand == .some(between))
    #expect(gaveUp.armed(.dutyWake(rig.client)) == PowerRig.monotonic(425 + 300))
  }

  /// With cheap sources left running, a fix between bursts that passes the rule is delivered
  /// without waiting for the next wake.
  @Test func cheapSourceFixesBetweenBurstsAreJudged() {
    var rig = PowerRig(power: 0, nominalAccuracy: 1000)
    _ = rig.send(.startSignificantChanges(rig.client), at: 0)
    _ = rig.fix(north: 0, at: 1)
    #expect(rig.fix(north: 300, at: 150).delivered.isEmpty)
    #expect(rig.fix(north: 700, at: 301).delivered.count == 1)
  }

  /// The wake after a burst that delivered nothing comes `DutyCycle.interval(speed:)` later.
  @Test(arguments: [
    (speed: 0.0, interval: 300.0),
    (speed: 0.5, interval: 300.0),
    (speed: 1.0, interval: 250.0),
    (speed: 2.0, interval: 125.0),
    (speed: 4.0, interval: 62.5),
    (speed: 5.0, interval: 60.0),
    (speed: 30.0, interval: 60.0),
    (speed: -1.0, interval: 300.0),
  ])
  func wakeDeadlinesFollowTheSpeed(speed: Double, interval: Double) {
    #expect(DutyCycle.interval(speed: speed) == interval)
    var rig = PowerRig()
    _ = rig.send(.startSignificantChanges(rig.client), at: 0)
    _ = rig.fix(north: 0, at: 0, speed: speed)
    _ = rig.send(.timerFired(.dutyWake(rig.client)), at: 300)
    let burst = rig.fix(north: 100, at: 310, speed: speed)
    #expect(burst.delivered.isEmpty)
    #expect(burst.armed(.dutyWake(rig.client)) == PowerRig.monotonic(310 + interval))
  }

  /// No wake comes sooner than 300 s after the last delivery, however fast the device goes.
  @Test func noWakeBeforeFiveMinutesAfterADelivery() {
    var rig = PowerRig()
    _ = rig.send(.startSignificantChanges(rig.client), at: 0)
    #expect(
      rig.fix(north: 0, at: 0, speed: 30).armed(.dutyWake(rig.client)) == PowerRig.monotonic(300))
    _ = rig.send(.timerFired(.dutyWake(rig.client)), at: 300)
    let delivered = rig.fix(north: 9000, at: 302, speed: 30)
    #expect(delivered.delivered.count == 1)
    #expect(delivered.armed(.dutyWake(rig.client)) == PowerRig.monotonic(602))
  }

  @Test func aBurstWithoutAFixGivesUpAfterTwoMinutes() {
    var rig = PowerRig()
    _ = rig.send(.startSignificantChanges(rig.client), at: 0)
    let gaveUp = rig.send(.timerFired(.dutyGiveUp(rig.client)), at: 120)
    #expect(gaveUp.demand == .some(nil))
    #expect(gaveUp.armed(.dutyWake(rig.client)) == PowerRig.monotonic(120 + 300))
    let woken = rig.send(.timerFired(.dutyWake(rig.client)), at: 420)
    #expect(woken.demand == .some(LocationEngine.significantChangeAccuracy))
    #expect(woken.armed(.dutyGiveUp(rig.client)) == PowerRig.monotonic(540))
    // Still nothing delivered: the first fix of the monitoring is delivered at once.
    #expect(rig.fix(north: 0, at: 430).delivered.count == 1)
  }

  @Test func stopCancelsTheTimersAndTheNextStartDeliversAtOnce() {
    var rig = PowerRig()
    _ = rig.send(.startSignificantChanges(rig.client), at: 0)
    _ = rig.fix(north: 0, at: 0)
    let stopped = rig.send(.stopSignificantChanges(rig.client), at: 10)
    #expect(stopped.cancelled(.dutyWake(rig.client)))
    #expect(stopped.cancelled(.dutyGiveUp(rig.client)))
    #expect(rig.send(.timerFired(.dutyWake(rig.client)), at: 300).demand == .none)
    #expect(rig.fix(north: 5000, at: 310).delivered.isEmpty)
    // The last location (390 s old) is too old to count as a first fix: the next one is
    // delivered at once, however close to the first monitoring's delivery.
    _ = rig.send(.startSignificantChanges(rig.client), at: 700)
    #expect(rig.fix(north: 10, at: 701).delivered.count == 1)
  }

  /// A fresh cached location counts as the first fix: delivered at start, the source stays off.
  @Test func restartWithAFreshLastLocationDeliversItAtOnce() {
    var rig = PowerRig()
    _ = rig.send(.startSignificantChanges(rig.client), at: 0)
    _ = rig.fix(north: 0, at: 0)
    _ = rig.send(.stopSignificantChanges(rig.client), at: 10)
    let restarted = rig.send(.startSignificantChanges(rig.client), at: 20)
    #expect(restarted.delivered.count == 1)
    #expect(restarted.armed(.dutyWake(rig.client)) == PowerRig.monotonic(320))
    #expect(restarted.cancelled(.dutyGiveUp(rig.client)))
  }

  @Test func deniedAuthorizationGivesDenied() {
    var rig = PowerRig(allowed: false)
    let effects = rig.send(.startSignificantChanges(rig.client), at: 0)
    #expect(effects.errors == [.denied])
    #expect(effects.armed(.dutyGiveUp(rig.client)) == nil)
    #expect(effects.demand == .none || effects.demand == .some(nil))
    #expect(rig.fix(north: 0, at: 1).delivered.isEmpty)
  }

  @Test func withdrawnAuthorizationStopsMonitoringWithDenied() {
    var rig = PowerRig()
    _ = rig.send(.startSignificantChanges(rig.client), at: 0)
    let withdrawn = rig.send(.authorization(allowed: false), at: 5)
    #expect(withdrawn.errors == [.denied])
    #expect(withdrawn.cancelled(.dutyWake(rig.client)))
    #expect(withdrawn.cancelled(.dutyGiveUp(rig.client)))
    #expect(withdrawn.demand == .some(nil))
    _ = rig.send(.authorization(allowed: true), at: 6)
    #expect(rig.fix(north: 0, at: 7).delivered.isEmpty)
  }

  /// The only sources refused the app (GeoClue's access denied): "updates stop with `denied`, as
  /// when authorization is withdrawn" (`EngineEvent.sourcesDenied`), significant changes too.
  @Test
  func refusedSourcesStopMonitoringWithDenied() {
    var rig = PowerRig()
    _ = rig.send(.startSignificantChanges(rig.client), at: 0)
    let refused = rig.send(.sourcesDenied, at: 5)
    #expect(refused.errors == [.denied])
    #expect(refused.cancelled(.dutyGiveUp(rig.client)))
  }

  /// Every source ended for good (a replay without `loop`): a significant-change client is told,
  /// as a streaming one is, instead of waiting for fixes that cannot come.
  @Test
  func endedSourcesAreReportedToSignificantChangeClients() {
    var rig = PowerRig()
    _ = rig.send(.startSignificantChanges(rig.client), at: 0)
    #expect(rig.send(.sourcesEnded, at: 5).errors == [.sourcesEnded])
  }

  @Test func removingTheClientStopsMonitoring() {
    var rig = PowerRig()
    _ = rig.send(.startSignificantChanges(rig.client), at: 0)
    let removed = rig.send(.removeClient(rig.client), at: 1)
    #expect(removed.cancelled(.dutyGiveUp(rig.client)))
    #expect(removed.demand == .some(nil))
  }
}

// MARK: - Auto-pause

/// `pausesLocationUpdatesAutomatically` in the step function (`AutoPause`, LocationEngine+Power).
@Suite struct PowerWiringAutoPauseTests {
  /// The stationary table by activity (StationaryDetector.swift); nil dwell: never pauses.
  struct Row: Sendable, CustomTestStringConvertible {
    var activity: ActivityType
    var radius: Double
    var dwell: Double?
    var testDescription: String { "\(activity)" }
  }

  static let rows: [Row] = [
    Row(activity: .other, radius: 50, dwell: 300),
    Row(activity: .fitness, radius: 25, dwell: 600),
    Row(activity: .otherNavigation, radius: 50, dwell: 1800),
    Row(activity: .automotiveNavigation, radius: 50, dwell: nil),
    Row(activity: .airborne, radius: 50, dwell: nil),
  ]

  static func request(
    _ activity: ActivityType = .other, pauses: Bool = true,
    accuracy: Double = -1
  ) -> UpdateRequest {
    UpdateRequest(desiredAccuracy: accuracy, pausesAutomatically: pauses, activity: activity)
  }

  /// Starts updates and feeds a still device (fixes every 30 s, wandering within 40 % of the
  /// radius) up to and including `until`; returns the effects of the last fix.
  private static func stayStill(
    _ rig: inout PowerRig, radius: Double, north base: Double = 0, from start: Double = 0,
    until end: Double
  ) -> [EngineEffect] {
    var last: [EngineEffect] = []
    var seconds = start
    var step = 0
    while seconds <= end {
      last = rig.fix(north: base + (step.isMultiple(of: 2) ? 0 : radius * 0.4), at: seconds)
      seconds += 30
      step += 1
    }
    return last
  }

  /// A rig whose client paused (`.other`) at 300 s.
  private static func paused(power: Int = SourceInfo.highPower) -> PowerRig {
    var rig = PowerRig(power: power)
    _ = rig.send(.startUpdates(rig.client, request()), at: 0)
    _ = stayStill(&rig, radius: 50, until: 300)
    #expect(rig.engine.isPaused(rig.client))
    return rig
  }

  @Test(arguments: rows)
  func pausesAtTheDwellTimeWithTheLastFixDelivered(row: Row) {
    var rig = PowerRig()
    _ = rig.send(.startUpdates(rig.client, Self.request(row.activity)), at: 0)
    guard let dwell = row.dwell else {
      // Never: an hour still, every fix delivered.
      var delivered = 0
      for step in 0...120 {
        let effects = rig.fix(north: 0, at: Double(step) * 30)
        #expect(!effects.contains(where: isPause))
        delivered += effects.delivered.count
      }
      #expect(delivered == 121)
      #expect(!rig.engine.isPaused(rig.client))
      return
    }
    let before = Self.stayStill(&rig, radius: row.radius, until: dwell - 30)
    #expect(!before.contains(where: isPause))
    #expect(!rig.engine.isPaused(rig.client))
    let pausing = rig.fix(north: 0, at: dwell)
    #expect(pausing.delivered.count == 1)
    let delivery = pausing.index(of: isDelivery)
    let pause = pausing.index(of: isPause)
    #expect(delivery != nil && pause != nil)
    if let delivery, let pause { #expect(delivery < pause) }
    #expect(pausing.armed(.pauseCheck(rig.client)) == PowerRig.monotonic(dwell + 60))
    #expect(pausing.demand == .some(nil))  // the receiver goes off
    #expect(rig.engine.isPaused(rig.client))
  }

  /// A device that moves beyond the radius restarts the still period.
  @Test func movementRestartsTheStillPeriod() {
    var rig = PowerRig()
    _ = rig.send(.startUpdates(rig.client, Self.request()), at: 0)
    _ = Self.stayStill(&rig, radius: 50, until: 240)
    _ = rig.fix(north: 200, at: 270)
    let notYet = Self.stayStill(&rig, radius: 50, north: 200, from: 300, until: 540)
    #expect(!notYet.contains(where: isPause))
    // 200 m north is the new anchor: 300 s after 270 s.
    #expect(rig.fix(north: 200, at: 570).contains(where: isPause))
  }

  @Test func cheapSourcesKeepRunningWhilePaused() {
    var rig = PowerRig(power: 0)
    _ = rig.send(.startUpdates(rig.client, Self.request()), at: 0)
    let pausing = Self.stayStill(&rig, radius: 50, until: 300)
    #expect(pausing.contains(where: isPause))
    // The file keeps running: demand becomes its own nominal accuracy (5 m).
    #expect(pausing.demand == .some(5))
    // Fixes from the running file count as checks: still, held; moved, resumed.
    let still = rig.fix(north: 10, at: 310)
    #expect(still.delivered.isEmpty)
    #expect(!still.contains(where: isResume))
    let moved = rig.fix(north: 120, at: 320)
    #expect(moved.contains(where: isResume))
    #expect(moved.delivered.count == 1)
    #expect(!rig.engine.isPaused(rig.client))
  }

  @Test func theCheckTimerRunsTheReceiverEveryMinute() {
    var rig = Self.paused()
    let check = rig.send(.timerFired(.pauseCheck(rig.client)), at: 360)
    #expect(check.demand == .some(-1))
    #expect(check.armed(.pauseCheck(rig.client)) == PowerRig.monotonic(420))
    // A check fix within the radius: not delivered, the receiver goes off until the next check.
    let still = rig.fix(north: 20, at: 365)
    #expect(still.delivered.isEmpty)
    #expect(!still.contains(where: isResume))
    #expect(still.demand == .some(nil))
    #expect(still.armed(.pauseCheck(rig.client)) == PowerRig.monotonic(425))
    #expect(rig.engine.isPaused(rig.client))
    // The next check: moved beyond the radius plus the accuracy, so updates resume.
    #expect(rig.send(.timerFired(.pauseCheck(rig.client)), at: 425).demand == .some(-1))
    let moved = rig.fix(north: 100, at: 430)
    let resume = moved.index(of: isResume)
    let delivery = moved.index(of: isDelivery)
    #expect(resume != nil && delivery != nil)
    if let resume, let delivery { #expect(resume < delivery) }
    #expect(moved.delivered.count == 1)
    #expect(moved.cancelled(.pauseCheck(rig.client)))
    #expect(moved.demand == .none)  // the receiver stays on
    #expect(!rig.engine.isPaused(rig.client))
    // Updates flow again.
    #expect(rig.fix(north: 101, at: 431).delivered.count == 1)
  }

  /// The resume threshold is the radius plus the check fix's accuracy.
  @Test(arguments: [
    (north: 50.0, accuracy: 5.0, resumes: false),
    (north: 60.0, accuracy: 5.0, resumes: true),
    (north: 60.0, accuracy: 20.0, resumes: false),
    (north: 80.0, accuracy: 20.0, resumes: true),
  ])
  func checkFixResumesBeyondRadiusPlusAccuracy(north: Double, accuracy: Double, resumes: Bool) {
    var rig = Self.paused()
    _ = rig.send(.timerFired(.pauseCheck(rig.client)), at: 360)
    let check = rig.fix(north: north, at: 365, accuracy: accuracy)
    #expect(check.contains(where: isResume) == resumes)
    #expect(check.delivered.count == (resumes ? 1 : 0))
  }

  @Test func noPauseWhenPausesAutomaticallyIsOff() {
    var rig = PowerRig()
    _ = rig.send(.startUpdates(rig.client, Self.request(pauses: false)), at: 0)
    var delivered = 0
    for step in 0...120 {
      let effects = rig.fix(north: 0, at: Double(step) * 30)
      #expect(!effects.contains(where: isPause))
      delivered += effects.delivered.count
    }
    #expect(delivered == 121)
  }

  /// A new request while paused resumes at once (sources back on), whatever it asks.
  @Test(arguments: [
    UpdateRequest(desiredAccuracy: 10, pausesAutomatically: true, activity: .other),
    UpdateRequest(desiredAccuracy: -1, pausesAutomatically: false, activity: .other),
    UpdateRequest(desiredAccuracy: -1, pausesAutomatically: true, activity: .automotiveNavigation),
    UpdateRequest(desiredAccuracy: -1, pausesAutomatically: true, activity: .fitness),
  ])
  func changingTheRequestWhilePausedResumes(request: UpdateRequest) {
    var rig = Self.paused()
    let changed = rig.send(.changeRequest(rig.client, request), at: 320)
    #expect(changed.contains(where: isResume))
    #expect(changed.cancelled(.pauseCheck(rig.client)))
    #expect(changed.demand == .some(request.desiredAccuracy))
    #expect(!rig.engine.isPaused(rig.client))
    #expect(rig.fix(north: 0, at: 330).delivered.count == 1)
  }

  /// A change while running that keeps the activity does not restart the still period.
  @Test func changingTheAccuracyWhileRunningKeepsTheStillPeriod() {
    var rig = PowerRig()
    _ = rig.send(.startUpdates(rig.client, Self.request()), at: 0)
    _ = Self.stayStill(&rig, radius: 50, until: 240)
    _ = rig.send(.changeRequest(rig.client, Self.request(accuracy: 10)), at: 250)
    #expect(rig.fix(north: 0, at: 300).contains(where: isPause))
  }

  @Test func stopWhilePausedCancelsTheCheck() {
    var rig = Self.paused()
    let stopped = rig.send(.stopUpdates(rig.client), at: 320)
    #expect(stopped.cancelled(.pauseCheck(rig.client)))
    #expect(!stopped.contains(where: isResume))
    #expect(!rig.engine.isPaused(rig.client))
    // A stale check timer brings nothing back.
    #expect(rig.send(.timerFired(.pauseCheck(rig.client)), at: 360).demand == .none)
    #expect(rig.fix(north: 500, at: 365).delivered.isEmpty)
  }

  @Test func startingAgainWhilePausedRestartsFresh() {
    var rig = Self.paused()
    let restarted = rig.send(.startUpdates(rig.client, Self.request()), at: 320)
    #expect(restarted.cancelled(.pauseCheck(rig.client)))
    #expect(!restarted.contains(where: isResume))  // Apple: the app restarted them itself
    #expect(restarted.demand == .some(-1))
    #expect(!rig.engine.isPaused(rig.client))
    // A fresh still period: not paused 300 s after the first still fix, but 300 s after restart.
    let before = Self.stayStill(&rig, radius: 50, from: 330, until: 600)
    #expect(!before.contains(where: isPause))
    #expect(rig.fix(north: 0, at: 630).contains(where: isPause))
  }

  @Test func removingAPausedClientCancelsTheCheck() {
    var rig = Self.paused()
    let removed = rig.send(.removeClient(rig.client), at: 320)
    #expect(removed.cancelled(.pauseCheck(rig.client)))
  }

  @Test func withdrawnAuthorizationWhilePausedCancelsTheCheck() {
    var rig = Self.paused()
    let withdrawn = rig.send(.authorization(allowed: false), at: 320)
    #expect(withdrawn.cancelled(.pauseCheck(rig.client)))
    #expect(withdrawn.errors == [.denied])
    #expect(!rig.engine.isPaused(rig.client))
  }

  /// Another client's updates keep the receiver on; its fixes count as checks for the paused one.
  @Test func anotherClientKeepsTheReceiverOn() {
    var rig = PowerRig()
    let other = ClientID(2)
    _ = rig.send(.addClient(other), at: 0)
    _ = rig.send(.startUpdates(other, Self.request(pauses: false, accuracy: 10)), at: 0)
    _ = rig.send(.startUpdates(rig.client, Self.request()), at: 0)
    let pausing = Self.stayStill(&rig, radius: 50, until: 300)
    #expect(pausing.contains(.pauseUpdates(rig.client)))
    #expect(pausing.demand == .some(10))  // the other client's accuracy
    let still = rig.fix(north: 10, at: 310)
    #expect(still.filter(isDelivery) == [.deliverLocations(other, still.delivered)])
    let moved = rig.fix(north: 150, at: 320)
    #expect(moved.contains(.resumeUpdates(rig.client)))
    #expect(moved.delivered.count == 2)
  }

  // MARK: Deferred updates

  @Test func aPauseFinishesADeferralAfterDeliveringTheBatch() {
    var rig = PowerRig()
    _ = rig.send(.startUpdates(rig.client, Self.request()), at: 0)
    let allowed = rig.send(.allowDeferred(rig.client, distance: 1000, timeout: 10_000), at: 0)
    #expect(allowed.armed(.deferralDeadline(rig.client)) == PowerRig.monotonic(10_000))
    let held = Self.stayStill(&rig, radius: 50, until: 270)
    #expect(held.delivered.isEmpty)
    let pausing = rig.fix(north: 0, at: 300)
    #expect(pausing.delivered.count == 11)  // 0, 30, ..., 300 s in one batch
    #expect(pausing.contains(.deferredFinished(rig.client, .deferredCanceled)))
    #expect(pausing.cancelled(.deferralDeadline(rig.client)))
    let delivery = pausing.index(of: isDelivery)
    let finish = pausing.index(of: isDeferredFinish)
    let pause = pausing.index(of: isPause)
    #expect(delivery != nil && finish != nil && pause != nil)
    if let delivery, let finish, let pause {
      #expect(delivery < finish)
      #expect(finish < pause)
    }
  }

  @Test func allowDeferredWhilePausedIsRefused() {
    var rig = Self.paused()
    let refused = rig.send(.allowDeferred(rig.client, distance: 1000, timeout: 60), at: 320)
    #expect(refused == [.deferredFinished(rig.client, .deferredNotUpdatingLocation)])
  }

  // MARK: Paused clients and other clients' demand

  /// A paused client on a receiver, and another client whose demand a cheap source meets (as the
  /// hub runs it): the paused client must not bring the receiver back, or the arbiter swaps the
  /// two sources for ever (each `sourcesChanged` flips the demand).
  @Test
  func pausedClientDoesNotRecallTheReceiverWhenACheapSourceRunsForAnother() {
    var rig = PowerRig()
    let coarse = ClientID(2)
    _ = rig.send(.addClient(coarse), at: 0)
    _ = rig.send(.startUpdates(coarse, Self.request(pauses: false, accuracy: 3000)), at: 0)
    _ = rig.send(.startUpdates(rig.client, Self.request()), at: 0)
    let pausing = Self.stayStill(&rig, radius: 50, until: 300)
    #expect(pausing.demand == .some(3000))
    // The hub runs the file for 3 km and stops the receiver.
    let cheap = rig.send(
      .sourcesChanged([SourceInfo(name: "static:///file", nominalAccuracy: 1000, power: 0)]),
      at: 300)
    // The paused client asks only for what the file gives (1 km), which the file meets: the
    // arbiter keeps the file, and the next report changes nothing (no swap).
    #expect(cheap.demand == .some(1000))
    let again = rig.send(
      .sourcesChanged([SourceInfo(name: "static:///file", nominalAccuracy: 1000, power: 0)]),
      at: 301)
    #expect(again.demand == .none)
  }
}
