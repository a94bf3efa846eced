import Geodesy
import LocationModel
import TestSupport
import Testing

@testable import LocationEngine

/// One engine driven by hand on a manual clock (seconds from an origin on both clocks), one source,
/// two clients, fixes placed on the tangent plane of `VisitTrace`.
private struct VisitRig {
  static let origin = EngineInstant(monotonic: 1000, wall: VisitTrace.start)

  var engine: LocationEngine
  var time = 0.0
  let client = ClientID(1)
  let other = ClientID(2)

  init(allowed: Bool = true, power: Int = SourceInfo.highPower, nominalAccuracy: Double = 5) {
    engine = LocationEngine(allowed: allowed)
    let name = power >= SourceInfo.highPower ? "gpsd://receiver" : "geoclue"
    _ = engine.handle(
      .sourcesChanged([SourceInfo(name: name, nominalAccuracy: nominalAccuracy, power: power)]),
      at: Self.origin)
    _ = engine.handle(.addClient(client), at: Self.origin)
    _ = engine.handle(.addClient(other), at: Self.origin)
  }

  var now: EngineInstant { Self.origin.advanced(by: time) }

  static func monotonic(_ seconds: Double) -> Double { origin.monotonic + seconds }

  mutating func send(_ event: EngineEvent, at seconds: Double? = nil) -> [EngineEffect] {
    if let seconds { time = seconds }
    return engine.handle(event, at: now)
  }

  /// A fix `east` metres east of the plane's origin at `seconds`, stamped then.
  mutating func fix(east: Double, at seconds: Double, accuracy: Double = 10) -> [EngineEffect] {
    time = seconds
    let point = VisitTrace.origin.unproject(east: east, north: 0)
    return engine.handle(
      .fix(
        Fix(
          latitude: point.latitude, longitude: point.longitude, horizontalAccuracy: accuracy,
          time: now.wall)), at: now)
  }
}

extension Array where Element == EngineEffect {
  fileprivate var visits: [Visit] {
    compactMap { effect in
      if case .visit(let visit) = effect { return visit }
      return nil
    }
  }

  fileprivate var demand: Double?? {
    for effect in reversed() {
      if case .demandSources(let accuracy) = effect { return .some(accuracy) }
    }
    return .none
  }

  fileprivate func armed(_ timer: EngineTimer) -> Double? {
    for effect in reversed() {
      if case .armTimer(timer, let deadline) = effect { return deadline }
    }
    return nil
  }
}

@Suite struct VisitWiringTests {
  /// With a receiver: on for a burst at 100 m, off after the first usable fix until the next wake
  /// (60 s while gathering, 180 s once a visit is under way); a coarse fix does not end a burst.
  @Test func theReceiverIsDutyCycled() {
    var rig = VisitRig()
    let started = rig.send(.startVisits(requester: rig.client), at: 0)
    #expect(started.demand == .some(LocationEngine.visitAccuracy))
    #expect(started.armed(.visitGiveUp) == VisitRig.monotonic(120))
    #expect(rig.fix(east: 0, at: 3, accuracy: 800).demand == .none)
    let first = rig.fix(east: 0, at: 5)
    #expect(first.demand == .some(nil))
    #expect(first.contains(.cancelTimer(.visitGiveUp)))
    #expect(first.armed(.visitWake) == VisitRig.monotonic(65))
    var at = 5.0
    var effects: [EngineEffect] = []
    // Fixes at 5, 70, 135, ... 655 s: the last makes the cluster 10 minutes long.
    for _ in 0..<10 {
      at += 60
      #expect(
        rig.send(.timerFired(.visitWake), at: at).demand == .some(LocationEngine.visitAccuracy))
      at += 5
      effects = rig.fix(east: 10, at: at)
      // The first place began with monitoring: its arrival is unknown, so it is not reported.
      #expect(effects.visits.isEmpty)
    }
    #expect(rig.engine.visitMonitoring?.detector.phase == .staying)
    #expect(effects.armed(.visitWake) == VisitRig.monotonic(at + VisitDutyCycle.stayingInterval))
  }

  /// A visit goes to the engine's `visit` effect (for every client), with the arrival date of its
  /// first fix; the schedule slows to 180 s once it is under way.
  @Test func arrivalAndDepartureAreEffects() throws {
    var rig = VisitRig(power: 0, nominalAccuracy: 10)
    _ = rig.send(.startVisits(requester: nil), at: 0)
    // Moving, then a stay at 2 km from 200 s on.
    for step in 0..<20 { _ = rig.fix(east: Double(step) * 100, at: Double(step) * 10) }
    var events: [Visit] = []
    var lastEffects: [EngineEffect] = []
    for step in 20..<80 {
      lastEffects = rig.fix(east: 2000, at: Double(step) * 10)
      events += lastEffects.visits
      if !events.isEmpty { break }
    }
    let arrival = try #require(events.first)
    // The first fix within 150 m of the place: 100 m before it, at 190 s.
    #expect(arrival.arrival == VisitTrace.start + 190)
    #expect(arrival.departure == nil)
    // A cheap source keeps running between bursts (its own nominal accuracy).
    #expect(rig.engine.visitMonitoring?.interval == VisitDutyCycle.stayingInterval)
    for step in 80..<200 { events += rig.fix(east: 2000, at: Double(step) * 10).visits }
    for step in 0..<20 {
      events += rig.fix(east: 2000 + Double(step) * 100, at: 2000 + Double(step) * 10).visits
    }
    #expect(events.count == 2)
    let departure = try #require(events.last)
    #expect(departure.arrival == VisitTrace.start + 190)
    // The last fix within 150 m: 100 m on, at 2010 s.
    #expect(departure.departure == VisitTrace.start + 2010)
  }

  /// Cheap sources: asked for 100 m during a burst, their own figure between bursts.
  @Test func cheapSourcesKeepRunning() {
    var rig = VisitRig(power: 1, nominalAccuracy: 10)
    #expect(
      rig.send(.startVisits(requester: nil), at: 0).demand == .some(LocationEngine.visitAccuracy))
    #expect(rig.fix(east: 0, at: 2).demand == .some(10))
  }

  /// Visit monitoring is the app's: a client going away does not stop it; `stopVisits` does.
  @Test func monitoringOutlivesClientsUntilStopped() {
    var rig = VisitRig()
    _ = rig.send(.startVisits(requester: rig.client), at: 0)
    _ = rig.send(.removeClient(rig.client), at: 1)
    _ = rig.send(.removeClient(rig.other), at: 1)
    #expect(rig.engine.monitorsVisits)
    let stopped = rig.send(.stopVisits, at: 2)
    #expect(!rig.engine.monitorsVisits)
    #expect(stopped.contains(.cancelTimer(.visitGiveUp)))
    #expect(stopped.contains(.cancelTimer(.visitWake)))
    #expect(stopped.demand == .some(nil))
    #expect(rig.fix(east: 0, at: 3).visits.isEmpty)
  }

  /// Not allowed: the requester hears `denied`, nothing runs; once allowed, detection starts.
  /// Withdrawn: the source stops and the stay under way is forgotten.
  @Test func authorizationGatesDetection() {
    var rig = VisitRig(allowed: false)
    let refused = rig.send(.startVisits(requester: rig.client), at: 0)
    #expect(refused.contains(.deliverError(rig.client, .denied)))
    #expect(refused.demand == .none)
    let allowed = rig.send(.authorization(allowed: true), at: 10)
    #expect(allowed.demand == .some(LocationEngine.visitAccuracy))
    #expect(allowed.armed(.visitGiveUp) == VisitRig.monotonic(130))
    _ = rig.fix(east: 0, at: 12)
    let withdrawn = rig.send(.authorization(allowed: false), at: 20)
    #expect(withdrawn.contains(.cancelTimer(.visitWake)))
    // The burst had ended with the fix at 12 s: nothing runs already.
    #expect(withdrawn.demand == .none)
    #expect(rig.engine.visitMonitoring?.state == .stopped)
    #expect(rig.engine.monitorsVisits)
  }

  /// Reduced accuracy: the visit comes at the reduced position with at least the cell's accuracy.
  @Test func reducedAccuracyReducesTheVisit() throws {
    var rig = VisitRig(power: 0, nominalAccuracy: 10)
    let reduction = ReducedAccuracy(secret: 42)
    _ = rig.send(.authorization(allowed: true, reduction: reduction), at: 0)
    _ = rig.send(.startVisits(requester: nil), at: 0)
    _ = rig.fix(east: -3000, at: 0)
    var visits: [Visit] = []
    for step in 1..<80 { visits += rig.fix(east: 0, at: 60 + Double(step) * 10).visits }
    let visit = try #require(visits.first)
    let point = VisitTrace.origin.unproject(east: 0, north: 0)
    let expected = reduction.apply(
      Fix(latitude: point.latitude, longitude: point.longitude, horizontalAccuracy: 10, time: 0))
    #expect(abs(visit.latitude - expected.latitude) < 1e-9)
    #expect(abs(visit.longitude - expected.longitude) < 1e-9)
    #expect(visit.horizontalAccuracy >= ReducedAccuracy.cellSize)
  }

  /// A burst with no usable fix gives up after two minutes and wakes one interval later.
  @Test func aBurstWithoutAFixGivesUp() {
    var rig = VisitRig()
    _ = rig.send(.startVisits(requester: nil), at: 0)
    let gaveUp = rig.send(.timerFired(.visitGiveUp), at: 120)
    #expect(gaveUp.demand == .some(nil))
    #expect(gaveUp.armed(.visitWake) == VisitRig.monotonic(180))
    let woken = rig.send(.timerFired(.visitWake), at: 180)
    #expect(woken.demand == .some(LocationEngine.visitAccuracy))
  }
}
