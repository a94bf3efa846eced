import CoreLocation
import Foundation
internal import Geodesy
internal import LocationEngine
internal import LocationModel
import LocationServices
package import LocationSources
internal import LocationStore
import Synchronization

/// A simulated world for testing code written against CoreLocation, without devices and without
/// sleeping: a manual clock, scripted sources, authorization you set, and delegate calls that run
/// when you drive the environment.
///
/// ```swift
/// let world = SimulatedEnvironment(authorization: .authorizedWhenInUse)
/// let manager = world.run { CLLocationManager() }   // binds the manager to this world
/// manager.delegate = myDelegate
/// manager.startUpdatingLocation()
/// world.deliver(CLLocation(latitude: 48.85, longitude: 2.35))
/// world.advance(by: 10)                             // timers due in 10 s fire now
/// ```
///
/// Managers and live-update sequences created inside `run` (or anywhere, after `installGlobally()`)
/// belong to this environment. Delegate calls are queued and run, in order, on the thread that
/// drives the environment: inside `deliver`, `advance(by:)`, `pump()` and the other driving calls.
/// Environments are independent, so tests may run in parallel.
public final class SimulatedEnvironment: Sendable {
  /// The manual clock. Its wall clock starts at `start`.
  package let clock: ManualClock
  /// The default scripted source, started when a client needs locations.
  public let source: ScriptedSource
  /// The environment's hub.
  package let hub: LocationHub
  /// Whether the environment keeps its state in the SQLite file given as `storePath` (false when
  /// none was given or it could not be opened).
  public let isPersistent: Bool
  /// What `CLGeocoder` answers in this world: the offline gazetteer, or placemarks you set.
  public let geocoder = SimulatedGeocoder()
  private let deliveries = DeliveryQueue()
  private let beacons = Mutex<[ScriptedBeacon]>([])
  private let persistence: any HubPersistence

  /// Creates an environment.
  /// - Parameters:
  ///   - authorization: the app's stored authorization; `.notDetermined` lets `policyGrants` decide.
  ///   - accuracy: the accuracy authorization.
  ///   - locationServicesEnabled: the global switch.
  ///   - policyGrants: how a request from a `.notDetermined` app is answered.
  ///   - lastKnownLocation: a location already in the store (Apple's "cached" location).
  ///   - start: the wall-clock time at which the clock starts.
  ///   - sourceAccuracy: the nominal accuracy of the scripted source, in metres.
  ///   - storePath: a SQLite store file to keep authorization, the last known location and regions
  ///     in, so that a second environment on the same file sees what the first left (a restart);
  ///     `nil` keeps everything in memory.
  ///   - beaconsAvailable: whether the world has a Bluetooth radio that hears beacons
  ///     (`isRangingAvailable()`); the scripted source is that radio too.
  public init(
    authorization: CLAuthorizationStatus = .notDetermined,
    accuracy: CLAccuracyAuthorization = .fullAccuracy,
    locationServicesEnabled: Bool = true,
    policyGrants: Bool = true,
    lastKnownLocation: CLLocation? = nil,
    start: Date = Date(timeIntervalSince1970: 1_767_225_600),
    sourceAccuracy: CLLocationAccuracy = 5,
    storePath: String? = nil,
    beaconsAvailable: Bool = true
  ) {
    clock = ManualClock(wall: start.timeIntervalSince1970)
    if let storePath, let store = try? LocationStore(path: storePath) {
      persistence = StorePersistence(store: store)
      isPersistent = true
    } else {
      persistence = MemoryPersistence()
      isPersistent = false
    }
    // A store write that fails here (a full disk under `storePath`) leaves the value in the
    // persistence's memory, which the hub reads back: the world is set up either way.
    if let lastKnownLocation {
      try? persistence.saveLastKnownLocation(Fix(location: lastKnownLocation, source: "store"))
    }
    try? persistence.setServicesEnabled(locationServicesEnabled)
    if authorization != .notDetermined || accuracy != .fullAccuracy {
      try? persistence.setAuthorization(
        AuthorizationSnapshot(
          status: authorization.modelValue, accuracy: accuracy.modelValue,
          servicesEnabled: locationServicesEnabled),
        app: "simulated")
    }
    let source = ScriptedSource(
      name: "simulated://scripted", nominalAccuracy: sourceAccuracy, hearsBeacons: beaconsAvailable)
    self.source = source
    hub = LocationHub(
      app: "simulated", sources: .objects({ [source.adapter] }), persistence: persistence,
      policy: policyGrants ? .grant : .deny, clock: clock)
  }

  private var environment: HubEnvironment {
    var environment = HubEnvironment(hub: hub, scheduler: deliveries)
    environment.geocoder = geocoder.adapter
    return environment
  }

  /// Runs `body` with this environment bound: managers and sequences it creates belong here.
  public func run<T>(_ body: () throws -> T) rethrows -> T {
    try HubEnvironment.$bound.withValue(environment) { try body() }
  }

  /// Runs `body` with this environment bound, for async code.
  public func runAsync<T>(_ body: () async throws -> T) async rethrows -> T {
    try await HubEnvironment.$bound.withValue(environment) { try await body() }
  }

  /// Binds this environment for the whole process (for code that creates managers on other
  /// threads), until `uninstallGlobally()`.
  public func installGlobally() { HubEnvironment.setGlobal(environment) }

  /// Undoes `installGlobally()`.
  public func uninstallGlobally() { HubEnvironment.setGlobal(nil) }

  /// The current simulated time.
  public var now: Date { Date(timeIntervalSince1970: clock.now.wall) }

  /// Runs every queued delegate call, in order (and the ones they queue in turn).
  public func pump() {
    clock.runDue()
    deliveries.drain()
  }

  /// Moves time forward, firing due timers and scheduled source actions, then runs queued delegate
  /// calls.
  public func advance(by seconds: TimeInterval) {
    deliveries.drain()
    clock.advance(by: seconds)
    deliveries.drain()
  }

  /// Has the scripted source produce a location (if it is running; a stopped source drops it, as a
  /// receiver that is off does), then runs queued delegate calls.
  public func deliver(_ location: CLLocation) {
    source.emit(location)
    pump()
  }

  /// Has the scripted source produce several locations in order.
  public func deliver(_ locations: [CLLocation]) {
    for location in locations { source.emit(location) }
    pump()
  }

  /// Has the scripted source (which is also a compass) produce a heading sample now, then runs
  /// queued delegate calls.
  public func deliverHeading(
    magneticHeading: CLLocationDirection?, trueHeading: CLLocationDirection? = nil,
    accuracy: CLLocationDirection = 5, x: Double? = nil, y: Double? = nil, z: Double? = nil
  ) {
    source.emitHeading(
      magneticHeading: magneticHeading, trueHeading: trueHeading, accuracy: accuracy, x: x, y: y,
      z: z,
      at: now)
    pump()
  }

  /// Places an iBeacon in the world: from now on it advertises every `advertisingInterval`
  /// seconds of simulated time, heard at `rssi` (dBm), until removed. Ranging and beacon regions
  /// hear it while the scripted source runs.
  @discardableResult
  public func placeBeacon(
    uuid: UUID, major: CLBeaconMajorValue, minor: CLBeaconMinorValue, rssi: Int = -59,
    measuredPower: Int = -59, advertisingInterval: TimeInterval = 0.25
  ) -> ScriptedBeacon {
    let beacon = ScriptedBeacon(
      uuid: uuid, major: major, minor: minor, rssi: rssi, measuredPower: measuredPower,
      advertisingInterval: max(0.01, advertisingInterval))
    beacons.withLock { $0.append(beacon) }
    scheduleAdvertisement(of: beacon, after: 0)
    return beacon
  }

  /// The beacons placed in the world.
  public var placedBeacons: [ScriptedBeacon] { beacons.withLock { $0 } }

  private func scheduleAdvertisement(of beacon: ScriptedBeacon, after seconds: Double) {
    _ = clock.schedule(at: clock.now.monotonic + seconds) { [weak self, beacon] in
      guard let self else { return }
      if let advertisement = beacon.advertisement(at: clock.now.wall) {
        source.emit(advertisement: advertisement)
      }
      scheduleAdvertisement(of: beacon, after: beacon.advertisingInterval)
    }
  }

  /// Makes the scripted source fail (clients that are updating hear `CLError.locationUnknown`).
  public func failSource(_ message: String = "simulated source failure", permanently: Bool = false)
  {
    source.fail(message, permanently: permanently)
    pump()
  }

  /// Ends the scripted source for good (as a replay reaching its end).
  public func endSource() {
    source.end()
    pump()
  }

  /// Changes the app's authorization, as the user would in settings; managers are told.
  public func setAuthorization(
    _ status: CLAuthorizationStatus, accuracy: CLAccuracyAuthorization = .fullAccuracy
  ) {
    var snapshot = hub.authorization
    snapshot.status = status.modelValue
    snapshot.accuracy = accuracy.modelValue
    hub.setAuthorization(snapshot)
    pump()
  }

  /// Turns location services on or off for the whole (simulated) device.
  public func setLocationServicesEnabled(_ enabled: Bool) {
    var snapshot = hub.authorization
    snapshot.servicesEnabled = enabled
    hub.setAuthorization(snapshot)
    pump()
  }

  /// The last known location the store holds.
  public var storedLastKnownLocation: CLLocation? {
    persistence.lastKnownLocation().map(CLLocation.init(fix:))
  }
}

/// Delegate calls waiting for the environment to be driven.
final class DeliveryQueue: DeliveryScheduler {
  private let pending = Mutex<[@Sendable () -> Void]>([])

  func schedule(_ work: @escaping @Sendable () -> Void) {
    pending.withLock { $0.append(work) }
  }

  func drain() {
    while let work = pending.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) {
      work()
    }
  }
}
