// The engine half of `locbench replay`: the distance filter and delivery on a 1,000,000-fix track.
//
// Three measurements on the same generated fixes (a vehicle at 10-30 m/s, 1 Hz, seeded):
// - baseline: a bare loop doing only the distance filter's arithmetic (one geodesic distance and a
//   comparison per fix), the floor for any implementation of the rule;
// - the engine's step function (`LocationEngine.handle(.fix)`) with one streaming client;
// - the whole in-process pipeline: a replay source on the manual clock, the hub, the engine and a
//   client that counts deliveries (what `CLLocationManager` receives, before the run-loop hop).
import Foundation
import Geodesy
import LocationEngine
import LocationModel
import LocationServices
import LocationSources
import Synchronization

enum EnginePipelineBench {
  static let fixCount = 1_000_000
  static let distanceFilter = 10.0

  static func run() {
    let fixes = makeTrack(count: fixCount)
    print("engine pipeline: \(fixCount) fixes, distance filter \(Int(distanceFilter)) m")

    let bare = measure { () -> Int in
      var last = fixes[0]
      var delivered = 1
      for fix in fixes.dropFirst() {
        let moved = Geodesic.wgs84.distance(
          latitude1: last.latitude, longitude1: last.longitude, latitude2: fix.latitude,
          longitude2: fix.longitude)
        if moved >= distanceFilter {
          last = fix
          delivered += 1
        }
      }
      return delivered
    }
    let engine = measure { () -> Int in
      var engine = LocationEngine(allowed: true)
      let client = ClientID(1)
      let now = EngineInstant(monotonic: 0, wall: fixes[0].time)
      _ = engine.handle(
        .startUpdates(client, UpdateRequest(distanceFilter: distanceFilter)), at: now)
      var delivered = 0
      var effects: [EngineEffect] = []
      effects.reserveCapacity(8)
      for fix in fixes {
        effects.removeAll(keepingCapacity: true)
        engine.handle(.fix(fix), at: now, into: &effects)
        for effect in effects {
          if case .deliverLocations = effect { delivered += 1 }
        }
      }
      return delivered
    }
    let hub = measure { () -> Int in
      let clock = ManualClock(wall: fixes[0].time)
      let source = ReplaySource(
        track: ReplayTrack(fixes: fixes), name: "replay://bench",
        options: SourceURL.ReplayOptions(instant: true))
      let hub = LocationHub(
        app: "bench", sources: .objects({ [source] }), persistence: MemoryPersistence(),
        clock: clock)
      let counter = CountingClient()
      let id = hub.register(counter)
      hub.setAuthorization(AuthorizationSnapshot(status: AuthorizationStatus.authorizedAlways))
      hub.startUpdates(id, UpdateRequest(distanceFilter: distanceFilter))
      while counter.ended.withLock({ !$0 }) { clock.advance(by: 1) }
      return counter.delivered.withLock { $0 }
    }

    func line(_ name: String, _ result: (seconds: Double, delivered: Int)) {
      let rate = Double(fixCount) / result.seconds
      print(
        "  \(name.padding(toLength: 46, withPad: " ", startingAt: 0))"
          + "\(String(format: "%12.0f", rate)) fixes/s  (\(result.delivered) delivered)")
    }
    line("baseline: bare distance filter loop", bare)
    line("LocationEngine.handle(.fix), one client", engine)
    line("replay source + hub + engine + client", hub)
    print(
      "  ratio engine / bare loop: \(String(format: "%.2f", bare.seconds / engine.seconds))"
        + "  hub pipeline / bare loop: \(String(format: "%.2f", bare.seconds / hub.seconds))"
        + "  target: engine >= 1,000,000 fixes/s: "
        + (Double(fixCount) / engine.seconds >= 1_000_000 ? "met" : "NOT met"))
    EngineFanOutBench.run()
  }

  /// The best of three runs.
  static func measure(_ body: () -> Int) -> (seconds: Double, delivered: Int) {
    var best = Double.infinity
    var delivered = 0
    for _ in 0..<3 {
      let start = ContinuousClock.now
      delivered = body()
      let elapsed = ContinuousClock.now - start
      best = min(
        best, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18)
    }
    return (best, delivered)
  }

  /// A seeded vehicle track: 1 Hz, 10-30 m/s, gentle turns, starting in the Netherlands.
  static func makeTrack(count: Int) -> [Fix] {
    var random = SplitMix64(seed: 42)
    var latitude = 52.37
    var longitude = 4.90
    var heading = 45.0
    var speed = 20.0
    var fixes: [Fix] = []
    fixes.reserveCapacity(count)
    for index in 0..<count {
      heading += (random.unit() - 0.5) * 10
      speed = min(30, max(10, speed + (random.unit() - 0.5) * 2))
      let radians = heading * .pi / 180
      latitude += speed * cos(radians) / 111_132
      longitude += speed * sin(radians) / (111_320 * cos(latitude * .pi / 180))
      if latitude > 60 || latitude < 40 { heading += 180 }
      if longitude > 20 { longitude -= 20 }
      fixes.append(
        Fix(
          latitude: latitude, longitude: longitude, horizontalAccuracy: 5 + random.unit() * 15,
          speed: speed,
          course: (heading.truncatingRemainder(dividingBy: 360) + 360)
            .truncatingRemainder(dividingBy: 360),
          time: 1_700_000_000 + Double(index)))
    }
    return fixes
  }
}

/// Counts deliveries (and notices the end of the replay).
private final class CountingClient: HubClient {
  let delivered = Mutex(0)
  let ended = Mutex(false)

  func hub(_ hub: LocationHub, deliver delivery: HubDelivery) {
    switch delivery {
    case .locations(let fixes): delivered.withLock { $0 += fixes.count }
    case .error(.sourcesEnded, _): ended.withLock { $0 = true }
    case .error, .authorization, .regionEvents, .regionStarted, .regionFailed, .regionState,
      .heading, .headingInterference, .deferredFinished, .paused, .resumed, .visit, .beacons,
      .rangingFailed:
      break
    }
  }
}
