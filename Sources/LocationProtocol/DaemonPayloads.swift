import LocationModel

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
