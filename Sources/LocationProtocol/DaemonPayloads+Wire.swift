import LocationFormats
import LocationModel

// The field tables of the protocol's own values (`docs/protocol.md`).

extension DaemonRole: WireName {}
extension DaemonAuthorizationSetting: WireName {}
extension DaemonAgentDecision: WireName {}
extension DaemonAccuracy: WireName {}

extension DaemonErrorCode: WireValue {
  /// Any string: a code added later still decodes.
  package static func wireDecode(_ json: JSONValue, key: String, in coder: WireCoder)
    throws(DaemonProtocolError) -> DaemonErrorCode
  {
    DaemonErrorCode(rawValue: try String.wireDecode(json, key: key, in: coder))
  }

  package func wireEncode(into writer: inout JSONWriter) { writer.string(rawValue) }
}

extension DaemonWelcome: WireObject {
  package static var wireBlank: DaemonWelcome {
    DaemonWelcome(
      app: "", uid: -1, authorization: .wireBlank,
      maximumRegionRadius: RegionSpec.defaultMaximumRadius, headingAvailable: false)
  }

  /// Members of the `welcome` message itself.
  package mutating func wire(_ c: inout WireCoder) throws(DaemonProtocolError) {
    try c.field("version", &version)
    try c.field("app", &app, default: "")
    try c.field("uid", &uid, default: -1)
    try c.field("authorization", &authorization)
    try c.field("regions", &regions, default: [])
    try c.field(
      "maximumRegionRadius", &maximumRegionRadius, default: RegionSpec.defaultMaximumRadius)
    try c.field("headingAvailable", &headingAvailable, default: false)
    try c.field("significantChangeAvailable", &significantChangeAvailable, default: false)
    try c.field("beaconsAvailable", &beaconsAvailable, default: false)
  }
}

extension DaemonErrorMessage {
  /// Members of the `error` message itself; `client` and `id` are left out when absent.
  mutating func wire(_ c: inout WireCoder) throws(DaemonProtocolError) {
    try c.omittable("client", &client)
    try c.omittable("id", &id)
    try c.field("code", &code)
    try c.field("message", &message, default: "")
  }
}

extension DaemonRegionEvent: WireObject {
  /// What happened (`kind`).
  private enum Name: String, WireName {
    case enter, exit, determined
  }

  package static var wireBlank: DaemonRegionEvent {
    DaemonRegionEvent(
      RegionEvent(identifier: "", kind: .entered, notifyOnEntry: true, notifyOnExit: true),
      date: 0)
  }

  /// `state` is `inside` for an entry and `outside` for an exit (and required only for a
  /// determination); the region is left out when the sender does not know it.
  package mutating func wire(_ c: inout WireCoder) throws(DaemonProtocolError) {
    var name: Name
    var state: RegionState?
    switch event.kind {
    case .entered:
      name = .enter
      state = .inside
    case .exited:
      name = .exit
      state = .outside
    case .determined(let determined):
      name = .determined
      state = determined
    }
    try c.field("identifier", &event.identifier)
    try c.field("kind", &name)
    try c.optional("state", &state)
    try c.field("date", &date)
    try c.field("notifyOnEntry", &event.notifyOnEntry, default: true)
    try c.field("notifyOnExit", &event.notifyOnExit, default: true)
    try c.omittable("region", &region)
    switch name {
    case .enter: event.kind = .entered
    case .exit: event.kind = .exited
    case .determined:
      guard let state else { throw c.missing("state") }
      event.kind = .determined(state)
    }
  }
}

extension DaemonRegionEntry: WireObject {
  package static var wireBlank: DaemonRegionEntry {
    DaemonRegionEntry(group: "", region: .wireBlank, state: .unknown)
  }

  package mutating func wire(_ c: inout WireCoder) throws(DaemonProtocolError) {
    try c.group(&group)
    try c.field("region", &region)
    try c.field("state", &state, default: .unknown)
  }
}

extension DaemonReply {
  /// The member that carries a reply's body; none for `done`.
  private enum Name: String, CaseIterable {
    case status, apps, regions, sources, wifi, history
  }

  /// Members of the `reply` message after its `id`: the body under its own name, found by which
  /// member is present when decoding.
  mutating func wire(_ c: inout WireCoder) throws(DaemonProtocolError) {
    if c.isDecoding {
      switch Name.allCases.first(where: { c.has($0.rawValue) }) {
      case .status: self = .status(.wireBlank)
      case .apps: self = .apps([])
      case .regions: self = .regions([])
      case .sources: self = .sources([])
      case .wifi: self = .wifi(.wireBlank)
      case .history: self = .history(.wireBlank)
      case nil: self = .done
      }
    }
    switch self {
    case .done:
      break
    case .status(var status):
      try c.field(Name.status.rawValue, &status)
      self = .status(status)
    case .apps(var apps):
      try c.field(Name.apps.rawValue, &apps)
      self = .apps(apps)
    case .regions(var entries):
      try c.field(Name.regions.rawValue, &entries)
      self = .regions(entries)
    case .sources(var sources):
      try c.field(Name.sources.rawValue, &sources)
      self = .sources(sources)
    case .wifi(var wifi):
      try c.field(Name.wifi.rawValue, &wifi)
      self = .wifi(wifi)
    case .history(var page):
      try c.field(Name.history.rawValue, &page)
      self = .history(page)
    }
  }
}

extension DaemonStatus: WireObject {
  package static var wireBlank: DaemonStatus {
    DaemonStatus(sources: [], clients: [], apps: [], servicesEnabled: true)
  }

  package mutating func wire(_ c: inout WireCoder) throws(DaemonProtocolError) {
    try c.field("sources", &sources)
    try c.field("clients", &clients)
    try c.field("apps", &apps)
    try c.field("servicesEnabled", &servicesEnabled, default: true)
    try c.optional("store", &store)
    try c.optional("publish", &publish)
    try c.optional("history", &history)
  }
}

extension DaemonHistoryStatus: WireObject {
  package static var wireBlank: DaemonHistoryStatus { DaemonHistoryStatus(points: 0, days: 0) }

  package mutating func wire(_ c: inout WireCoder) throws(DaemonProtocolError) {
    try c.field("points", &points, default: 0)
    try c.optional("oldest", &oldest)
    try c.optional("newest", &newest)
    try c.field("days", &days, default: 0)
  }
}

extension DaemonPublishStatus: WireObject {
  package static var wireBlank: DaemonPublishStatus {
    DaemonPublishStatus(broker: "", topic: "", connected: false, depth: 0)
  }

  package mutating func wire(_ c: inout WireCoder) throws(DaemonProtocolError) {
    try c.field("broker", &broker)
    try c.field("topic", &topic, default: "")
    try c.field("connected", &connected, default: false)
    try c.field("depth", &depth, default: 0)
    try c.field("acknowledged", &acknowledged, default: 0)
    try c.field("thinned", &thinned, default: 0)
    try c.optional("lastError", &lastError)
  }
}

extension DaemonStoreStatus.State: WireName {}

extension DaemonStoreStatus: WireObject {
  package static var wireBlank: DaemonStoreStatus { DaemonStoreStatus(path: "", state: .ok) }

  package mutating func wire(_ c: inout WireCoder) throws(DaemonProtocolError) {
    try c.field("path", &path)
    try c.field("state", &state)
    try c.optional("cause", &cause)
    try c.optional("since", &since)
    try c.field("held", &held, default: 0)
  }
}

extension DaemonSourceStatus: WireObject {
  package static var wireBlank: DaemonSourceStatus {
    DaemonSourceStatus(url: "", running: false, power: "", onSeconds: 0)
  }

  package mutating func wire(_ c: inout WireCoder) throws(DaemonProtocolError) {
    try c.field("url", &url)
    try c.field("running", &running, default: false)
    try c.field("power", &power, default: "")
    try c.field("onSeconds", &onSeconds, default: 0)
    try c.optional("users", &users)
    try c.optional("failure", &failure)
  }
}

extension DaemonClientInfo: WireObject {
  package static var wireBlank: DaemonClientInfo {
    DaemonClientInfo(app: "", pid: 0, uid: -1, managers: 0)
  }

  package mutating func wire(_ c: inout WireCoder) throws(DaemonProtocolError) {
    try c.field("app", &app)
    try c.field("pid", &pid, default: 0)
    try c.field("uid", &uid, default: -1)
    try c.field("managers", &managers, default: 0)
    try c.field("role", &role, default: .app)
  }
}

extension DaemonAppInfo: WireObject {
  package static var wireBlank: DaemonAppInfo {
    DaemonAppInfo(
      app: "", authorization: .wireBlank, regions: 0, pendingEvents: 0, connected: false)
  }

  package mutating func wire(_ c: inout WireCoder) throws(DaemonProtocolError) {
    try c.field("app", &app)
    try c.field("authorization", &authorization)
    try c.field("regions", &regions, default: 0)
    try c.field("pendingEvents", &pendingEvents, default: 0)
    try c.field("connected", &connected, default: false)
    try c.optional("purpose", &purpose)
  }
}
