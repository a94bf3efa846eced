import Foundation
import Geodesy
import LocationEngine
import LocationModel
import LocationServices
import LocationSources
import Synchronization

extension WifiTown {
  /// A seeded field of access points along the path of a trace, heard with the town's radio
  /// (`scan(_:_:hotspot:)`: the same log-distance model and shadowing): walking the trace second by
  /// second, wherever the device is more than a seeded 30 to 60 m from every place that got access
  /// points so far, one access point is put on each side of its way, set back a seeded 5 to 25 m
  /// (in the houses). A path travelled twice (a commute there and back) is covered once. The plane
  /// is tangent to WGS-84 at the trace's start.
  /// - Parameters:
  ///   - trace: The movement whose path is covered.
  ///   - seed: The seed of the gaps, set-backs, BSSIDs and `_nomap` names (3 %).
  /// - Returns: The field.
  package static func along(_ trace: PowerTrace, seed: UInt64) -> WifiTown {
    var random = SplitMix64(seed: seed)
    let start = trace.position(at: 0)
    let plane = LocalTangentPlane(latitude: start.latitude, longitude: start.longitude)
    var placed: [(east: Double, north: Double)] = []
    var points: [AccessPoint] = []
    var gap = random.uniform(30...60)
    var course = 0.0
    var time = 0.0
    while time <= trace.duration {
      let position = trace.position(at: time)
      time += 1
      if position.course >= 0 { course = position.course }
      let here = plane.project(latitude: position.latitude, longitude: position.longitude)
      guard !placed.contains(where: { hypot($0.east - here.east, $0.north - here.north) < gap })
      else { continue }
      placed.append(here)
      gap = random.uniform(30...60)
      // Across the way: the course turned a quarter to the right, then to the left.
      let across = (course + 90) * .pi / 180
      for side in [1.0, -1.0] {
        let setback = side * random.uniform(5...25)
        let index = points.count
        let name = random.chance(0.03) ? "house\(index)_nomap" : "house\(index)"
        points.append(
          AccessPoint(
            bssid: random.next() & 0xFFFF_FFFF_FFFF, ssid: Array(name.utf8),
            east: here.east + setback * sin(across), north: here.north + setback * cos(across)))
      }
    }
    return WifiTown(plane: plane, accessPoints: points)
  }
}

/// A simulated Wi-Fi scanner following a `PowerTrace` on the hub's clock: power `.low`, 50 m
/// nominal accuracy, `producesScans` (its scans go through the hub's `WifiKnowledge`); while it
/// runs it scans a seeded 3 to 10 s after each start and after each scan, hearing the access
/// points of a `WifiTown` field at the trace's true position (`WifiTown.scan`).
package final class SimulatedScanner: LocationSource {
  private struct State {
    var generation = 0
    var pending: (any Cancellable)?
    var random: SplitMix64
    var scans = 0
  }

  /// A low-power scanner named `sim-wifi://scanner`.
  package let descriptor = SourceDescriptor(
    url: "sim-wifi://scanner", nominalAccuracy: 50, power: .low, producesScans: true)
  /// The trace followed.
  package let trace: PowerTrace
  /// The access points heard.
  package let field: WifiTown
  /// The hub monotonic instant at which the trace starts.
  package let origin: Double
  private let state: Mutex<State>

  /// Creates a scanner.
  /// - Parameters:
  ///   - trace: The movement.
  ///   - field: The access points, in a plane that covers the trace (`WifiTown.along`).
  ///   - origin: The hub monotonic instant of the trace's start.
  ///   - seed: The seed of the scan intervals and the shadowing.
  package init(trace: PowerTrace, field: WifiTown, origin: Double, seed: UInt64) {
    self.trace = trace
    self.field = field
    self.origin = origin
    state = Mutex(State(random: SplitMix64(seed: seed)))
  }

  /// How many scans it made.
  package var scans: Int { state.withLock { $0.scans } }

  package func start(context: any SourceContext) {
    let generation = state.withLock { state -> Int in
      state.generation += 1
      return state.generation
    }
    schedule(generation: generation, context)
  }

  package func stop() {
    state.withLock { state -> (any Cancellable)? in
      state.generation += 1
      defer { state.pending = nil }
      return state.pending
    }?.cancel()
  }

  private func schedule(generation: Int, _ context: any SourceContext) {
    let delay = state.withLock { $0.random.uniform(3...10) }
    let token = context.schedule(after: delay) { [self] in
      guard state.withLock({ $0.generation == generation }) else { return }
      let now = context.now
      let truth = trace.position(at: now.monotonic - origin)
      let place = field.plane.project(latitude: truth.latitude, longitude: truth.longitude)
      let sample = WifiTown.Sample(time: now.wall, east: place.east, north: place.north)
      let scan = state.withLock { state -> WifiScan in
        state.scans += 1
        return field.scan(sample, &state.random)
      }
      context.emitScan(scan)
      schedule(generation: generation, context)
    }
    let stale = state.withLock { state -> Bool in
      guard state.generation == generation else { return true }
      state.pending = token
      return false
    }
    if stale { token.cancel() }
  }
}

extension PowerSimulation {
  /// Wi-Fi for a run: a `SimulatedScanner` on `field` beside the receiver, the machine's
  /// `knowledge` (shared by successive runs, so that a second commute finds what the first
  /// learned), and the wall-clock start of the run (successive runs on successive days).
  package struct Wifi: Sendable {
    /// The access points heard.
    package var field: WifiTown
    /// What the machine knows of them.
    package var knowledge: WifiKnowledge
    /// The seed of the scanner.
    package var seed: UInt64
    /// The wall-clock instant of the trace's start, seconds since 1970.
    package var wallStart: Double

    /// Creates the Wi-Fi of a run.
    package init(field: WifiTown, knowledge: WifiKnowledge, seed: UInt64, wallStart: Double) {
      self.field = field
      self.knowledge = knowledge
      self.seed = seed
      self.wallStart = wallStart
    }
  }
}
