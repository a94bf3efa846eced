import Foundation
internal import Geodesy
internal import LocationEngine
internal import LocationModel
import LocationServices
import Synchronization

/// The object you use to start and stop the delivery of location-related events to your app.
///
/// On Linux a manager is a client of `locationd` when its socket exists
/// (`$CORELOCATION_DAEMON_SOCKET`, else the user daemon's `$XDG_RUNTIME_DIR/locationd/socket` or
/// `/run/user/UID/locationd/socket`, else the system daemon's `/run/locationd/socket`) and the
/// process does not name its own source with
/// `CORELOCATION_SOURCE`; otherwise of the process's own location hub (embedded mode), which runs
/// the sources named by `CORELOCATION_SOURCE`, the configuration files or discovery (see the
/// README). `CORELOCATION_DAEMON=off` forces embedded mode; `CORELOCATION_DAEMON=required` makes a
/// missing daemon an error instead: services fail with `CLError.locationUnknown` saying the daemon
/// is required and not running, and the manager keeps trying to connect. When a daemon goes away,
/// running services receive `CLError.locationUnknown` and resume once it is back. Both modes behave
/// the same otherwise. Behaviour beyond what Apple documents:
/// - Delegate calls run on the run loop of the thread that created the manager (Apple's rule), also
///   for services started from another thread or task; on the main thread through the main
///   dispatch queue, so `RunLoop.main.run()` and `dispatchMain()` both work.
/// - `requestLocation()` delivers the first location that meets `desiredAccuracy` or that no running
///   source can improve on; otherwise, after 10 seconds, the most accurate one seen, or
///   `CLError.locationUnknown` when there was none.
/// - When updates start, a last known location no more than 5 minutes old is delivered first, with
///   its original timestamp.
/// - Authorization is remembered per app in the store. With no stored decision, a request (or
///   starting a service) is granted as asked unless `CORELOCATION_AUTHORIZATION=deny`.
/// - When every source has ended for good (a replayed track without `loop`), the delegate receives
///   `CLError.locationUnknown` whose `userInfo["CoreLocationSourcesEnded"]` is `true`.
open class CLLocationManager: NSObject {
  let core: ManagerCore

  /// Creates a location manager bound to the current environment.
  public override init() {
    let environment = HubEnvironment.current
    core = ManagerCore(environment: environment)
    super.init()
    core.attach(self)
  }

  deinit {
    core.detach()
  }

  // MARK: Delegate

  /// The delegate object to receive update events (held weakly).
  weak open var delegate: (any CLLocationManagerDelegate)? {
    get { core.delegate }
    set { core.delegate = newValue }
  }

  // MARK: Configuration

  /// The accuracy of the location data that your app wants to receive. Default
  /// `kCLLocationAccuracyBest`. It chooses which sources run: the cheapest that meets it.
  open var desiredAccuracy: CLLocationAccuracy {
    get { core.settings.desiredAccuracy }
    set { core.update { $0.desiredAccuracy = newValue } }
  }

  /// The minimum distance in metres the device must move horizontally (geodesic distance on the
  /// WGS-84 ellipsoid from the last delivered location) before an update event is generated.
  /// Default `kCLDistanceFilterNone`: every location is delivered.
  open var distanceFilter: CLLocationDistance {
    get { core.settings.distanceFilter }
    set { core.update { $0.distanceFilter = newValue } }
  }

  /// The type of activity the app expects the user to typically perform. Default `.other`.
  ///
  /// It sets how long the device must stay within a radius before updates pause automatically
  /// (our rule; Apple publishes none): `.other` 50 m for 5 minutes, `.fitness` 25 m for
  /// 10 minutes, `.otherNavigation` 50 m for 30 minutes; `.automotiveNavigation` and `.airborne`
  /// never pause.
  open var activityType: CLActivityType {
    get { core.settings.activityType }
    set { core.update { $0.activityType = newValue } }
  }

  /// A Boolean value that indicates whether the location-manager object may pause location updates.
  /// Default `true`.
  ///
  /// When the device has stayed within the `activityType`'s radius for its time, the last location
  /// is delivered, a GNSS receiver is switched off (cheap sources keep running) and
  /// `locationManagerDidPauseLocationUpdates(_:)` is called. Every 60 seconds the receiver is
  /// switched on for one fix; a fix farther than the radius plus its accuracy from where updates
  /// paused resumes them: `locationManagerDidResumeLocationUpdates(_:)` is called and that
  /// location is delivered (through `distanceFilter`, as every location). Apple leaves restarting to the app; a Linux program has no
  /// location-triggered relaunch, so we restart on movement. Calling `startUpdatingLocation()`
  /// while paused restarts at once, with no resume callback.
  open var pausesLocationUpdatesAutomatically: Bool {
    get { core.settings.pausesAutomatically }
    set { core.update { $0.pausesAutomatically = newValue } }
  }

  /// A Boolean value that indicates whether the app receives location updates when running in the
  /// background. Default `false`. Linux has no app suspension; the value is kept and has no effect.
  open var allowsBackgroundLocationUpdates: Bool {
    get { core.settings.allowsBackground }
    set { core.update { $0.allowsBackground = newValue } }
  }

  /// A Boolean value that indicates whether the status bar changes its appearance when an app uses
  /// location services in the background. Default `false`; kept, no effect on Linux.
  open var showsBackgroundLocationIndicator: Bool {
    get { core.settings.showsBackgroundIndicator }
    set { core.update { $0.showsBackgroundIndicator = newValue } }
  }

  // MARK: Standard location service

  /// The most recently retrieved user location: the last one delivered to this manager's delegate.
  open var location: CLLocation? { core.lastLocation }

  /// The location delivered before the newest one (for the deprecated delegate method).
  var previousDeliveredLocation: CLLocation? { core.previousLocation }

  /// Starts the generation of updates that report the user's current location.
  open func startUpdatingLocation() {
    core.startUpdating()
  }

  /// Stops the generation of location updates (and cancels a pending `requestLocation()`).
  open func stopUpdatingLocation() {
    core.stopUpdating()
  }

  /// Requests the one-time delivery of the user's current location.
  open func requestLocation() {
    core.requestLocation()
  }

  // MARK: Significant-change location service

  /// Starts the generation of updates based on significant location changes.
  ///
  /// The first location is delivered as soon as there is one (a last known location up to
  /// 5 minutes old counts); later ones when the device is 500 m or more from the last delivered
  /// location, no sooner than 5 minutes after it. `distanceFilter` and `desiredAccuracy` do not
  /// apply. The service asks for 5 km accuracy, so a low-power source (GeoClue below street
  /// level, a static position) runs in preference to a receiver; a receiver that must serve is
  /// duty-cycled: on for one fix, off between, waking after `clamp(250 m / speed, 60 s, 300 s)`
  /// and never sooner than 5 minutes after the last delivery. Locations arrive at
  /// `locationManager(_:didUpdateLocations:)`.
  open func startMonitoringSignificantLocationChanges() {
    core.startSignificantChanges()
  }

  /// Stops the delivery of location events based on significant location changes; the next start
  /// delivers its first location at once.
  open func stopMonitoringSignificantLocationChanges() {
    core.stopSignificantChanges()
  }

  /// Returns a Boolean value indicating whether the significant-change location service is
  /// available: true when a location source is configured or discovered.
  open class func significantLocationChangeMonitoringAvailable() -> Bool {
    HubEnvironment.current.hub.significantChangeAvailable
  }

  // MARK: Visits (rule in CLLocationManager+Visits.swift and the README)

  /// Starts the delivery of visit-related events, for the app: every manager's delegate hears
  /// `locationManager(_:didVisit:)` (the rule is in `CLVisit`'s documentation).
  open func startMonitoringVisits() {
    core.startVisits()
  }

  /// Stops the delivery of visit-related events, for the app.
  open func stopMonitoringVisits() {
    core.stopVisits()
  }

  // MARK: Authorization

  /// The current authorization status for the app.
  open var authorizationStatus: CLAuthorizationStatus {
    CLAuthorizationStatus(core.environment.hub.authorization.status)
  }

  /// Returns the app's authorization status for using location services.
  @available(*, deprecated, message: "Use the authorizationStatus instance property")
  open class func authorizationStatus() -> CLAuthorizationStatus {
    CLAuthorizationStatus(HubEnvironment.current.hub.authorization.status)
  }

  /// A value that indicates the level of location accuracy the app has permission to use.
  open var accuracyAuthorization: CLAccuracyAuthorization {
    CLAccuracyAuthorization(core.environment.hub.authorization.accuracy)
  }

  /// Requests permission to temporarily use location services with full accuracy.
  ///
  /// Behaves as the completion form with no completion.
  open func requestTemporaryFullAccuracyAuthorization(withPurposeKey purposeKey: String) {
    core.requestTemporaryFullAccuracy(purposeKey: purposeKey, completion: nil)
  }

  /// Requests permission to temporarily use location services with full accuracy and reports the
  /// result to `completion`, on the thread that delegate methods run on.
  ///
  /// Linux has no `Info.plist`: `purposeKey` is shown to the person asked as it is (with the
  /// app's `purpose`, if set). Through `locationd` a running `locationctl agent` asks; if they
  /// allow it, `accuracyAuthorization` is `.fullAccuracy` while the app is in use (one of its
  /// processes has a manager, a `CLMonitor`, a live-updates sequence or a session) and returns to
  /// `.reducedAccuracy` after; `locationManagerDidChangeAuthorization(_:)` is called before
  /// `completion` each time it changes. `completion` receives `nil` when the person was asked,
  /// whatever they answered, and `CLError.promptDeclined` (the reason in its description) when no
  /// one could be: no agent is connected, embedded mode (the stored accuracy rules), the app
  /// already has full accuracy, is not authorized, services are off, or the key is empty.
  open func requestTemporaryFullAccuracyAuthorization(
    withPurposeKey purposeKey: String, completion: (@Sendable ((any Error)?) -> Void)? = nil
  ) {
    core.requestTemporaryFullAccuracy(purposeKey: purposeKey, completion: completion)
  }

  /// Requests permission to temporarily use location services with full accuracy; throws
  /// `CLError.promptDeclined` when no one could be asked (see the completion form).
  open func requestTemporaryFullAccuracyAuthorization(withPurposeKey purposeKey: String)
    async throws
  {
    try await withCheckedThrowingContinuation {
      (continuation: CheckedContinuation<Void, any Error>) in
      core.environment.hub.requestTemporaryFullAccuracy(purposeKey: purposeKey) { declined in
        if let declined {
          continuation.resume(throwing: ManagerCore.promptDeclined(declined))
        } else {
          continuation.resume()
        }
      }
    }
  }

  /// Requests the user's permission to use location services while the app is in use.
  open func requestWhenInUseAuthorization() {
    core.environment.hub.requestAuthorization(always: false)
  }

  /// Requests the user's permission to use location services regardless of whether the app is in use.
  open func requestAlwaysAuthorization() {
    core.environment.hub.requestAuthorization(always: true)
  }

  /// Returns a Boolean value indicating whether location services are enabled on the device (the
  /// global switch that `locationctl services on|off` sets; on by default).
  open class func locationServicesEnabled() -> Bool {
    HubEnvironment.current.hub.authorization.servicesEnabled
  }

  // MARK: Region monitoring (rules in CLLocationManager+Regions.swift and the README)

  /// The set of shared regions monitored by all location-manager objects.
  open var monitoredRegions: Set<CLRegion> {
    Set(
      core.environment.hub.regions(group: Self.regionGroup).map { entry -> CLRegion in
        Self.region(for: entry.spec)
      })
  }

  /// The largest boundary distance that can be assigned to a region: 1,000 km.
  open var maximumRegionMonitoringDistance: CLLocationDistance {
    core.environment.hub.maximumRegionRadius
  }

  /// Starts monitoring the specified region (hysteresis 5 m).
  ///
  /// The rule (Apple publishes none): a location at distance `d` from the centre of a circle of
  /// radius `r`, with horizontal accuracy `a`, is evidence of *inside* when `d <= r - max(a, h)` and
  /// of *outside* when `d >= r + max(a, h)`, where `h` is the region's hysteresis (5 m here, or the
  /// `desiredAccuracy` given to `startMonitoring(for:desiredAccuracy:)`); anything between is no
  /// evidence. The first decisive location sets the state and calls
  /// `locationManager(_:didDetermineState:for:)` only; later changes call `didEnterRegion` /
  /// `didExitRegion` (when `notifyOnEntry` / `notifyOnExit`) and `didDetermineState`.
  ///
  /// Regions belong to the app and are shared by all its managers (every manager's delegate is
  /// told), replaced by identifier, and kept in the store with their last state across restarts; a
  /// crossing that happened while the app was not running is reported at the first decisive
  /// location, and states are committed before delegates are told. Monitoring runs the sources even
  /// when no location updates are requested. Invalid regions (radius <= 0 or NaN, radius above
  /// `maximumRegionMonitoringDistance`, invalid centre, empty identifier) fail through
  /// `locationManager(_:monitoringDidFailFor:withError:)` with `CLError.regionMonitoringFailure`;
  /// without authorization, `CLError.regionMonitoringDenied`. The number of regions is limited by
  /// memory, not by 20.
  open func startMonitoring(for region: CLRegion) {
    startMonitoring(region, hysteresis: 5)
  }

  /// Starts monitoring the specified region with a hysteresis of `accuracy` metres (see the rule
  /// above).
  @available(*, deprecated, message: "Use startMonitoring(for:)")
  open func startMonitoring(for region: CLRegion, desiredAccuracy accuracy: CLLocationAccuracy) {
    startMonitoring(region, hysteresis: accuracy)
  }

  private func startMonitoring(_ region: CLRegion, hysteresis: CLLocationAccuracy) {
    core.startMonitoring(region, hysteresis: hysteresis.isFinite && hysteresis > 0 ? hysteresis : 5)
  }

  /// Stops monitoring the specified region.
  open func stopMonitoring(for region: CLRegion) {
    core.environment.hub.removeRegion(identifier: region.identifier, group: Self.regionGroup)
  }

  /// Retrieves the state of a region asynchronously: the delegate's
  /// `locationManager(_:didDetermineState:for:)` receives it. Regions that are not monitored get no
  /// answer.
  open func requestState(for region: CLRegion) {
    core.requestState(region)
  }

  /// Returns a Boolean value indicating whether the device supports region monitoring using the
  /// specified class: circular regions always; beacon regions when beacons can be heard
  /// (`isRangingAvailable()`).
  open class func isMonitoringAvailable(for regionClass: AnyClass) -> Bool {
    if regionClass is CLBeaconRegion.Type { return isRangingAvailable() }
    return regionClass is CLRegion.Type
  }

  /// Returns a Boolean value indicating whether region monitoring is supported on the current device.
  @available(*, deprecated, message: "Use isMonitoringAvailable(for:)")
  open class func regionMonitoringAvailable() -> Bool { true }

  /// Returns a Boolean value indicating whether region monitoring is supported and enabled.
  @available(*, deprecated, message: "Use isMonitoringAvailable(for:) and authorizationStatus")
  open class func regionMonitoringEnabled() -> Bool { locationServicesEnabled() }

  /// Returns a Boolean value indicating whether the device supports ranging of beacons: true when
  /// a source that hears beacons is configured or discovered and ready (a BlueZ adapter present
  /// and powered, or a `beacons+replay://` recording).
  open class func isRangingAvailable() -> Bool {
    HubEnvironment.current.hub.beaconsAvailable
  }

  // MARK: Beacon ranging

  /// The set of beacon constraints currently being tracked using ranging.
  open var rangedBeaconConstraints: Set<CLBeaconIdentityConstraint> { core.rangedConstraints }

  /// Starts the delivery of notifications for the specified beacon constraints.
  ///
  /// About once a second the delegate's `locationManager(_:didRange:satisfying:)` receives the
  /// beacons that satisfy the constraint, closest first (an empty array when none is in range).
  /// Ranging needs location authorization at full accuracy: otherwise
  /// `locationManager(_:didFailRangingFor:error:)` receives `CLError.denied` and the constraint is
  /// no longer ranged. With no source that hears beacons (`isRangingAvailable()` false) it
  /// receives `CLError.rangingUnavailable`, with the reason in its description.
  open func startRangingBeacons(satisfying constraint: CLBeaconIdentityConstraint) {
    core.startRanging(constraint)
  }

  /// Stops the delivery of notifications for the specified beacon constraints.
  open func stopRangingBeacons(satisfying constraint: CLBeaconIdentityConstraint) {
    core.stopRanging(constraint)
  }

  /// The set of regions currently being tracked using ranging.
  @available(*, deprecated, message: "Use rangedBeaconConstraints")
  open var rangedRegions: Set<CLRegion> { core.rangedBeaconRegions }

  /// Starts the delivery of notifications for beacons in the specified region: as
  /// `startRangingBeacons(satisfying:)` with the region's constraint, the beacons reaching
  /// `locationManager(_:didRangeBeacons:in:)` and failures
  /// `locationManager(_:rangingBeaconsDidFailFor:withError:)`.
  @available(*, deprecated, message: "Use startRangingBeacons(satisfying:)")
  open func startRangingBeacons(in region: CLBeaconRegion) {
    core.startRanging(region)
  }

  /// Stops the delivery of notifications for the specified beacon region.
  @available(*, deprecated, message: "Use stopRangingBeacons(satisfying:)")
  open func stopRangingBeacons(in region: CLBeaconRegion) {
    core.stopRanging(region)
  }

  // MARK: Deferred updates

  /// Asks the location manager to defer the delivery of location updates until the device has
  /// travelled `distance` metres (straight-line geodesic distance from where deferral began) or
  /// `timeout` seconds have passed (`CLLocationDistanceMax` / `CLTimeIntervalMax`: no limit). The
  /// held locations are then delivered in one `didUpdateLocations` call, followed by
  /// `didFinishDeferredUpdatesWithError(nil)`. Apple's preconditions hold: updates running
  /// (`deferredNotUpdatingLocation`), a GNSS-class source (`deferredFailed`), `desiredAccuracy`
  /// best or best for navigation (`deferredAccuracyTooLow`), `kCLDistanceFilterNone`
  /// (`deferredDistanceFiltered`). `disallowDeferredLocationUpdates()` and
  /// `stopUpdatingLocation()` deliver what is held and finish with `deferredCanceled`.
  @available(*, deprecated, message: "Deferred updates are deprecated on Apple platforms")
  open func allowDeferredLocationUpdates(
    untilTraveled distance: CLLocationDistance, timeout: TimeInterval
  ) {
    core.allowDeferred(distance: distance, timeout: timeout)
  }

  /// Cancels the deferral of location updates for this app.
  @available(*, deprecated, message: "Deferred updates are deprecated on Apple platforms")
  open func disallowDeferredLocationUpdates() {
    core.disallowDeferred()
  }

  /// Returns a Boolean value indicating whether the device supports deferred location updates:
  /// `true` (deferral needs a GNSS-class source when it is asked for).
  @available(*, deprecated, message: "Deferred updates are deprecated on Apple platforms")
  open class func deferredLocationUpdatesAvailable() -> Bool { true }

  // MARK: Heading (rules in CLLocationManager+Heading.swift and the README)

  /// The most recently reported heading.
  open var heading: CLHeading? { core.headingState.withLock { $0.last }?.heading }

  /// The minimum angular change in degrees required to generate new heading events; default 1,
  /// `kCLHeadingFilterNone` reports every heading. Measured on the circle against the last
  /// delivered heading (359° to 1° is 2°).
  open var headingFilter: CLLocationDegrees {
    get { core.headingState.withLock { $0.filter } }
    set { core.updateHeadingSettings { $0.filter = newValue } }
  }

  /// The device orientation to use when computing heading values; default `.portrait`. Portrait
  /// keeps the reference axis, landscapeLeft turns it by +90°, landscapeRight by -90°,
  /// portraitUpsideDown by 180°; unknown, faceUp and faceDown keep the previous one.
  open var headingOrientation: CLDeviceOrientation {
    get { core.headingState.withLock { $0.orientation } }
    set { core.updateHeadingSettings { $0.orientation = newValue } }
  }

  /// Starts the generation of updates that report the user's current heading. `trueHeading` is
  /// the magnetic heading plus the World Magnetic Model's declination at the latest location and
  /// the heading's date, while location updates run and a location is known; -1 otherwise.
  open func startUpdatingHeading() {
    core.startHeading()
  }

  /// Stops the generation of heading updates.
  open func stopUpdatingHeading() {
    core.stopHeading()
  }

  /// Dismisses the heading calibration display: headings are delivered with their own accuracy
  /// again (see `locationManagerShouldDisplayHeadingCalibration(_:)`).
  open func dismissHeadingCalibrationDisplay() {
    core.headingState.withLock { $0.calibrationDisplayed = false }
  }

  /// Returns a Boolean value indicating whether the location manager is able to generate
  /// heading-related events: a configured or discovered source can produce headings (an NMEA
  /// device or log with heading sentences, gpsd's ATT).
  open class func headingAvailable() -> Bool {
    HubEnvironment.current.hub.headingAvailable
  }

  /// A Boolean value indicating whether the location manager is able to generate heading events.
  @available(*, deprecated, message: "Use +headingAvailable")
  open var headingAvailable: Bool { core.environment.hub.headingAvailable }

  // MARK: Widgets

  /// A Boolean value that indicates whether a widget is eligible to receive location updates.
  /// Linux has no widgets: always `false`.
  open var isAuthorizedForWidgetUpdates: Bool { false }
}
