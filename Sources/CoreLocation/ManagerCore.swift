import Foundation
internal import LocationEngine
internal import LocationModel
import LocationServices
import Synchronization

/// The part of a manager that the hub talks to. Sendable: every mutable field sits behind a mutex.
final class ManagerCore: HubClient {
  struct Settings {
    var desiredAccuracy: CLLocationAccuracy = kCLLocationAccuracyBest
    var distanceFilter: CLLocationDistance = kCLDistanceFilterNone
    var activityType: CLActivityType = .other
    var pausesAutomatically = true
    var allowsBackground = false
    var showsBackgroundIndicator = false
  }

  private struct State {
    var settings = Settings()
    var updating = false
    let target: DeliveryTarget
    var lastLocation: CLLocation?
    var purpose: String?
    var previousLocation: CLLocation?
    /// Region objects the app passed, kept until the hub answers about them.
    var pendingRegions: [String: UncheckedRegion] = [:]
  }

  /// A weak reference that can cross threads.
  private final class WeakBox<T: AnyObject>: @unchecked Sendable {
    // @unchecked: the reference is only read and written under the owner's mutex.
    weak var value: T?
  }

  let environment: HubEnvironment
  let headingState = Mutex(HeadingState())
  let rangingState = Mutex(RangingState())
  private let state: Mutex<State>
  private let managerBox = WeakBox<CLLocationManager>()
  private let delegateBox = Mutex<WeakBox<AnyObject>>(WeakBox())
  private let idBox = Mutex<ClientID?>(nil)

  init(environment: HubEnvironment) {
    self.environment = environment
    state = Mutex(State(target: DeliveryTarget.current(environment)))
  }

  func attach(_ manager: CLLocationManager) {
    managerBox.value = manager
    let id = environment.hub.register(self)
    idBox.withLock { $0 = id }
  }

  func detach() {
    if let id = idBox.withLock({ $0 }) { environment.hub.unregister(id) }
  }

  var id: ClientID? { idBox.withLock { $0 } }

  /// The manager, if it still exists.
  var managerReference: CLLocationManager? { managerBox.value }

  /// Where the manager's callbacks run now.
  var currentTarget: DeliveryTarget { state.withLock { $0.target } }

  func rememberRegion(_ region: CLRegion) {
    let copy = UncheckedRegion(region: region)
    state.withLock { $0.pendingRegions[region.identifier] = copy }
  }

  func takeRegion(_ identifier: String) -> CLRegion? {
    state.withLock { $0.pendingRegions.removeValue(forKey: identifier) }?.region
  }

  var delegate: (any CLLocationManagerDelegate)? {
    get { delegateBox.withLock { $0.value } as? any CLLocationManagerDelegate }
    set { delegateBox.withLock { $0.value = newValue } }
  }

  var settings: Settings { state.withLock { $0.settings } }
  var lastLocation: CLLocation? { state.withLock { $0.lastLocation } }

  /// The manager's `purpose`, as set.
  var purpose: String? {
    get { state.withLock { $0.purpose } }
    set { state.withLock { $0.purpose = newValue } }
  }
  var previousLocation: CLLocation? { state.withLock { $0.previousLocation } }

  private var request: UpdateRequest {
    let settings = self.settings
    return Self.request(settings)
  }

  /// The engine's request for these settings.
  static func request(_ settings: Settings) -> UpdateRequest {
    UpdateRequest(
      desiredAccuracy: settings.desiredAccuracy, distanceFilter: settings.distanceFilter,
      pausesAutomatically: settings.pausesAutomatically, activity: settings.activityType.activity)
  }

  func update(_ change: (inout Settings) -> Void) {
    let (updating, request, before) = state.withLock {
      state -> (Bool, UpdateRequest, UpdateRequest) in
      let before = Self.request(state.settings)
      change(&state.settings)
      return (state.updating, Self.request(state.settings), before)
    }
    // Settings outside the request (background flags) change nothing in the engine.
    if updating, request != before, let id { environment.hub.send(.changeRequest(id, request)) }
  }

  func startUpdating() {
    state.withLock { $0.updating = true }
    if let id { environment.hub.startUpdates(id, request) }
  }

  func stopUpdating() {
    state.withLock { $0.updating = false }
    if let id { environment.hub.send(.stopUpdates(id)) }
  }

  func startSignificantChanges() {
    if let id { environment.hub.startSignificantChanges(id) }
  }

  func stopSignificantChanges() {
    if let id { environment.hub.send(.stopSignificantChanges(id)) }
  }

  func allowDeferred(distance: Double, timeout: Double) {
    if let id { environment.hub.allowDeferred(id, distance: distance, timeout: timeout) }
  }

  func disallowDeferred() {
    if let id { environment.hub.send(.disallowDeferred(id)) }
  }

  func requestLocation() {
    if let id { environment.hub.requestLocation(id, request) }
  }

  // MARK: HubClient

  /// Makes the delivery's locations and drops them: nothing reaches the delegate or the state
  /// (`HubClient.rehearse`).
  func rehearse(_ fixes: [Fix]) {
    let locations = fixes.map(CLLocation.init(fix:))
    let target = state.withLock { $0.target }
    withExtendedLifetime((locations, target)) {}
  }

  func hub(_ hub: any LocationService, deliver delivery: HubDelivery) {
    let target = state.withLock { $0.target }
    switch delivery {
    case .locations(let fixes):
      let locations = fixes.map(CLLocation.init(fix:))
      let box = UncheckedLocations(locations: locations)
      target.run { [self] in
        guard let manager = managerBox.value, let newest = box.locations.last else { return }
        if LatencyTrace.isOn {
          LatencyTrace.mark(.app, fixTime: newest.timestamp.timeIntervalSince1970)
        }
        state.withLock {
          $0.previousLocation = $0.lastLocation
          $0.lastLocation = newest
        }
        delegate?.locationManager(manager, didUpdateLocations: box.locations)
      }
    case .error(let error, let message):
      if case .denied = error { state.withLock { $0.updating = false } }
      let box = UncheckedError(error: Self.clError(error, message: message))
      target.run { [self] in
        guard let manager = managerBox.value else { return }
        delegate?.locationManager(manager, didFailWithError: box.error)
      }
    case .authorization:
      target.run { [self] in
        guard let manager = managerBox.value else { return }
        delegate?.locationManagerDidChangeAuthorization(manager)
      }
    case .regionEvents, .regionStarted, .regionFailed, .regionState:
      deliverRegion(delivery, target: target)
    case .heading, .headingInterference:
      deliverHeading(delivery, target: target)
    case .deferredFinished(let code):
      let box = UncheckedOptionalError(
        error: code.flatMap(CLError.Code.init(rawValue:)).map { CLError($0) })
      target.run { [self] in
        guard let manager = managerBox.value else { return }
        delegate?.locationManager(manager, didFinishDeferredUpdatesWithError: box.error)
      }
    case .paused:
      target.run { [self] in
        guard let manager = managerBox.value else { return }
        delegate?.locationManagerDidPauseLocationUpdates(manager)
      }
    case .resumed:
      target.run { [self] in
        guard let manager = managerBox.value else { return }
        delegate?.locationManagerDidResumeLocationUpdates(manager)
      }
    case .visit(let visit):
      deliverVisit(visit, target: target)
    case .beacons, .rangingFailed:
      deliverRanging(delivery, target: target)
    }
  }

  /// `requestTemporaryFullAccuracyAuthorization`: the completion runs where delegate calls run,
  /// after any authorization change the answer brought.
  func requestTemporaryFullAccuracy(
    purposeKey: String, completion: (@Sendable ((any Error)?) -> Void)?
  ) {
    let target = currentTarget
    environment.hub.requestTemporaryFullAccuracy(purposeKey: purposeKey) { declined in
      guard let completion else { return }
      let box = UncheckedOptionalError(error: declined.map(Self.promptDeclined))
      target.run { completion(box.error) }
    }
  }

  /// A ranging request fails on the delegate's thread: `denied` when the app may not have
  /// locations, else `rangingUnavailable` (no source hears beacons: no Bluetooth adapter, or it is
  /// off).
  func failRanging(
    _ tell: @escaping @Sendable (CLLocationManager, any CLLocationManagerDelegate, CLError) -> Void
  ) {
    let error =
      environment.hub.authorization.allowsLocation
      ? CLError(
        .rangingUnavailable,
        userInfo: [
          NSLocalizedDescriptionKey:
            "beacon ranging is not available: no powered Bluetooth LE adapter (BlueZ) or beacon "
            + "recording is configured"
        ])
      : CLError(.denied, userInfo: [NSLocalizedDescriptionKey: "location access denied"])
    let box = UncheckedError(error: error)
    currentTarget.run { [self] in
      guard let manager = managerReference, let delegate else { return }
      tell(manager, delegate, box.error)
    }
  }

  /// `CLError.promptDeclined` with the reason no one was asked.
  static func promptDeclined(_ reason: String) -> CLError {
    CLError(.promptDeclined, userInfo: [NSLocalizedDescriptionKey: reason])
  }

  /// The userInfo key that marks the end of every source (a replay that reached its end).
  static let sourcesEndedKey = "CoreLocationSourcesEnded"

  static func clError(_ error: EngineError, message: String?) -> CLError {
    var userInfo: [String: Any] = [:]
    if let message { userInfo[NSLocalizedDescriptionKey] = message }
    switch error {
    case .locationUnknown:
      return CLError(.locationUnknown, userInfo: userInfo)
    case .denied:
      if message == nil { userInfo[NSLocalizedDescriptionKey] = "location access denied" }
      return CLError(.denied, userInfo: userInfo)
    case .rangingUnavailable:
      if message == nil {
        userInfo[NSLocalizedDescriptionKey] =
          "no source hears beacons (no powered Bluetooth adapter)"
      }
      return CLError(.rangingUnavailable, userInfo: userInfo)
    case .sourcesEnded:
      userInfo[sourcesEndedKey] = true
      if message == nil { userInfo[NSLocalizedDescriptionKey] = "every location source has ended" }
      return CLError(.locationUnknown, userInfo: userInfo)
    }
  }
}
