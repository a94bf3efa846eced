import Foundation
import Geodesy
import LocationModel
import Testing

@testable import LocationEngine

/// What authorization does to what the engine derives (issue 14): an app with reduced accuracy
/// gets no region evaluated, no region state and a true heading from its reduced location only
/// (F3); a denied app, or any with services off, gets no heading and runs no compass (F9).
@Suite struct AuthorizationEffectsTests {
  static let origin = EngineInstant(monotonic: 100, wall: 1_767_225_600)
  static let client = ClientID(1)
  static let reducer = ReducedAccuracy(secret: 42)

  static func fix(_ latitude: Double, _ longitude: Double, time: Double = 1_767_225_600) -> Fix {
    Fix(latitude: latitude, longitude: longitude, horizontalAccuracy: 5, time: time)
  }

  static func regionEvents(_ effects: [EngineEffect]) -> [RegionEvent] {
    effects.flatMap { effect -> [RegionEvent] in
      if case .regionEvents(_, let events) = effect { return events }
      return []
    }
  }

  static func headings(_ effects: [EngineEffect]) -> [DeliveredHeading] {
    effects.compactMap { effect in
      if case .deliverHeading(_, let heading) = effect { return heading }
      return nil
    }
  }

  @Test func aReducedAppsRegionsAreNotEvaluatedNorTold() {
    var engine = LocationEngine(allowed: true)
    _ = engine.handle(.addClient(Self.client), at: Self.origin)
    _ = engine.handle(
      .addRegion(
        group: "manager",
        RegionSpec(identifier: "home", latitude: 52, longitude: 5, radius: 200),
        initialState: .unknown, requester: Self.client), at: Self.origin)
    _ = engine.handle(
      .authorization(allowed: true, reduction: Self.reducer), at: Self.origin)
    // Inside, then far outside: nothing is evaluated.
    #expect(Self.regionEvents(engine.handle(.fix(Self.fix(52, 5)), at: Self.origin)).isEmpty)
    #expect(
      Self.regionEvents(engine.handle(.fix(Self.fix(52.5, 5.5)), at: Self.origin)).isEmpty)
    let state = engine.handle(
      .requestRegionState(Self.client, group: "manager", identifier: "home"), at: Self.origin)
    #expect(!state.contains { if case .regionStateReply = $0 { true } else { false } })
    let added = engine.handle(
      .addRegion(
        group: "manager", RegionSpec(identifier: "work", latitude: 52, longitude: 5, radius: 200),
        initialState: .unknown, requester: Self.client), at: Self.origin)
    #expect(
      added.contains { if case .regionRejected(_, _, .denied, _) = $0 { true } else { false } })
    // Full accuracy again: the regions are evaluated from the next fix.
    _ = engine.handle(.authorization(allowed: true), at: Self.origin)
    #expect(!Self.regionEvents(engine.handle(.fix(Self.fix(52, 5)), at: Self.origin)).isEmpty)
  }

  /// The declination (true minus magnetic heading) is the model's at the reduced location: one
  /// value while the app's locations stay in one cell, however the precise location moves (the
  /// precise declination, 147 values here before, located the device to about 4 m along an axis).
  @Test func aReducedAppsTrueHeadingComesFromItsReducedLocation() throws {
    var engine = LocationEngine(allowed: true)
    _ = engine.handle(.addClient(Self.client), at: Self.origin)
    _ = engine.handle(.authorization(allowed: true, reduction: Self.reducer), at: Self.origin)
    _ = engine.handle(.startUpdates(Self.client, UpdateRequest()), at: Self.origin)
    _ = engine.handle(
      .startHeading(Self.client, filter: -1, orientation: .portrait), at: Self.origin)
    let cell = Self.reducer.apply(Self.fix(78.2, 15.6))
    var declinations = Set<Double>()
    var step = 0
    // Positions around Svalbard (a steep declination gradient), all in the first fix's cell.
    for north in stride(from: -0.004, through: 0.004, by: 0.0005) {
      for east in stride(from: -0.02, through: 0.02, by: 0.002) {
        let fix = Self.fix(78.2 + north, 15.6 + east, time: 1_767_225_600 + Double(step))
        guard Self.reducer.apply(fix).latitude == cell.latitude,
          Self.reducer.apply(fix).longitude == cell.longitude
        else { continue }
        step += 1
        _ = engine.handle(.fix(fix), at: Self.origin)
        let sample = HeadingSample(
          time: 1_767_225_600, magneticHeading: 100, accuracy: 2, source: "compass")
        for heading in Self.headings(engine.handle(.heading(sample), at: Self.origin))
        where heading.trueHeading >= 0 {
          declinations.insert((heading.trueHeading - heading.magneticHeading).rounded(toPlaces: 9))
        }
      }
    }
    #expect(step > 20, "positions in one cell")
    #expect(declinations.count == 1, "\(declinations.count) distinct declinations")
  }

  @Test(arguments: [
    AuthorizationSnapshot(status: .denied), AuthorizationSnapshot(status: .restricted),
    AuthorizationSnapshot(status: .authorizedAlways, servicesEnabled: false),
  ])
  func aDeniedAppGetsNoHeadingAndRunsNoCompass(authorization: AuthorizationSnapshot) {
    var engine = LocationEngine(allowed: authorization.allowsLocation)
    _ = engine.handle(
      .authorization(
        allowed: authorization.allowsLocation, headings: authorization.allowsHeadings),
      at: Self.origin)
    _ = engine.handle(.addClient(Self.client), at: Self.origin)
    let started = engine.handle(
      .startHeading(Self.client, filter: -1, orientation: .portrait), at: Self.origin)
    #expect(!started.contains { if case .demandHeading(true) = $0 { true } else { false } })
    let sample = HeadingSample(time: 1_767_225_600, magneticHeading: 100, accuracy: 2)
    #expect(Self.headings(engine.handle(.heading(sample), at: Self.origin)).isEmpty)
  }

  @Test func anAppThatHasNotAskedMayHaveHeadings() {
    let authorization = AuthorizationSnapshot(status: .notDetermined)
    #expect(authorization.allowsHeadings)
    var engine = LocationEngine(allowed: false)
    _ = engine.handle(.authorization(allowed: false, headings: true), at: Self.origin)
    _ = engine.handle(.addClient(Self.client), at: Self.origin)
    let started = engine.handle(
      .startHeading(Self.client, filter: -1, orientation: .portrait), at: Self.origin)
    #expect(started.contains { if case .demandHeading(true) = $0 { true } else { false } })
  }
}

extension Double {
  fileprivate func rounded(toPlaces places: Int) -> Double {
    let scale = pow(10, Double(places))
    return (self * scale).rounded() / scale
  }
}
