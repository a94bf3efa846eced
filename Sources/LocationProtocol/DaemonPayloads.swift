import LocationModel

/// What a connection is for, named in `hello`.
package enum DaemonRole: String, Sendable, Equatable, CaseIterable {
  /// A process using `CLLocationManager`: its identity is its executable.
  case app
  /// `locationctl`: status and settings (the daemon's uid or root only).
  case control
  /// The authorization agent: answers requests from apps with no decision (the daemon's uid or
  /// root only).
  case agent
}

/// The daemon's answer to `hello`.
package struct DaemonWelcome: Sendable, Equatable {
  /// The protocol version the daemon speaks.
  package var version: Int
  /// The app identifier the daemon gave this peer (from its executable; empty for control and
  /// agent roles).
  package var app: String
  /// The peer's uid as the kernel reported it.
  package var uid: Int
  /// The app's authorization now.
  package var authorization: AuthorizationSnapshot
  /// The app's monitored regions, every group, with their states.
  package var regions: [DaemonRegionEntry]
  /// The largest region radius accepted, metres (`maximumRegionMonitoringDistance`).
  package var maximumRegionRadius: Double
  /// Whether a configured source can produce headings (`headingAvailable()`).
  package var headingAvailable: Bool
  /// Whether significant-change monitoring can run
  /// (`significantLocationChangeMonitoringAvailable()`); false when absent (an older daemon).
  package var significantChangeAvailable: Bool
  /// Whether a source that hears beacons is configured and ready (`isRangingAvailable()`);
  /// false when absent (an older daemon).
  package var beaconsAvailable = false

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
  package init(
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
package struct DaemonErrorMessage: Sendable, Equatable {
  /// The code.
  package var code: DaemonErrorCode
  /// A sentence for people (may be empty).
  package var message: String
  /// The control or agent request it answers, if any.
  package var id: Int?
  /// The manager it is for (delivery errors), if any.
  package var client: Int?

  /// Creates an error message.
  /// - Parameters:
  ///   - code: The code.
  ///   - message: A sentence for people.
  ///   - id: The request it answers.
  ///   - client: The manager it is for.
  package init(code: DaemonErrorCode, message: String, id: Int? = nil, client: Int? = nil) {
    self.code = code
    self.message = message
    self.id = id
    self.client = client
  }

  /// The message for a protocol error.
  /// - Parameter error: The error.
  package init(_ error: DaemonProtocolError) {
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
package struct DaemonRegionEvent: Sendable, Equatable {
  /// The event.
  package var event: RegionEvent
  /// When it happened: seconds since 1970.
  package var date: Double
  /// The region, when the sender knows it.
  package var region: RegionSpec?

  /// Creates an event.
  /// - Parameters:
  ///   - event: The engine's event.
  ///   - date: Seconds since 1970.
  ///   - region: The region, if known.
  package init(_ event: RegionEvent, date: Double, region: RegionSpec? = nil) {
    self.event = event
    self.event.date = nil
    self.date = date
    self.region = region
  }

  /// The event with its `date` set (`RegionEvent.date`).
  package var datedEvent: RegionEvent {
    var dated = event
    dated.date = date
    return dated
  }
}

/// A monitored region with its group and state (welcome, `regions` replies).
package struct DaemonRegionEntry: Sendable, Equatable {
  /// `manager` or `monitor:NAME`.
  package var group: String
  /// The region.
  package var region: RegionSpec
  /// Its state.
  package var state: RegionState

  /// Creates an entry.
  /// - Parameters:
  ///   - group: The group.
  ///   - region: The region.
  ///   - state: Its state.
  package init(group: String, region: RegionSpec, state: RegionState) {
    self.group = group
    self.region = region
    self.state = state
  }
}

/// What `authorize` sets (`locationctl authorize APP ...`).
package enum DaemonAuthorizationSetting: String, Sendable, Equatable, CaseIterable {
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
package enum DaemonAgentDecision: String, Sendable, Equatable, CaseIterable {
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
package enum DaemonAccuracy: String, Sendable, Equatable, CaseIterable {
  /// `CLAccuracyAuthorization.fullAccuracy` (0).
  case full
  /// `CLAccuracyAuthorization.reducedAccuracy` (1).
  case reduced

  /// The accuracy authorization it stands for.
  package var authorization: AccuracyAuthorization {
    switch self {
    case .full: return .fullAccuracy
    case .reduced: return .reducedAccuracy
    }
  }
}
