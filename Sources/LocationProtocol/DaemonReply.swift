import LocationModel

/// The body of a control `reply`.
package enum DaemonReply: Sendable, Equatable {
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
  /// `wifi`.
  case wifi(DaemonWifiStatus)
  /// `history`: one page of the track history.
  case history(DaemonHistoryPage)
}

/// The daemon's state for `status`.
package struct DaemonStatus: Sendable, Equatable {
  /// The sources.
  package var sources: [DaemonSourceStatus]
  /// The connected app processes.
  package var clients: [DaemonClientInfo]
  /// The app identifiers with a live hub (connected, or monitoring regions).
  package var apps: [String]
  /// The global location services switch.
  package var servicesEnabled: Bool
  /// The store's condition (nil from a daemon that does not say).
  package var store: DaemonStoreStatus?
  /// The MQTT publisher's state (nil when `[publish]` is not configured).
  package var publish: DaemonPublishStatus?
  /// The track history (nil when `history` is off).
  package var history: DaemonHistoryStatus?

  /// Creates a status.
  /// - Parameters:
  ///   - sources: The sources.
  ///   - clients: The connected app processes.
  ///   - apps: The active apps.
  ///   - servicesEnabled: The services switch.
  package init(
    sources: [DaemonSourceStatus], clients: [DaemonClientInfo], apps: [String],
    servicesEnabled: Bool, store: DaemonStoreStatus? = nil, publish: DaemonPublishStatus? = nil,
    history: DaemonHistoryStatus? = nil
  ) {
    self.sources = sources
    self.clients = clients
    self.apps = apps
    self.servicesEnabled = servicesEnabled
    self.store = store
    self.publish = publish
    self.history = history
  }
}

/// The track history as `status` reports it (`history = yes`, issue 18).
package struct DaemonHistoryStatus: Sendable, Equatable {
  /// Points kept (-1: the store cannot say).
  package var points: Int
  /// The oldest and newest point's times, seconds since 1970 (nil when there is none).
  package var oldest: Double?
  package var newest: Double?
  /// Days a point is kept (`history-days`).
  package var days: Double

  /// Creates a history status.
  package init(points: Int, oldest: Double? = nil, newest: Double? = nil, days: Double) {
    self.points = points
    self.oldest = oldest
    self.newest = newest
    self.days = days
  }
}

/// The MQTT publisher as `status` reports it (`[publish]`, issue 18).
package struct DaemonPublishStatus: Sendable, Equatable {
  /// The broker, `host:port`.
  package var broker: String
  /// The topic.
  package var topic: String
  /// Whether the connection is up.
  package var connected: Bool
  /// Messages in the outbox, not acknowledged yet (-1: the store cannot say).
  package var depth: Int
  /// Messages acknowledged since the daemon started.
  package var acknowledged: Int
  /// Positions thinned from a full outbox since the daemon started.
  package var thinned: Int
  /// The last problem (a refusal of the credentials, a lost connection), if any.
  package var lastError: String?

  /// Creates a publisher status.
  package init(
    broker: String, topic: String, connected: Bool, depth: Int, acknowledged: Int = 0,
    thinned: Int = 0, lastError: String? = nil
  ) {
    self.broker = broker
    self.topic = topic
    self.connected = connected
    self.depth = depth
    self.acknowledged = acknowledged
    self.thinned = thinned
    self.lastError = lastError
  }
}

/// The store as `status` reports it (README, "When the store fails").
package struct DaemonStoreStatus: Sendable, Equatable {
  /// Whether the store takes writes.
  package enum State: String, Sendable, Equatable, CaseIterable {
    /// Transactions commit.
    case ok
    /// Transactions fail (`cause`, since `since`): region events are held and retried.
    case failing
    /// The file cannot be written (`cause`): state is kept in memory and the file tried again.
    case memory
  }

  /// The database file.
  package var path: String
  /// Its condition.
  package var state: State
  /// Why it is not `ok` (SQLite's message, with the system's error).
  package var cause: String?
  /// Since when it is not `ok`, seconds since 1970.
  package var since: Double?
  /// Writes the daemon's hubs hold until the store takes them (region evaluations, removals,
  /// decisions).
  package var held: Int

  /// Creates a store status.
  package init(
    path: String, state: State, cause: String? = nil, since: Double? = nil, held: Int = 0
  ) {
    self.path = path
    self.state = state
    self.cause = cause
    self.since = since
    self.held = held
  }
}

/// One source as `status` and `sources` report it.
package struct DaemonSourceStatus: Sendable, Equatable {
  /// The source's URL.
  package var url: String
  /// Whether it runs now.
  package var running: Bool
  /// Its power cost: `low`, `medium` or `high` (the source descriptor's).
  package var power: String
  /// Seconds it has run since the daemon started.
  package var onSeconds: Double
  /// How many app hubs hold it now, if known.
  package var users: Int?
  /// The last failure's message, if it is failing.
  package var failure: String?

  /// Creates a source status.
  /// - Parameters:
  ///   - url: The URL.
  ///   - running: Whether it runs.
  ///   - power: Its power cost.
  ///   - onSeconds: Seconds run.
  ///   - users: Hubs holding it.
  ///   - failure: The last failure.
  package init(
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
package struct DaemonClientInfo: Sendable, Equatable {
  /// Its app identifier.
  package var app: String
  /// Its pid.
  package var pid: Int
  /// Its uid.
  package var uid: Int
  /// How many managers it registered.
  package var managers: Int
  /// Its role.
  package var role: DaemonRole

  /// Creates a client entry.
  /// - Parameters:
  ///   - app: The app identifier.
  ///   - pid: The pid.
  ///   - uid: The uid.
  ///   - managers: Registered managers.
  ///   - role: The role.
  package init(app: String, pid: Int, uid: Int, managers: Int, role: DaemonRole = .app) {
    self.app = app
    self.pid = pid
    self.uid = uid
    self.managers = managers
    self.role = role
  }
}

/// One app as `apps` reports it.
package struct DaemonAppInfo: Sendable, Equatable {
  /// The app identifier.
  package var app: String
  /// Its authorization.
  package var authorization: AuthorizationSnapshot
  /// How many regions it monitors.
  package var regions: Int
  /// How many events wait for it.
  package var pendingEvents: Int
  /// Whether a process of it is connected.
  package var connected: Bool
  /// The reason it gave for using location services (`CLLocationManager.purpose`), since the
  /// daemon started; nil when it gave none.
  package var purpose: String?

  /// Creates an app entry.
  /// - Parameters:
  ///   - app: The identifier.
  ///   - authorization: Its authorization.
  ///   - regions: Its region count.
  ///   - pendingEvents: Its pending events.
  ///   - connected: Whether it is connected.
  package init(
    app: String, authorization: AuthorizationSnapshot, regions: Int, pendingEvents: Int,
    connected: Bool, purpose: String? = nil
  ) {
    self.purpose = purpose
    self.app = app
    self.authorization = authorization
    self.regions = regions
    self.pendingEvents = pendingEvents
    self.connected = connected
  }
}
