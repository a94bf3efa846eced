import Geodesy
import LocationEngine
import LocationModel
import LocationSources

/// What the public layer (`CLLocationManager`, `CLMonitor`, `CLLocationUpdate.liveUpdates`) asks of
/// the location runtime: the in-process `LocationHub` (embedded mode) or a `DaemonClient` that
/// speaks to `locationd`.
///
/// Both behave the same for the caller: clients are registered and told the app's authorization at
/// once, requests are handled in the order they were made, deliveries reach each client in order
/// (`HubClient.hub(_:deliver:)`, never on the caller's stack for a live service), and the
/// synchronous getters answer from state kept locally (for a daemon client, the mirror of what the
/// daemon last said).
package protocol LocationService: AnyObject, Sendable {
  /// The clock the service's timestamps and deadlines come from.
  var clock: any HubClock { get }

  /// Adds a client; it is told the current authorization at once.
  /// - Parameter client: the consumer of the deliveries for this client.
  /// - Returns: the client's identifier, used in every later request.
  func register(_ client: any HubClient) -> ClientID

  /// Removes a client; what it asked for ends.
  /// - Parameter id: an identifier returned by `register(_:)`.
  func unregister(_ id: ClientID)

  /// Hands a client request (an engine event) to the runtime, in order.
  /// - Parameter event: a request naming a registered client (start, change or stop updates,
  ///   heading, deferral, ...).
  func send(_ event: EngineEvent)

  /// The app's authorization now.
  var authorization: AuthorizationSnapshot { get }

  /// Asks for authorization (`requestWhenInUseAuthorization` / `requestAlwaysAuthorization`).
  /// - Parameter always: whether the app asks for always authorization.
  func requestAuthorization(always: Bool)

  /// The app's reason for using location services (`CLLocationManager.purpose`; nil: none),
  /// which `locationd`'s agent shows when it asks the user.
  func setPurpose(_ text: String?)

  /// Asks for full accuracy while the app is in use
  /// (`requestTemporaryFullAccuracyAuthorization(withPurposeKey:)`).
  /// - Parameters:
  ///   - purposeKey: the app's key for the reason, shown to the person asked.
  ///   - completion: nil when a person was asked (the accuracy they chose has been delivered as
  ///     `.authorization` by then), else why no one was; called once, on no particular thread.
  func requestTemporaryFullAccuracy(
    purposeKey: String, completion: @escaping @Sendable (String?) -> Void)

  /// Sets the app's authorization (tests and tools; a daemon decides for its clients itself).
  /// - Parameter snapshot: the new authorization.
  func setAuthorization(_ snapshot: AuthorizationSnapshot)

  /// Starts location updates for a client, asking for when-in-use authorization first when the app
  /// has no decision yet.
  /// - Parameters:
  ///   - id: the client.
  ///   - request: its accuracy and distance filter.
  func startUpdates(_ id: ClientID, _ request: UpdateRequest)

  /// Asks for one location for a client (`requestLocation`).
  /// - Parameters:
  ///   - id: the client.
  ///   - request: its accuracy and distance filter.
  func requestLocation(_ id: ClientID, _ request: UpdateRequest)

  /// Starts significant-change monitoring for a client, asking for always authorization first when
  /// the app has no decision yet.
  /// - Parameter id: the client.
  func startSignificantChanges(_ id: ClientID)

  /// Whether significant-change monitoring can run (some location source exists).
  var significantChangeAvailable: Bool { get }

  /// Starts visit monitoring for the app (every client hears its visits), asking for always
  /// authorization first when the app has no decision yet.
  /// - Parameter requester: the client that hears `denied` if the app may not have locations.
  func startVisits(requester: ClientID?)

  /// Deferred updates for a client (`allowDeferredLocationUpdates(untilTraveled:timeout:)`).
  /// - Parameters:
  ///   - id: the client.
  ///   - distance: metres to travel before the batch is delivered.
  ///   - timeout: seconds before the batch is delivered.
  func allowDeferred(_ id: ClientID, distance: Double, timeout: Double)

  /// Monitors a region in a group for the app, replacing any of the same identifier.
  /// - Parameters:
  ///   - spec: the region.
  ///   - group: `manager` or `monitor:NAME`.
  ///   - initialState: the state assumed until a decisive fix.
  ///   - requester: the client that hears `regionStarted` or `regionFailed`.
  func addRegion(
    _ spec: RegionSpec, group: String, initialState: RegionState, requester: ClientID?)

  /// Stops monitoring a region.
  /// - Parameters:
  ///   - identifier: the region's identifier.
  ///   - group: its group.
  func removeRegion(identifier: String, group: String)

  /// Asks for a region's state; `requester` hears `regionState`.
  /// - Parameters:
  ///   - identifier: the region's identifier.
  ///   - group: its group.
  ///   - requester: the client that hears the answer.
  func requestRegionState(identifier: String, group: String, requester: ClientID)

  /// The regions of a group now, with their states.
  /// - Parameter group: `manager` or `monitor:NAME`.
  /// - Returns: the group's regions.
  func regions(group: String) -> [(spec: RegionSpec, state: RegionState)]

  /// One region of a group, if monitored.
  /// - Parameters:
  ///   - identifier: the region's identifier.
  ///   - group: its group.
  /// - Returns: the region and its state, or `nil`.
  func region(identifier: String, group: String) -> (spec: RegionSpec, state: RegionState)?

  /// The largest radius a region may have, in metres.
  var maximumRegionRadius: Double { get }

  /// Whether a source that can produce headings is configured (`headingAvailable()`).
  var headingAvailable: Bool { get }

  /// Starts ranging the beacons of a constraint for a client, asking for when-in-use
  /// authorization first when the app has no decision yet; `stopRanging` is an event (`send`).
  /// - Parameters:
  ///   - id: the client, which hears `beacons` once a second or `rangingFailed`.
  ///   - constraint: the beacons to range.
  func startRanging(_ id: ClientID, _ constraint: BeaconConstraint)

  /// Whether beacons can be ranged: a source that hears them is configured and ready (an adapter
  /// present and powered) (`isRangingAvailable()`).
  var beaconsAvailable: Bool { get }
}

extension LocationHub: LocationService {}

extension HubClient {
  /// Default: nothing to rehearse (`HubClient.rehearse`).
  package func rehearse(_ fixes: [Fix]) {}

  /// Forwards a hub's delivery to the client's `LocationService` entry point.
  package func hub(_ hub: LocationHub, deliver delivery: HubDelivery) {
    self.hub(hub as any LocationService, deliver: delivery)
  }

  /// Forwards a delivery from a `LocationHub` to the client's `LocationHub` entry point; a delivery
  /// from another service (a `DaemonClient`) is dropped, so clients meant to run under the daemon
  /// implement this method rather than the `LocationHub` one.
  package func hub(_ service: any LocationService, deliver delivery: HubDelivery) {
    if let hub = service as? LocationHub { self.hub(hub, deliver: delivery) }
  }

  /// No region groups: held region events are never given to this client.
  package var regionGroups: Set<String> { [] }
}

extension LocationService {
  /// Default: kept nowhere. In embedded mode nobody is asked (the stored decision or the policy
  /// rules), so the reason has no one to be shown to.
  package func setPurpose(_ text: String?) {}
}
