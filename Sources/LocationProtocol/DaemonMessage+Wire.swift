import LocationModel

extension DaemonMessage {
  /// The message types: each case's name is its `type` on the wire.
  package enum Kind: String, Sendable, CaseIterable {
    case hello, welcome, error, ping
    case register, unregister, startUpdates, changeRequest, stopUpdates, requestLocation
    case startSignificantChanges, stopSignificantChanges, requestAuthorization
    case addRegion, removeRegion, requestRegionState
    case startHeading, changeHeading, stopHeading, allowDeferred, disallowDeferred
    case ack, refreshRegions, purpose, startVisits, stopVisits, requestTemporaryFullAccuracy
    case locations, authorization, regionEvents, regionStarted, regionsChanged, regionList
    case regionFailed, regionState, heading, headingInterference, deferredFinished
    case paused, resumed, visit, temporaryFullAccuracyResult
    case startRanging, stopRanging, beacons, rangingFailed, wifi, wifiImport
    case status, apps, authorize, regions, sources, services, history, reply
    case authorizationRequest, authorizationDecision, temporaryFullAccuracyRequest
  }

  /// This message's type.
  package var kind: Kind {
    switch self {
    case .hello: .hello
    case .welcome: .welcome
    case .error: .error
    case .ping: .ping
    case .register: .register
    case .unregister: .unregister
    case .startUpdates: .startUpdates
    case .changeRequest: .changeRequest
    case .stopUpdates: .stopUpdates
    case .requestLocation: .requestLocation
    case .startSignificantChanges: .startSignificantChanges
    case .stopSignificantChanges: .stopSignificantChanges
    case .requestAuthorization: .requestAuthorization
    case .addRegion: .addRegion
    case .removeRegion: .removeRegion
    case .requestRegionState: .requestRegionState
    case .startHeading: .startHeading
    case .changeHeading: .changeHeading
    case .stopHeading: .stopHeading
    case .allowDeferred: .allowDeferred
    case .disallowDeferred: .disallowDeferred
    case .ack: .ack
    case .refreshRegions: .refreshRegions
    case .purpose: .purpose
    case .requestTemporaryFullAccuracy: .requestTemporaryFullAccuracy
    case .temporaryFullAccuracyResult: .temporaryFullAccuracyResult
    case .temporaryFullAccuracyRequest: .temporaryFullAccuracyRequest
    case .startVisits: .startVisits
    case .stopVisits: .stopVisits
    case .visit: .visit
    case .locations: .locations
    case .authorization: .authorization
    case .regionEvents: .regionEvents
    case .regionStarted: .regionStarted
    case .regionsChanged: .regionsChanged
    case .regionList: .regionList
    case .regionFailed: .regionFailed
    case .regionState: .regionState
    case .heading: .heading
    case .headingInterference: .headingInterference
    case .deferredFinished: .deferredFinished
    case .paused: .paused
    case .resumed: .resumed
    case .status: .status
    case .apps: .apps
    case .authorize: .authorize
    case .regions: .regions
    case .sources: .sources
    case .services: .services
    case .reply: .reply
    case .authorizationRequest: .authorizationRequest
    case .authorizationDecision: .authorizationDecision
    case .startRanging: .startRanging
    case .stopRanging: .stopRanging
    case .beacons: .beacons
    case .rangingFailed: .rangingFailed
    case .wifi: .wifi
    case .wifiImport: .wifiImport
    case .history: .history
    }
  }

  /// The message a decoder fills in: every member at the value its field table gives an absent
  /// optional member; required members are always overwritten.
  static func blank(_ kind: Kind) -> DaemonMessage {
    let region = RegionSpec.wireBlank
    switch kind {
    case .hello: return .hello(version: 0, role: .app)
    case .welcome: return .welcome(.wireBlank)
    case .error: return .error(DaemonErrorMessage(code: .malformed, message: ""))
    case .ping: return .ping(id: 0)
    case .register: return .register(client: 0)
    case .unregister: return .unregister(client: 0)
    case .startUpdates: return .startUpdates(client: 0, request: .wireBlank)
    case .changeRequest: return .changeRequest(client: 0, request: .wireBlank)
    case .stopUpdates: return .stopUpdates(client: 0)
    case .requestLocation: return .requestLocation(client: 0, request: .wireBlank)
    case .startSignificantChanges: return .startSignificantChanges(client: 0)
    case .stopSignificantChanges: return .stopSignificantChanges(client: 0)
    case .requestAuthorization: return .requestAuthorization(always: false)
    case .addRegion:
      return .addRegion(client: 0, group: "", region: region, initialState: .unknown)
    case .removeRegion: return .removeRegion(group: "", identifier: "")
    case .requestRegionState: return .requestRegionState(client: 0, group: "", identifier: "")
    case .startHeading: return .startHeading(client: 0, filter: 1, orientation: .portrait)
    case .changeHeading: return .changeHeading(client: 0, filter: 1, orientation: .portrait)
    case .stopHeading: return .stopHeading(client: 0)
    case .allowDeferred: return .allowDeferred(client: 0, distance: 0, timeout: 0)
    case .disallowDeferred: return .disallowDeferred(client: 0)
    case .ack: return .ack(sequence: 0)
    case .refreshRegions: return .refreshRegions
    case .purpose: return .purpose(text: "")
    case .requestTemporaryFullAccuracy: return .requestTemporaryFullAccuracy(id: 0, purposeKey: "")
    case .temporaryFullAccuracyResult: return .temporaryFullAccuracyResult(id: 0, declined: nil)
    case .temporaryFullAccuracyRequest:
      return .temporaryFullAccuracyRequest(id: 0, app: "", purposeKey: "", purpose: nil)
    case .startVisits: return .startVisits(client: 0)
    case .stopVisits: return .stopVisits
    case .visit: return .visit(.wireBlank, sequence: nil)
    case .locations: return .locations(client: 0, [])
    case .authorization: return .authorization(.wireBlank)
    case .regionEvents: return .regionEvents(group: "", events: [], sequence: nil)
    case .regionStarted: return .regionStarted(client: 0, group: "", region: region)
    case .regionsChanged: return .regionsChanged
    case .regionList: return .regionList([])
    case .regionFailed:
      return .regionFailed(client: 0, group: "", identifier: "", failure: .denied)
    case .regionState: return .regionState(client: 0, group: "", event: .wireBlank)
    case .heading: return .heading(client: 0, .wireBlank)
    case .headingInterference:
      return .headingInterference(client: 0, HeadingInterference(measured: 0, expected: nil))
    case .deferredFinished: return .deferredFinished(client: 0, code: nil)
    case .paused: return .paused(client: 0)
    case .resumed: return .resumed(client: 0)
    case .status: return .status(id: 0)
    case .apps: return .apps(id: 0)
    case .authorize: return .authorize(id: 0, app: "", status: .always, accuracy: .full)
    case .regions: return .regions(id: 0, app: "")
    case .sources: return .sources(id: 0)
    case .services: return .services(id: 0, enabled: false)
    case .reply: return .reply(id: 0, .done)
    case .authorizationRequest:
      return .authorizationRequest(id: 0, app: "", always: false, purpose: nil)
    case .authorizationDecision:
      return .authorizationDecision(id: 0, status: .denied, accuracy: .full)
    case .startRanging: return .startRanging(client: 0, constraint: .wireBlank)
    case .stopRanging: return .stopRanging(client: 0, constraint: .wireBlank)
    case .beacons: return .beacons(client: 0, constraint: .wireBlank, beacons: [])
    case .rangingFailed:
      return .rangingFailed(client: 0, constraint: .wireBlank, reason: .unavailable)
    case .wifi: return .wifi(id: 0, forget: false)
    case .wifiImport: return .wifiImport(id: 0, accessPoints: [])
    case .history: return .history(id: 0, query: .wireBlank)
    }
  }

  /// The field table of every message: its members after `type`, in the order they are written.
  ///
  /// Decoding starts from ``blank(_:)`` of the message's kind; each case binds its values,
  /// reads or writes them member by member, and puts them back.
  mutating func wire(_ c: inout WireCoder) throws(DaemonProtocolError) {
    switch self {
    case .hello(var version, var role):
      try c.field("version", &version)
      try c.field("role", &role)
      self = .hello(version: version, role: role)
    case .welcome(var welcome):
      try welcome.wire(&c)
      self = .welcome(welcome)
    case .error(var error):
      try error.wire(&c)
      self = .error(error)
    case .ping(var id):
      try c.field("id", &id)
      self = .ping(id: id)
    case .register(var client):
      try c.field("client", &client)
      self = .register(client: client)
    case .unregister(var client):
      try c.field("client", &client)
      self = .unregister(client: client)
    case .startUpdates(var client, var request):
      try c.field("client", &client)
      try c.field("request", &request, default: .wireBlank)
      self = .startUpdates(client: client, request: request)
    case .changeRequest(var client, var request):
      try c.field("client", &client)
      try c.field("request", &request, default: .wireBlank)
      self = .changeRequest(client: client, request: request)
    case .stopUpdates(var client):
      try c.field("client", &client)
      self = .stopUpdates(client: client)
    case .requestLocation(var client, var request):
      try c.field("client", &client)
      try c.field("request", &request, default: .wireBlank)
      self = .requestLocation(client: client, request: request)
    case .startSignificantChanges(var client):
      try c.field("client", &client)
      self = .startSignificantChanges(client: client)
    case .stopSignificantChanges(var client):
      try c.field("client", &client)
      self = .stopSignificantChanges(client: client)
    case .requestAuthorization(var always):
      try c.field("always", &always, default: false)
      self = .requestAuthorization(always: always)
    case .purpose(var text):
      try c.field("text", &text)
      self = .purpose(text: text)
    case .requestTemporaryFullAccuracy(var id, var purposeKey):
      try c.field("id", &id)
      try c.field("purposeKey", &purposeKey)
      self = .requestTemporaryFullAccuracy(id: id, purposeKey: purposeKey)
    case .temporaryFullAccuracyResult(var id, var declined):
      try c.field("id", &id)
      try c.omittable("declined", &declined)
      self = .temporaryFullAccuracyResult(id: id, declined: declined)
    case .temporaryFullAccuracyRequest(var id, var app, var purposeKey, var purpose):
      try c.field("id", &id)
      try c.field("app", &app)
      try c.field("purposeKey", &purposeKey)
      try c.optional("purpose", &purpose)
      self = .temporaryFullAccuracyRequest(
        id: id, app: app, purposeKey: purposeKey, purpose: purpose)
    case .addRegion(var client, var group, var region, var initialState):
      try c.field("client", &client)
      try c.group(&group)
      try c.field("region", &region)
      try c.field("initialState", &initialState, default: .unknown)
      self = .addRegion(client: client, group: group, region: region, initialState: initialState)
    case .removeRegion(var group, var identifier):
      try c.group(&group)
      try c.field("identifier", &identifier)
      self = .removeRegion(group: group, identifier: identifier)
    case .requestRegionState(var client, var group, var identifier):
      try c.field("client", &client)
      try c.group(&group)
      try c.field("identifier", &identifier)
      self = .requestRegionState(client: client, group: group, identifier: identifier)
    case .startHeading(var client, var filter, var orientation):
      try c.field("client", &client)
      try c.field("filter", &filter, default: 1)
      try c.field("orientation", &orientation, default: .portrait)
      self = .startHeading(client: client, filter: filter, orientation: orientation)
    case .changeHeading(var client, var filter, var orientation):
      try c.field("client", &client)
      try c.field("filter", &filter, default: 1)
      try c.field("orientation", &orientation, default: .portrait)
      self = .changeHeading(client: client, filter: filter, orientation: orientation)
    case .stopHeading(var client):
      try c.field("client", &client)
      self = .stopHeading(client: client)
    case .allowDeferred(var client, var distance, var timeout):
      try c.field("client", &client)
      try c.field("distance", &distance)
      try c.field("timeout", &timeout)
      self = .allowDeferred(client: client, distance: distance, timeout: timeout)
    case .disallowDeferred(var client):
      try c.field("client", &client)
      self = .disallowDeferred(client: client)
    case .startRanging(var client, var constraint):
      try c.field("client", &client)
      try c.field("constraint", &constraint)
      self = .startRanging(client: client, constraint: constraint)
    case .stopRanging(var client, var constraint):
      try c.field("client", &client)
      try c.field("constraint", &constraint)
      self = .stopRanging(client: client, constraint: constraint)
    case .beacons(var client, var constraint, var beacons):
      try c.field("client", &client)
      try c.field("constraint", &constraint)
      try c.field("beacons", &beacons, default: [])
      self = .beacons(client: client, constraint: constraint, beacons: beacons)
    case .rangingFailed(var client, var constraint, var reason):
      try c.field("client", &client)
      try c.field("constraint", &constraint)
      try c.field("reason", &reason, default: .unavailable)
      self = .rangingFailed(client: client, constraint: constraint, reason: reason)
    case .ack(var sequence):
      try c.field("sequence", &sequence)
      self = .ack(sequence: sequence)
    case .refreshRegions, .regionsChanged, .stopVisits:
      break
    case .startVisits(var client):
      try c.field("client", &client, default: 0)
      self = .startVisits(client: client)
    case .visit(var visit, var sequence):
      try c.field("visit", &visit)
      try c.omittable("sequence", &sequence)
      self = .visit(visit, sequence: sequence)
    case .locations(var client, var fixes):
      try c.field("client", &client)
      try c.field("locations", &fixes)
      self = .locations(client: client, fixes)
    case .authorization(var snapshot):
      try c.field("authorization", &snapshot)
      self = .authorization(snapshot)
    case .regionEvents(var group, var events, var sequence):
      try c.group(&group)
      try c.field("events", &events)
      try c.omittable("sequence", &sequence)
      self = .regionEvents(group: group, events: events, sequence: sequence)
    case .regionStarted(var client, var group, var region):
      try c.field("client", &client)
      try c.group(&group)
      try c.field("region", &region)
      self = .regionStarted(client: client, group: group, region: region)
    case .regionList(var entries):
      try c.field("regions", &entries, default: [])
      self = .regionList(entries)
    case .regionFailed(var client, var group, var identifier, var failure):
      try c.field("client", &client)
      try c.group(&group)
      try c.field("identifier", &identifier)
      try failure.wire(&c)
      self = .regionFailed(client: client, group: group, identifier: identifier, failure: failure)
    case .regionState(var client, var group, var event):
      try c.field("client", &client)
      try c.group(&group)
      try c.field("event", &event)
      self = .regionState(client: client, group: group, event: event)
    case .heading(var client, var heading):
      try c.field("client", &client)
      try c.field("heading", &heading)
      self = .heading(client: client, heading)
    case .headingInterference(var client, var interference):
      try c.field("client", &client)
      try interference.wire(&c)
      self = .headingInterference(client: client, interference)
    case .deferredFinished(var client, var code):
      try c.field("client", &client)
      try c.optional("code", &code)
      self = .deferredFinished(client: client, code: code)
    case .paused(var client):
      try c.field("client", &client)
      self = .paused(client: client)
    case .resumed(var client):
      try c.field("client", &client)
      self = .resumed(client: client)
    case .status(var id):
      try c.field("id", &id)
      self = .status(id: id)
    case .apps(var id):
      try c.field("id", &id)
      self = .apps(id: id)
    case .sources(var id):
      try c.field("id", &id)
      self = .sources(id: id)
    case .authorize(var id, var app, var status, var accuracy):
      try c.field("id", &id)
      try c.field("app", &app)
      try c.field("status", &status)
      try c.field("accuracy", &accuracy, default: .full)
      self = .authorize(id: id, app: app, status: status, accuracy: accuracy)
    case .regions(var id, var app):
      try c.field("id", &id)
      try c.field("app", &app)
      self = .regions(id: id, app: app)
    case .services(var id, var enabled):
      try c.field("id", &id)
      try c.field("enabled", &enabled)
      self = .services(id: id, enabled: enabled)
    case .wifi(var id, var forget):
      try c.field("id", &id)
      try c.field("forget", &forget, default: false)
      self = .wifi(id: id, forget: forget)
    case .wifiImport(var id, var accessPoints):
      try c.field("id", &id)
      try c.field("accessPoints", &accessPoints, default: [])
      self = .wifiImport(id: id, accessPoints: accessPoints)
    case .history(var id, var query):
      try c.field("id", &id)
      try query.wire(&c)
      self = .history(id: id, query: query)
    case .reply(var id, var body):
      try c.field("id", &id)
      try body.wire(&c)
      self = .reply(id: id, body)
    case .authorizationRequest(var id, var app, var always, var purpose):
      try c.field("id", &id)
      try c.field("app", &app)
      try c.field("always", &always, default: false)
      try c.optional("purpose", &purpose)
      self = .authorizationRequest(id: id, app: app, always: always, purpose: purpose)
    case .authorizationDecision(var id, var status, var accuracy):
      try c.field("id", &id)
      try c.field("status", &status)
      try c.field("accuracy", &accuracy, default: .full)
      self = .authorizationDecision(id: id, status: status, accuracy: accuracy)
    }
  }
}

extension WireCoder {
  /// The `group` member: `manager` or `monitor:NAME` (``DaemonProtocol/isValidGroup(_:)``).
  mutating func group(_ group: inout String) throws(DaemonProtocolError) {
    try field("group", &group)
    guard !isDecoding || DaemonProtocol.isValidGroup(group) else {
      throw malformed("group", "must be \"manager\" or \"monitor:NAME\"")
    }
  }
}
