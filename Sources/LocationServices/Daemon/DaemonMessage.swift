import Geodesy
import LocationEngine
import LocationModel

/// One message of `locationd`'s protocol, version 1, in either direction (DAEMON.md,
/// "Protocol v1"; `docs/protocol.md`).
///
/// Every message is one JSON object on one line with a `"type"` member; the case names are the
/// `type` values. `client` is the number a process chose for one of its managers (registered with
/// `register`); `id` numbers a control or agent request and its answer.
public enum DaemonMessage: Sendable, Equatable {
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
  case startUpdates(client: Int, request: DaemonUpdateRequest)
  /// A change of `desiredAccuracy`, `distanceFilter`, pausing or activity while running.
  case changeRequest(client: Int, request: DaemonUpdateRequest)
  /// `stopUpdatingLocation`.
  case stopUpdates(client: Int)
  /// `requestLocation`.
  case requestLocation(client: Int, request: DaemonUpdateRequest)
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
  /// The app has handled every pending region event up to and including `sequence`.
  case ack(sequence: Int64)
  /// Asks for the app's regions again, after `regionsChanged`; answered by `regionList`.
  case refreshRegions

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
  /// The answer to a control request.
  case reply(id: Int, DaemonReply)

  // MARK: Agent role

  /// Daemon to agent: an app with no decision asks for authorization.
  case authorizationRequest(id: Int, app: String, always: Bool)
  /// Agent to daemon: the user's answer.
  case authorizationDecision(id: Int, status: DaemonAgentDecision, accuracy: DaemonAccuracy)

  /// The `type` member of this message.
  public var type: String {
    switch self {
    case .hello: "hello"
    case .welcome: "welcome"
    case .error: "error"
    case .ping: "ping"
    case .register: "register"
    case .unregister: "unregister"
    case .startUpdates: "startUpdates"
    case .changeRequest: "changeRequest"
    case .stopUpdates: "stopUpdates"
    case .requestLocation: "requestLocation"
    case .startSignificantChanges: "startSignificantChanges"
    case .stopSignificantChanges: "stopSignificantChanges"
    case .requestAuthorization: "requestAuthorization"
    case .addRegion: "addRegion"
    case .removeRegion: "removeRegion"
    case .requestRegionState: "requestRegionState"
    case .startHeading: "startHeading"
    case .changeHeading: "changeHeading"
    case .stopHeading: "stopHeading"
    case .allowDeferred: "allowDeferred"
    case .disallowDeferred: "disallowDeferred"
    case .ack: "ack"
    case .refreshRegions: "refreshRegions"
    case .locations: "locations"
    case .authorization: "authorization"
    case .regionEvents: "regionEvents"
    case .regionStarted: "regionStarted"
    case .regionsChanged: "regionsChanged"
    case .regionList: "regionList"
    case .regionFailed: "regionFailed"
    case .regionState: "regionState"
    case .heading: "heading"
    case .headingInterference: "headingInterference"
    case .deferredFinished: "deferredFinished"
    case .paused: "paused"
    case .resumed: "resumed"
    case .status: "status"
    case .apps: "apps"
    case .authorize: "authorize"
    case .regions: "regions"
    case .sources: "sources"
    case .services: "services"
    case .reply: "reply"
    case .authorizationRequest: "authorizationRequest"
    case .authorizationDecision: "authorizationDecision"
    }
  }
}

/// What a connection is for, named in `hello`.
public enum DaemonRole: String, Sendable, Equatable, CaseIterable {
  /// A process using `CLLocationManager`: its identity is its executable.
  case app
  /// `locationctl`: status and settings (the daemon's uid or root only).
  case control
  /// The authorization agent: answers requests from apps with no decision (the daemon's uid or
  /// root only).
  case agent
}

/// The daemon's answer to `hello`.
public struct DaemonWelcome: Sendable, Equatable {
  /// The protocol version the daemon speaks.
  public var version: Int
  /// The app identifier the daemon gave this peer (from its executable; empty for control and
  /// agent roles).
  public var app: String
  /// The peer's uid as the kernel reported it.
  public var uid: Int
  /// The app's authorization now.
  public var authorization: AuthorizationSnapshot
  /// The app's monitored regions, every group, with their states.
  public var regions: [DaemonRegionEntry]
  /// The largest region radius accepted, metres (`maximumRegionMonitoringDistance`).
  public var maximumRegionRadius: Double
  /// Whether a configured source can produce headings (`headingAvailable()`).
  public var headingAvailable: Bool
  /// Whether significant-change monitoring can run
  /// (`significantLocationChangeMonitoringAvailable()`); false when absent (an older daemon).
  public var significantChangeAvailable: Bool

  /// Creates a welcome.
  /// - Parameters:
  ///   - version: The protocol version.
  ///   - app: The app identifier given to the peer.
  ///   - uid: The peer's uid.
  ///   - authorization: The app's authorization.
  ///   - regions: The app's regions.
  ///   - maximumRegionRadius: The largest radius accepted, metres.
  ///   - headingAvailable: Whether headings can be produced.
  ///   - significantChangeAvailable: Whether significant-change monitoring can run.
  public init(
    version: Int = DaemonProtocol.version, app: String, uid: Int,
    authorization: AuthorizationSnapshot, regions: [DaemonRegionEntry] = [],
    maximumRegionRadius: Double, headingAvailable: Bool, significantChangeAvailable: Bool = false
  ) {
    self.version = version
    self.app = app
    self.uid = uid
    self.authorization = authorization
    self.regions = regions
    self.maximumRegionRadius = maximumRegionRadius
    self.headingAvailable = headingAvailable
    self.significantChangeAvailable = significantChangeAvailable
  }
}

/// An `error` message.
public struct DaemonErrorMessage: Sendable, Equatable {
  /// The code.
  public var code: DaemonErrorCode
  /// A sentence for people (may be empty).
  public var message: String
  /// The control or agent request it answers, if any.
  public var id: Int?
  /// The manager it is for (delivery errors), if any.
  public var client: Int?

  /// Creates an error message.
  /// - Parameters:
  ///   - code: The code.
  ///   - message: A sentence for people.
  ///   - id: The request it answers.
  ///   - client: The manager it is for.
  public init(code: DaemonErrorCode, message: String, id: Int? = nil, client: Int? = nil) {
    self.code = code
    self.message = message
    self.id = id
    self.client = client
  }

  /// The message for a protocol error.
  /// - Parameter error: The error.
  public init(_ error: DaemonProtocolError) {
    self.init(code: error.code, message: error.message, id: error.id)
  }
}

/// What a manager asks of location updates: the engine's `UpdateRequest` on the wire.
public struct DaemonUpdateRequest: Sendable, Equatable {
  /// Wanted accuracy in metres; negative values are Apple's "best" constants.
  public var desiredAccuracy: Double
  /// Minimum distance in metres between locations; zero or negative: every fix.
  public var distanceFilter: Double
  /// `pausesLocationUpdatesAutomatically`.
  public var pausesAutomatically: Bool
  /// `activityType`.
  public var activity: DaemonActivity

  /// Creates a request; the defaults are Apple's.
  /// - Parameters:
  ///   - desiredAccuracy: Metres; negative for "best".
  ///   - distanceFilter: Metres; negative for none.
  ///   - pausesAutomatically: Whether updates pause automatically (Apple's default: true).
  ///   - activity: The activity type.
  public init(
    desiredAccuracy: Double = -1, distanceFilter: Double = -1, pausesAutomatically: Bool = true,
    activity: DaemonActivity = .other
  ) {
    self.desiredAccuracy = desiredAccuracy
    self.distanceFilter = distanceFilter
    self.pausesAutomatically = pausesAutomatically
    self.activity = activity
  }

  /// The engine's request.
  public var updateRequest: UpdateRequest {
    UpdateRequest(
      desiredAccuracy: desiredAccuracy, distanceFilter: distanceFilter,
      pausesAutomatically: pausesAutomatically, activity: activity.engineActivity)
  }
}

/// `CLActivityType` on the wire.
public enum DaemonActivity: String, Sendable, Equatable, CaseIterable {
  /// `.other`.
  case other
  /// `.automotiveNavigation`.
  case automotiveNavigation
  /// `.fitness`.
  case fitness
  /// `.otherNavigation`.
  case otherNavigation
  /// `.airborne`.
  case airborne

  /// The engine's activity.
  public var engineActivity: ActivityType {
    switch self {
    case .other: .other
    case .automotiveNavigation: .automotiveNavigation
    case .fitness: .fitness
    case .otherNavigation: .otherNavigation
    case .airborne: .airborne
    }
  }
}

/// A region event with the time it happened (the engine's `RegionEvent` has none; the daemon
/// stamps it with its wall clock).
///
/// Wire form: `{"identifier":..,"kind":"enter"|"exit"|"determined","state":..,"date":..,
/// "notifyOnEntry":..,"notifyOnExit":..,"region":{..}}`; `state` is `inside` for an entry and
/// `outside` for an exit; the two flags are optional on decode (default true). `region`, the
/// region itself, is optional: the daemon sends it so that a process whose copy of the app's
/// regions is out of date (another process added the region) can still name it.
public struct DaemonRegionEvent: Sendable, Equatable {
  /// The event.
  public var event: RegionEvent
  /// When it happened: seconds since 1970.
  public var date: Double
  /// The region, when the sender knows it.
  public var region: RegionSpec?

  /// Creates an event.
  /// - Parameters:
  ///   - event: The engine's event.
  ///   - date: Seconds since 1970.
  ///   - region: The region, if known.
  public init(_ event: RegionEvent, date: Double, region: RegionSpec? = nil) {
    self.event = event
    self.event.date = nil
    self.date = date
    self.region = region
  }

  /// The event with its `date` set (`RegionEvent.date`).
  public var datedEvent: RegionEvent {
    var dated = event
    dated.date = date
    return dated
  }
}

/// A monitored region with its group and state (welcome, `regions` replies).
public struct DaemonRegionEntry: Sendable, Equatable {
  /// `manager` or `monitor:NAME`.
  public var group: String
  /// The region.
  public var region: RegionSpec
  /// Its state.
  public var state: RegionState

  /// Creates an entry.
  /// - Parameters:
  ///   - group: The group.
  ///   - region: The region.
  ///   - state: Its state.
  public init(group: String, region: RegionSpec, state: RegionState) {
    self.group = group
    self.region = region
    self.state = state
  }
}

/// What `authorize` sets (`locationctl authorize APP ...`).
public enum DaemonAuthorizationSetting: String, Sendable, Equatable, CaseIterable {
  /// `authorizedAlways`.
  case always
  /// `authorizedWhenInUse`.
  case whenInUse
  /// `denied`.
  case denied
  /// Forget the decision: `notDetermined`, the app will be asked again.
  case reset
}

/// What an agent decides.
public enum DaemonAgentDecision: String, Sendable, Equatable, CaseIterable {
  /// `authorizedAlways`.
  case always
  /// `authorizedWhenInUse`.
  case whenInUse
  /// `authorizedWhenInUse` until the app's last connection closes, then `notDetermined` again.
  case once
  /// `denied`.
  case denied
}

/// Accuracy authorization on the wire.
public enum DaemonAccuracy: String, Sendable, Equatable, CaseIterable {
  /// `CLAccuracyAuthorization.fullAccuracy` (0).
  case full
  /// `CLAccuracyAuthorization.reducedAccuracy` (1).
  case reduced

  /// The accuracy authorization it stands for.
  public var authorization: AccuracyAuthorization {
    switch self {
    case .full: return .fullAccuracy
    case .reduced: return .reducedAccuracy
    }
  }
}

/// The body of a control `reply`.
public enum DaemonReply: Sendable, Equatable {
  /// The request was carried out (`authorize`, `services`); nothing to report.
  case done
  /// `status`.
  case status(DaemonStatus)
  /// `apps`.
  case apps([DaemonAppInfo])
  /// `regions`.
  case regions([DaemonRegionEntry])
  /// `sources`.
  case sources([DaemonSourceStatus])
}

/// The daemon's state for `status`.
public struct DaemonStatus: Sendable, Equatable {
  /// The sources.
  public var sources: [DaemonSourceStatus]
  /// The connected app processes.
  public var clients: [DaemonClientInfo]
  /// The app identifiers with a live hub (connected, or monitoring regions).
  public var apps: [String]
  /// The global location services switch.
  public var servicesEnabled: Bool

  /// Creates a status.
  /// - Parameters:
  ///   - sources: The sources.
  ///   - clients: The connected app processes.
  ///   - apps: The active apps.
  ///   - servicesEnabled: The services switch.
  public init(
    sources: [DaemonSourceStatus], clients: [DaemonClientInfo], apps: [String],
    servicesEnabled: Bool
  ) {
    self.sources = sources
    self.clients = clients
    self.apps = apps
    self.servicesEnabled = servicesEnabled
  }
}

/// One source as `status` and `sources` report it.
public struct DaemonSourceStatus: Sendable, Equatable {
  /// The source's URL.
  public var url: String
  /// Whether it runs now.
  public var running: Bool
  /// Its power cost: `low`, `medium` or `high` (the source descriptor's).
  public var power: String
  /// Seconds it has run since the daemon started.
  public var onSeconds: Double
  /// How many app hubs hold it now, if known.
  public var users: Int?
  /// The last failure's message, if it is failing.
  public var failure: String?

  /// Creates a source status.
  /// - Parameters:
  ///   - url: The URL.
  ///   - running: Whether it runs.
  ///   - power: Its power cost.
  ///   - onSeconds: Seconds run.
  ///   - users: Hubs holding it.
  ///   - failure: The last failure.
  public init(
    url: String, running: Bool, power: String, onSeconds: Double, users: Int? = nil,
    failure: String? = nil
  ) {
    self.url = url
    self.running = running
    self.power = power
    self.onSeconds = onSeconds
    self.users = users
    self.failure = failure
  }
}

/// One connected process as `status` reports it.
public struct DaemonClientInfo: Sendable, Equatable {
  /// Its app identifier.
  public var app: String
  /// Its pid.
  public var pid: Int
  /// Its uid.
  public var uid: Int
  /// How many managers it registered.
  public var managers: Int
  /// Its role.
  public var role: DaemonRole

  /// Creates a client entry.
  /// - Parameters:
  ///   - app: The app identifier.
  ///   - pid: The pid.
  ///   - uid: The uid.
  ///   - managers: Registered managers.
  ///   - role: The role.
  public init(app: String, pid: Int, uid: Int, managers: Int, role: DaemonRole = .app) {
    self.app = app
    self.pid = pid
    self.uid = uid
    self.managers = managers
    self.role = role
  }
}

/// One app as `apps` reports it.
public struct DaemonAppInfo: Sendable, Equatable {
  /// The app identifier.
  public var app: String
  /// Its authorization.
  public var authorization: AuthorizationSnapshot
  /// How many regions it monitors.
  public var regions: Int
  /// How many events wait for it.
  public var pendingEvents: Int
  /// Whether a process of it is connected.
  public var connected: Bool

  /// Creates an app entry.
  /// - Parameters:
  ///   - app: The identifier.
  ///   - authorization: Its authorization.
  ///   - regions: Its region count.
  ///   - pendingEvents: Its pending events.
  ///   - connected: Whether it is connected.
  public init(
    app: String, authorization: AuthorizationSnapshot, regions: Int, pendingEvents: Int,
    connected: Bool
  ) {
    self.app = app
    self.authorization = authorization
    self.regions = regions
    self.pendingEvents = pendingEvents
    self.connected = connected
  }
}
