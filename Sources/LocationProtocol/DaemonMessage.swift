import LocationModel

/// One message of `locationd`'s protocol, version 1, in either direction (`docs/protocol.md`,
/// "Protocol v1"; `docs/protocol.md`).
///
/// Every message is one JSON object on one line with a `"type"` member; the case names are the
/// `type` values. `client` is the number a process chose for one of its managers (registered with
/// `register`); `id` numbers a control or agent request and its answer.
package enum DaemonMessage: Sendable, Equatable {
  // MARK: Handshake

  /// Peer to daemon, first: the protocol version and the role. Any `app` the peer claims is
  /// ignored: identity comes from the kernel.
  case hello(version: Int, role: DaemonRole)
  /// Daemon to peer: the handshake's answer.
  case welcome(DaemonWelcome)
  /// An error: a protocol error (`id` set when it answers a control request) or a delivery error
  /// for one manager (`client` set).
  case error(DaemonErrorMessage)
  /// Peer to daemon, any role after `hello`: answered by an empty `reply` with the same `id` once
  /// every message sent before it has been handled (a barrier for tests and a liveness check).
  /// Added after the first version of protocol 1; a daemon without it answers `unknownType`.
  case ping(id: Int)

  // MARK: App requests

  /// Adds a manager under the process's number `client`.
  case register(client: Int)
  /// Removes a manager; what it asked for ends.
  case unregister(client: Int)
  /// `startUpdatingLocation`.
  case startUpdates(client: Int, request: UpdateRequest)
  /// A change of `desiredAccuracy`, `distanceFilter`, pausing or activity while running.
  case changeRequest(client: Int, request: UpdateRequest)
  /// `stopUpdatingLocation`.
  case stopUpdates(client: Int)
  /// `requestLocation`.
  case requestLocation(client: Int, request: UpdateRequest)
  /// `startMonitoringSignificantLocationChanges`.
  case startSignificantChanges(client: Int)
  /// `stopMonitoringSignificantLocationChanges`.
  case stopSignificantChanges(client: Int)
  /// `requestWhenInUseAuthorization` (`always` false) or `requestAlwaysAuthorization`.
  case requestAuthorization(always: Bool)
  /// Monitors a region in a group (`manager` or `monitor:NAME`), starting in `initialState`.
  case addRegion(client: Int, group: String, region: RegionSpec, initialState: RegionState)
  /// Stops monitoring a region.
  case removeRegion(group: String, identifier: String)
  /// `requestState(for:)`.
  case requestRegionState(client: Int, group: String, identifier: String)
  /// `startUpdatingHeading` with the manager's `headingFilter` (degrees) and `headingOrientation`
  /// (on the wire, the `CLDeviceOrientation` raw value; one Apple does not define is `unknown`).
  case startHeading(client: Int, filter: Double, orientation: HeadingOrientation)
  /// A change of `headingFilter` or `headingOrientation`.
  case changeHeading(client: Int, filter: Double, orientation: HeadingOrientation)
  /// `stopUpdatingHeading`.
  case stopHeading(client: Int)
  /// `allowDeferredLocationUpdates(untilTraveled:timeout:)`.
  case allowDeferred(client: Int, distance: Double, timeout: Double)
  /// `disallowDeferredLocationUpdates()`.
  case disallowDeferred(client: Int)
  /// `startMonitoringVisits()`: visits are monitored for the app until `stopVisits`, also while it
  /// is away; `client` (0: none) hears `denied` if the app may not have locations. Added after the
  /// first version of protocol 1; a daemon without it answers `unknownType`.
  case startVisits(client: Int)
  /// `stopMonitoringVisits()`, for the app.
  case stopVisits
  /// The app has handled every pending event (region events, visits) up to and including
  /// `sequence`.
  case ack(sequence: Int64)
  /// Asks for the app's regions again, after `regionsChanged`; answered by `regionList`.
  case refreshRegions
  /// The app's reason for using location services (`CLLocationManager.purpose`), which the agent
  /// shows when it asks the user and `locationctl apps` lists; empty: none. At most
  /// `DaemonProtocol.maximumPurposeBytes`, without control or format characters.
  case purpose(text: String)
  /// `requestTemporaryFullAccuracyAuthorization(withPurposeKey:)`: answered by
  /// `temporaryFullAccuracyResult` with the same `id` (a number the process chose). `purposeKey`
  /// is at most `DaemonProtocol.maximumPurposeBytes`, without control or format characters.
  case requestTemporaryFullAccuracy(id: Int, purposeKey: String)
  /// `startRangingBeacons(satisfying:)`: the manager hears `beacons` about once a second, or
  /// `rangingFailed`. Added after the first version of protocol 1.
  case startRanging(client: Int, constraint: BeaconConstraint)
  /// `stopRangingBeacons(satisfying:)`.
  case stopRanging(client: Int, constraint: BeaconConstraint)

  // MARK: Deliveries to an app

  /// New locations for a manager, oldest first.
  case locations(client: Int, [Fix])
  /// The app's authorization changed (or is told for the first time); for every manager.
  case authorization(AuthorizationSnapshot)
  /// Regions of a group changed state; for every manager. `sequence` is set on a pending event
  /// kept for the app while it was away, to be acknowledged with `ack`.
  case regionEvents(group: String, events: [DaemonRegionEvent], sequence: Int64?)
  /// A region this manager asked for is now monitored.
  case regionStarted(client: Int, group: String, region: RegionSpec)
  /// Another connection of the app added or removed regions since this connection's copy of them
  /// (the welcome's, or the last `regionList`) was made. Sent once until the connection asks
  /// again (`refreshRegions`), so a process that never looks costs one line, however many
  /// regions change.
  case regionsChanged
  /// The answer to `refreshRegions`: the app's regions, every group, with their states.
  case regionList([DaemonRegionEntry])
  /// A region this manager asked for cannot be monitored.
  case regionFailed(client: Int, group: String, identifier: String, failure: RegionFailure)
  /// The answer to this manager's `requestRegionState`.
  case regionState(client: Int, group: String, event: DaemonRegionEvent)
  /// A heading for this manager.
  case heading(client: Int, DeliveredHeading)
  /// Magnetic interference for this manager.
  case headingInterference(client: Int, HeadingInterference)
  /// This manager's deferred updates finished: nil when the distance or timeout was reached, else
  /// the `CLError.Code` raw value (11 to 15).
  case deferredFinished(client: Int, code: Int?)
  /// Location updates of this manager were paused automatically.
  case paused(client: Int)
  /// Location updates of this manager resumed after a pause.
  case resumed(client: Int)
  /// A visit began or ended; for every manager. `sequence` is set when the daemon keeps it for the
  /// app until acknowledged with `ack` (always, so that a visit reaches the app exactly once).
  case visit(Visit, sequence: Int64?)
  /// The answer to `requestTemporaryFullAccuracy`: `declined` is nil when a person was asked (the
  /// accuracy they chose follows as an `authorization` delivery, before this), else why no one was
  /// (Apple's `CLError.promptDeclined`).
  case temporaryFullAccuracyResult(id: Int, declined: String?)
  /// The beacons of a constraint this manager ranges, closest first.
  case beacons(client: Int, constraint: BeaconConstraint, beacons: [RangedBeacon])
  /// This manager's ranging of a constraint failed and ended.
  case rangingFailed(client: Int, constraint: BeaconConstraint, reason: DaemonRangingFailure)

  // MARK: Control role

  /// Sources, clients, apps and the services switch.
  case status(id: Int)
  /// Every app the daemon knows.
  case apps(id: Int)
  /// Sets an app's authorization; its managers are told at once.
  case authorize(id: Int, app: String, status: DaemonAuthorizationSetting, accuracy: DaemonAccuracy)
  /// The regions of one app.
  case regions(id: Int, app: String)
  /// The sources and their state.
  case sources(id: Int)
  /// Turns the global location services switch on or off.
  case services(id: Int, enabled: Bool)
  /// What the daemon learned of Wi-Fi; with `forget`, forgets it first. Answered by a `wifi`
  /// reply. Added later in version 1.
  case wifi(id: Int, forget: Bool)
  /// Adds imported access points the daemon does not know yet (at most
  /// `DaemonImportedAccessPoint.maximumPerMessage`); answered by a `wifi` reply with `imported`.
  case wifiImport(id: Int, accessPoints: [DaemonImportedAccessPoint])
  /// A page of the device's track history (`history = yes`), answered by a `history` reply; an
  /// `unsupported` error when the history is off. Added later in version 1.
  case history(id: Int, query: DaemonHistoryQuery)
  /// The answer to a control request.
  case reply(id: Int, DaemonReply)

  // MARK: Agent role

  /// Daemon to agent: an app with no decision asks for authorization.
  case authorizationRequest(id: Int, app: String, always: Bool, purpose: String?)
  /// Daemon to agent: an authorized app with reduced accuracy asks for full accuracy while it is
  /// in use, for the reason its `purposeKey` names. Answered by `authorizationDecision`: `accuracy`
  /// `full` allows it; `reduced`, or `status` `denied`, does not.
  case temporaryFullAccuracyRequest(id: Int, app: String, purposeKey: String, purpose: String?)
  /// Agent to daemon: the user's answer.
  case authorizationDecision(id: Int, status: DaemonAgentDecision, accuracy: DaemonAccuracy)

  /// The `type` member of this message.
  package var type: String { kind.rawValue }
}
