import Geodesy
import LocationEngine
import LocationModel
import LocationServices
import LocationSources
import Synchronization
import TestSupport
import Testing

/// A source the test drives, with the power cost it declares; counts its starts.
private final class PoweredSource: LocationSource {
  let descriptor: SourceDescriptor
  private let state = Mutex<(context: (any SourceContext)?, starts: Int)>((nil, 0))

  init(
    _ url: String, accuracy: Double, power: PowerCost, locations: Bool = true,
    headings: Bool = false
  ) {
    descriptor = SourceDescriptor(
      url: url, nominalAccuracy: accuracy, power: power, producesLocation: locations,
      producesHeading: headings)
  }

  var isRunning: Bool { state.withLock { $0.context != nil } }
  var starts: Int { state.withLock { $0.starts } }

  func start(context: any SourceContext) {
    state.withLock {
      $0.context = context
      $0.starts += 1
    }
  }

  func stop() { state.withLock { $0.context = nil } }

  /// Emits a fix `north` metres north of 45° N 7° E, stamped with the context's wall clock.
  func emit(north: Double, accuracy: Double = 5) {
    guard let context = state.withLock({ $0.context }) else { return }
    context.emit(
      Fix(
        latitude: 45 + north / 111_132, longitude: 7, horizontalAccuracy: accuracy,
        time: context.now.wall, source: descriptor.url))
  }
}

/// The hub's side of issue 7: source on-time, the duty-cycled receiver, auto-pause switching the
/// receiver, and the arbiter choosing cheap sources for coarse demands.
@Suite struct HubPowerTests {
  let clock = ManualClock()

  private func hub(_ sources: [PoweredSource]) -> LocationHub {
    let persistence = MemoryPersistence()
    persistence.setAuthorization(
      AuthorizationSnapshot(status: AuthorizationStatus.authorizedAlways), app: "power")
    return LocationHub(
      app: "power", sources: .objects({ sources }), persistence: persistence, clock: clock)
  }

  private func receiver() -> PoweredSource {
    PoweredSource("gpsd://127.0.0.1:2947", accuracy: 5, power: .high)
  }

  private func usage(_ hub: LocationHub, _ url: String) -> SourceUsage? {
    hub.sourceUsage.first { $0.url == url }
  }

  // MARK: On-time

  @Test func onSecondsGrowOnlyWhileTheSourceRuns() throws {
    let gps = receiver()
    let hub = hub([gps])
    #expect(hub.sourceUsage.isEmpty)  // nothing made before it is needed
    let id = hub.register(RecordingClient())
    hub.startUpdates(id, UpdateRequest())
    clock.advance(by: 100)
    var record = try #require(usage(hub, gps.descriptor.url))
    #expect(record.running)
    #expect(record.power == .high)
    #expect(record.onSeconds == 100)
    hub.send(.stopUpdates(id))
    clock.advance(by: 50)
    record = try #require(usage(hub, gps.descriptor.url))
    #expect(!record.running)
    #expect(record.onSeconds == 100)
    hub.startUpdates(id, UpdateRequest())
    clock.advance(by: 20)
    #expect(usage(hub, gps.descriptor.url)?.onSeconds == 120)
  }

  @Test func aSourceThatNeverRanHasNoOnTime() {
    let file = PoweredSource("static:///etc/geolocation", accuracy: 1000, power: .none)
    let gps = receiver()
    let hub = hub([file, gps])
    let id = hub.register(RecordingClient())
    hub.startUpdates(id, UpdateRequest(desiredAccuracy: 3000))
    clock.advance(by: 60)
    #expect(usage(hub, file.descriptor.url)?.onSeconds == 60)
    #expect(usage(hub, gps.descriptor.url)?.onSeconds == 0)
    #expect(usage(hub, gps.descriptor.url)?.running == false)
  }

  // MARK: Significant change

  /// The receiver is on for one fix per burst, off between bursts, woken by the duty cycle, and
  /// given up on after two minutes without a fix.
  @Test func significantChangeDutyCyclesTheReceiver() throws {
    let gps = receiver()
    let hub = hub([gps])
    let client = RecordingClient()
    let id = hub.register(client)
    hub.startSignificantChanges(id)
    #expect(gps.isRunning)
    #expect(gps.starts == 1)
    clock.advance(by: 10)
    gps.emit(north: 0)  // the first fix: delivered, the receiver goes off
    #expect(client.locations.count == 1)
    #expect(!gps.isRunning)
    clock.advance(by: 299)  // the wake is 300 s after the delivery, at 310 s
    #expect(!gps.isRunning)
    clock.advance(by: 1)
    #expect(gps.isRunning)
    #expect(gps.starts == 2)
    clock.advance(by: 5)
    gps.emit(north: 600)  // 600 m, 305 s after the last delivery
    #expect(client.locations.count == 2)
    #expect(!gps.isRunning)
    #expect(usage(hub, gps.descriptor.url)?.onSeconds == 15)
    // The next wake: 300 s after the delivery (at 315 s), the latest a slow device allows.
    clock.advance(by: 300)
    #expect(gps.isRunning)
    #expect(gps.starts == 3)
    clock.advance(by: 119)
    #expect(gps.isRunning)
    clock.advance(by: 1)  // no fix in 120 s: off, and retried 300 s later
    #expect(!gps.isRunning)
    #expect(usage(hub, gps.descriptor.url)?.onSeconds == 135)
    clock.advance(by: 300)
    #expect(gps.isRunning)
    #expect(gps.starts == 4)
    hub.send(.stopSignificantChanges(id))
    #expect(!gps.isRunning)
    #expect(clock.pendingCount == 0)  // the wake and give-up timers are gone
    let totalOn = try #require(usage(hub, gps.descriptor.url)).onSeconds
    #expect(totalOn == 135)
  }

  @Test func significantChangeFixesBetweenBurstsNeedNoReceiver() {
    let gps = receiver()
    let hub = hub([gps])
    let client = RecordingClient()
    let id = hub.register(client)
    hub.startSignificantChanges(id)
    gps.emit(north: 0)
    clock.advance(by: 100)
    gps.emit(north: 5000)  // dropped: the receiver is off
    #expect(client.locations.count == 1)
  }

  @Test func significantChangeAvailability() {
    let unavailable = LocationHub(
      app: "power", sources: .unavailable("no source configured"),
      persistence: MemoryPersistence(), clock: clock)
    #expect(!unavailable.significantChangeAvailable)
    #expect(hub([receiver()]).significantChangeAvailable)
  }

  /// 3 km demand picks a cheap coarse source over a receiver; cheap sources are not switched off
  /// between bursts, and their fixes are judged as they come.
  @Test func significantChangeRunsACheapCoarseSourceContinuously() {
    let coarse = PoweredSource("geoclue", accuracy: 500, power: .low)
    let gps = receiver()
    let hub = hub([coarse, gps])
    let client = RecordingClient()
    let id = hub.register(client)
    hub.startSignificantChanges(id)
    #expect(coarse.isRunning && !gps.isRunning)
    coarse.emit(north: 0, accuracy: 500)
    #expect(coarse.isRunning)
    clock.advance(by: 150)
    coarse.emit(north: 800, accuracy: 500)  // too soon
    clock.advance(by: 150)
    coarse.emit(north: 900, accuracy: 500)
    #expect(client.locations.map(\.horizontalAccuracy) == [500, 500])
    clock.advance(by: 1000)
    #expect(coarse.isRunning && gps.starts == 0)
  }

  // MARK: Arbitration for coarse requests

  /// `kCLLocationAccuracyKilometer` with a low-power coarse source and a receiver configured: only
  /// the coarse source runs.
  @Test func kilometreAccuracyRunsOnlyTheCoarseSource() {
    let coarse = PoweredSource("geoclue", accuracy: 1000, power: .low)
    let gps = receiver()
    let hub = hub([gps, coarse])
    let client = RecordingClient()
    let id = hub.register(client)
    hub.startUpdates(id, UpdateRequest(desiredAccuracy: 1000))
    #expect(coarse.isRunning)
    #expect(!gps.isRunning && gps.starts == 0)
    coarse.emit(north: 0, accuracy: 1000)
    #expect(client.locations.count == 1)
    clock.advance(by: 600)
    #expect(usage(hub, coarse.descriptor.url)?.onSeconds == 600)
    #expect(usage(hub, gps.descriptor.url)?.onSeconds == 0)
  }

  // MARK: Auto-pause

  /// A still device pauses after 5 minutes (`.other`): the receiver goes off, comes on for one
  /// fix a minute, and updates resume when a check fix has moved.
  @Test func autoPauseSwitchesTheReceiver() {
    let gps = receiver()
    let hub = hub([gps])
    let client = RecordingClient()
    let id = hub.register(client)
    hub.startUpdates(id, UpdateRequest(pausesAutomatically: true, activity: .other))
    for step in 0...10 {
      if step > 0 { clock.advance(by: 30) }
      gps.emit(north: step.isMultiple(of: 2) ? 0 : 15)
    }
    #expect(client.deliveries.last == .paused)
    #expect(client.locations.count == 11)
    #expect(!gps.isRunning)
    #expect(usage(hub, gps.descriptor.url)?.onSeconds == 300)
    clock.advance(by: 60)
    #expect(gps.isRunning)  // the check
    clock.advance(by: 3)
    gps.emit(north: 10)  // still: off again, nothing delivered
    #expect(!gps.isRunning)
    #expect(client.locations.count == 11)
    clock.advance(by: 60)
    #expect(gps.isRunning)
    client.reset()
    gps.emit(north: 200)
    #expect(client.deliveries.count == 2)
    #expect(client.deliveries.first == .resumed)
    #expect(client.locations.count == 1)
    #expect(gps.isRunning)
    #expect(usage(hub, gps.descriptor.url)?.onSeconds == 303)
  }

  /// A file costs nothing to keep on: a pause leaves it running, and its fixes resume updates as
  /// soon as the device has moved.
  @Test func autoPauseKeepsACheapSourceRunning() {
    let file = PoweredSource("static:///etc/geolocation", accuracy: 5, power: .none)
    let hub = hub([file])
    let client = RecordingClient()
    let id = hub.register(client)
    hub.startUpdates(id, UpdateRequest(pausesAutomatically: true, activity: .other))
    for step in 0...10 {
      if step > 0 { clock.advance(by: 30) }
      file.emit(north: 0)
    }
    #expect(client.deliveries.last == .paused)
    #expect(file.isRunning)
    clock.advance(by: 10)
    file.emit(north: 10)
    #expect(client.deliveries.last == .paused)
    clock.advance(by: 10)
    client.reset()
    file.emit(north: 100)
    #expect(client.deliveries.first == .resumed)
    #expect(client.locations.count == 1)
    #expect(file.starts == 1)
  }

  /// A paused client on the receiver while another client's coarse demand runs a cheap source.
  /// The paused client must not pull the receiver back on: each swap changes the sources, which
  /// changes the demand, which swaps them back, recursively until the stack overflows.
  @Test
  func pausedClientAndACoarseClientDoNotSwapSourcesForEver() {
    let file = PoweredSource("static:///etc/geolocation", accuracy: 1000, power: .none)
    let gps = receiver()
    let hub = hub([file, gps])
    let coarse = hub.register(RecordingClient())
    hub.startUpdates(coarse, UpdateRequest(desiredAccuracy: 3000))
    let client = RecordingClient()
    let id = hub.register(client)
    hub.startUpdates(id, UpdateRequest(pausesAutomatically: true, activity: .other))
    #expect(gps.isRunning && !file.isRunning)
    for step in 0...10 {
      if step > 0 { clock.advance(by: 30) }
      gps.emit(north: 0)
    }
    #expect(client.deliveries.last == .paused)
    #expect(file.isRunning && !gps.isRunning)
  }

  /// The same swap with a compass kept on for headings: a low-power heading-only source counts as
  /// a cheap running source for the paused client.
  @Test
  func pausedClientWithACompassRunningDoesNotSwapForEver() {
    let compass = PoweredSource(
      "iio:///sys/bus/iio/devices/iio:device0", accuracy: .infinity, power: .low, locations: false,
      headings: true)
    let gps = receiver()
    let hub = hub([compass, gps])
    let client = RecordingClient()
    let id = hub.register(client)
    hub.send(.startHeading(id, filter: 1, orientation: .portrait))
    hub.startUpdates(id, UpdateRequest(pausesAutomatically: true, activity: .other))
    #expect(gps.isRunning && compass.isRunning)
    for step in 0...10 {
      if step > 0 { clock.advance(by: 30) }
      gps.emit(north: 0)
    }
    #expect(client.deliveries.last == .paused)
    #expect(compass.isRunning && !gps.isRunning)
  }
}
