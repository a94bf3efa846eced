import Foundation
import Geodesy
import LocationModel
import TestSupport
import Testing

@testable import LocationEngine

/// A seeded synthetic walk or drive on the tangent plane at 52° N 5° E: fixes at a fixed interval
/// with Gaussian noise, built leg by leg, with the true times of arrivals and departures.
struct VisitTrace {
  static let origin = LocalTangentPlane(latitude: 52, longitude: 5)
  /// 2026-01-01T00:00:00Z.
  static let start = 1_767_225_600.0

  var random: SplitMix64
  /// Seconds between fixes.
  var interval: Double
  /// The noise of each fix (one standard deviation per axis), metres.
  var noise: Double
  var accuracy: Double
  var time = VisitTrace.start
  var east = 0.0
  var north = 0.0
  private(set) var fixes: [Fix] = []

  init(seed: UInt64, interval: Double = 10, noise: Double = 8, accuracy: Double = 10) {
    random = SplitMix64(seed: seed)
    self.interval = interval
    self.noise = noise
    self.accuracy = accuracy
  }

  /// A standard normal deviate (Box–Muller).
  mutating func gaussian() -> Double {
    let u = max(random.uniform(0...1), 1e-12)
    let v = random.uniform(0...1)
    return (-2 * Foundation.log(u)).squareRoot() * Foundation.cos(2 * Double.pi * v)
  }

  mutating func emit(bias: (Double, Double) = (0, 0), accuracy: Double? = nil) {
    let point = Self.origin.unproject(
      east: east + bias.0 + noise * gaussian(), north: north + bias.1 + noise * gaussian())
    fixes.append(
      Fix(
        latitude: point.latitude, longitude: point.longitude,
        horizontalAccuracy: accuracy ?? self.accuracy, time: time))
  }

  /// Stays for `seconds`, a fix every interval (none when `gap`).
  mutating func stay(_ seconds: Double, gap: Bool = false) {
    let end = time + seconds
    while time + interval <= end {
      time += interval
      if !gap { emit() }
    }
    time = end
  }

  /// Travels `metres` east (negative: west) at `speed`.
  mutating func travel(east metres: Double, speed: Double, gap: Bool = false) {
    let seconds = abs(metres) / speed
    let end = time + seconds
    let target = east + metres
    let step = speed * interval * (metres < 0 ? -1 : 1)
    while time + interval <= end {
      time += interval
      east += step
      if !gap { emit() }
    }
    east = target
    time = end
  }

  /// Feeds every fix to a detector and returns the events with the time of the fix that made each.
  func run(_ detector: inout VisitDetector) -> [(at: Double, visit: Visit)] {
    var events: [(Double, Visit)] = []
    for fix in fixes {
      for visit in detector.receive(fix) { events.append((fix.time, visit)) }
    }
    return events
  }

  /// Metres between a visit's coordinate and a point of the plane.
  static func distance(_ visit: Visit, east: Double, north: Double) -> Double {
    let point = origin.project(latitude: visit.latitude, longitude: visit.longitude)
    return
      ((point.east - east) * (point.east - east) + (point.north - north) * (point.north - north))
      .squareRoot()
  }
}

@Suite struct VisitDetectorTests {
  /// Drive 2 km, stay 30 minutes, drive on: one arrival (no departure date) once the stay is 10
  /// minutes old, carrying the arrival time; one departure with both dates; both near the truth.
  @Test(arguments: [1, 2, 3, 4, 5] as [UInt64])
  func aStayGivesOneArrivalAndOneDeparture(seed: UInt64) throws {
    var trace = VisitTrace(seed: seed)
    trace.travel(east: 2000, speed: 14)
    let arrived = trace.time
    trace.stay(1800)
    let departed = trace.time
    trace.travel(east: 3000, speed: 14)
    var detector = VisitDetector()
    let events = trace.run(&detector)
    #expect(events.count == 2)
    let arrival = try #require(events.first)
    #expect(arrival.visit.departure == nil)
    let arrivalTime = try #require(arrival.visit.arrival)
    #expect(abs(arrivalTime - arrived) <= 30)
    #expect(arrival.at >= arrivalTime + VisitDetector.minimumStay)
    #expect(arrival.at <= arrived + VisitDetector.minimumStay + 30)
    #expect(VisitTrace.distance(arrival.visit, east: 2000, north: 0) < 15)
    let departure = try #require(events.last)
    #expect(departure.visit.arrival == arrivalTime)
    let departureTime = try #require(departure.visit.departure)
    #expect(abs(departureTime - departed) <= 30)
    #expect(departure.at <= departed + 120)
    #expect(departure.visit.horizontalAccuracy > 5 && departure.visit.horizontalAccuracy < 30)
  }

  /// A stop at a traffic light (1 or 2 minutes), a drop-off (4 minutes) or a queue (8 minutes)
  /// is no visit.
  @Test(arguments: [60.0, 120.0, 240.0, 480.0])
  func aShortStopIsNoVisit(seconds: Double) {
    var trace = VisitTrace(seed: 7, interval: 1)
    trace.travel(east: 1000, speed: 14)
    trace.stay(seconds)
    trace.travel(east: 1000, speed: 14)
    var detector = VisitDetector()
    #expect(trace.run(&detector).isEmpty)
  }

  /// Monitoring that starts during a stay did not see the arrival: nothing at first, and one
  /// departure without an arrival date.
  @Test func aStayUnderWayAtTheStartHasNoArrival() throws {
    var trace = VisitTrace(seed: 11)
    trace.stay(3600)
    let departed = trace.time
    trace.travel(east: 2000, speed: 1.4)
    var detector = VisitDetector()
    let events = trace.run(&detector)
    let departure = try #require(events.first)
    #expect(events.count == 1)
    #expect(departure.visit.arrival == nil)
    // Walking, the last fix inside the radius comes up to 150 m / 1.4 m/s after leaving.
    let departureTime = try #require(departure.visit.departure)
    #expect(departureTime >= departed && departureTime <= departed + 110)
  }

  /// A GPS jump of one fix (or a few seconds) far away does not end the stay.
  @Test func anOutlierDoesNotEndAStay() {
    var trace = VisitTrace(seed: 13, interval: 5)
    trace.travel(east: 1000, speed: 10)
    trace.stay(900)
    trace.emit(bias: (400, 300))
    trace.time += 5
    trace.emit(bias: (-300, 0))
    trace.stay(900)
    trace.travel(east: 2000, speed: 10)
    var detector = VisitDetector()
    let events = trace.run(&detector)
    #expect(events.map(\.visit.isDeparture) == [false, true])
  }

  /// Two reflections in a row, 60 s apart, 175 m out and claiming 30 m: no evidence of leaving
  /// (outside only beyond 150 m plus the fix's accuracy), so the stay goes on.
  @Test func fixesWhoseErrorReachesInsideAreNoDeparture() {
    var trace = VisitTrace(seed: 31, interval: 60)
    trace.travel(east: 2000, speed: 12)
    trace.stay(1200)
    trace.time += 30
    trace.emit(bias: (175, 0), accuracy: 30)
    trace.time += 60
    trace.emit(bias: (0, -175), accuracy: 30)
    trace.stay(1200)
    trace.travel(east: 2000, speed: 12)
    var detector = VisitDetector()
    #expect(trace.run(&detector).map(\.visit.isDeparture) == [false, true])
  }

  /// A slow walk (1.1 m/s) with a wait of 90 s at a crossing: the centre follows the fixes over
  /// about 300 m of path, which takes more than 5 minutes with the wait but less than 10.
  @Test(arguments: [41, 42, 43] as [UInt64])
  func aSlowWalkWithAWaitIsNoVisit(seed: UInt64) {
    var trace = VisitTrace(seed: seed, interval: 1, noise: 5, accuracy: 8)
    trace.travel(east: 400, speed: 1.1)
    trace.stay(90)
    trace.travel(east: 400, speed: 1.1)
    var detector = VisitDetector()
    #expect(trace.run(&detector).isEmpty)
  }

  /// A slow drift of the receiver's error (tens of metres, as multipath gives) is no departure.
  @Test func driftWithinTheRadiusIsNoDeparture() {
    var trace = VisitTrace(seed: 17, interval: 10)
    trace.travel(east: 1000, speed: 10)
    var bias = (0.0, 0.0)
    for _ in 0..<360 {
      trace.time += 10
      bias.0 = max(-80, min(80, bias.0 + 3 * trace.gaussian()))
      bias.1 = max(-80, min(80, bias.1 + 3 * trace.gaussian()))
      trace.emit(bias: bias)
    }
    trace.travel(east: 2000, speed: 10)
    var detector = VisitDetector()
    #expect(trace.run(&detector).map(\.visit.isDeparture) == [false, true])
  }

  /// Indoors without fixes: the arrival is seen, then nothing for an hour, then fixes inside again
  /// as the device leaves. The stay is recognised then, dated from its first fix.
  @Test func aGapInsideAStayKeepsIt() throws {
    var trace = VisitTrace(seed: 19)
    trace.travel(east: 1500, speed: 12)
    let arrived = trace.time
    trace.stay(60)
    trace.stay(3600, gap: true)
    trace.stay(60)
    trace.travel(east: 2000, speed: 12)
    var detector = VisitDetector()
    let events = trace.run(&detector)
    #expect(events.count == 2)
    let arrival = try #require(events.first?.visit.arrival)
    #expect(abs(arrival - arrived) <= 30)
    #expect(events.first?.visit.departure == nil)
    #expect(events.last?.visit.isDeparture == true)
  }

  /// A gap between two places: the first's departure and the second's arrival at once, when the
  /// fixes at the second place already span the minimum stay.
  @Test func aGapBetweenPlacesGivesDepartureThenArrival() throws {
    var trace = VisitTrace(seed: 23)
    trace.travel(east: 500, speed: 10)
    trace.stay(1200)
    trace.travel(east: 5000, speed: 10, gap: true)
    trace.stay(900)
    var detector = VisitDetector()
    let events = trace.run(&detector)
    #expect(events.map(\.visit.isDeparture) == [false, true, false])
    let second = try #require(events.last?.visit)
    #expect(VisitTrace.distance(second, east: 5500, north: 0) < 15)
  }

  /// Fixes worse than 100 m neither make nor break a stay; invalid and out-of-order fixes are
  /// ignored.
  @Test func inaccurateInvalidAndOldFixesAreIgnored() {
    var detector = VisitDetector()
    let place = VisitTrace.origin.unproject(east: 0, north: 0)
    let far = VisitTrace.origin.unproject(east: 3000, north: 0)
    let t = VisitTrace.start
    func fix(_ point: (latitude: Double, longitude: Double), _ time: Double, _ accuracy: Double)
      -> Fix
    {
      Fix(
        latitude: point.latitude, longitude: point.longitude, horizontalAccuracy: accuracy,
        time: time)
    }
    _ = detector.receive(fix(far, t, 10))
    _ = detector.receive(fix(place, t + 100, 10))
    _ = detector.receive(fix(place, t + 200, 10))
    #expect(detector.phase == .gathering)
    // A coarse fix (a cell tower) far away, and one at the place an hour later: not used.
    #expect(detector.receive(fix(far, t + 300, 1500)).isEmpty)
    #expect(detector.receive(fix(place, t + 3600, 500)).isEmpty)
    #expect(!detector.departurePending)
    #expect(detector.receive(fix((.nan, 0), t + 3700, 10)).isEmpty)
    #expect(detector.receive(fix(place, t + 150, 10)).isEmpty)
    #expect(detector.receive(fix(place, t + 500, 10)).isEmpty)
    let arrival = detector.receive(fix(place, t + 700, 10))
    #expect(arrival.count == 1)
    #expect(arrival.first?.arrival == t + 100)
    #expect(detector.phase == .staying)
  }

  /// Every seed of a day with noise: the events alternate arrival, departure, and each departure
  /// repeats its arrival's date.
  @Test(arguments: 0..<20 as Range<UInt64>)
  func eventsAlternate(seed: UInt64) {
    var trace = VisitTrace(seed: 100 + seed, interval: 15, noise: 12, accuracy: 15)
    trace.travel(east: 800, speed: 1.4)
    for leg in 0..<6 {
      trace.stay(trace.random.uniform(900...3600))
      trace.travel(east: leg % 2 == 0 ? 2500 : -1200, speed: trace.random.uniform(1.4...15))
      trace.stay(trace.random.uniform(20...150))
      trace.travel(east: 800, speed: 10)
    }
    var detector = VisitDetector()
    let events = trace.run(&detector)
    #expect(events.count == 12)
    for (index, event) in events.enumerated() {
      #expect(event.visit.isDeparture == (index % 2 == 1))
      if index % 2 == 1 { #expect(event.visit.arrival == events[index - 1].visit.arrival) }
    }
  }

  /// After a reset the next place's arrival is unknown again.
  @Test func resetForgets() {
    var trace = VisitTrace(seed: 29)
    trace.travel(east: 800, speed: 10)
    trace.stay(900)
    var detector = VisitDetector()
    #expect(trace.run(&detector).count == 1)
    detector.reset()
    #expect(detector.phase == .searching)
    #expect(detector == VisitDetector())
  }
}
