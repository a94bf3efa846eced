import LocationEngine
import LocationModel
import LocationProtocol
import LocationServices

// Message routing: `hello` first, then each message to the handler of the connection's role.
// Every switch here names every message, so that a message added to the protocol is a compile
// error until the server decides what it does with it.
extension DaemonServer {
  func handle(_ message: DaemonMessage, _ session: Session) throws(DaemonProtocolError) {
    guard let role = session.role else {
      guard case .hello(let version, let role) = message else {
        throw DaemonProtocolError(
          code: .outOfOrder, message: "the first message must be hello, not \(message.type)")
      }
      hello(session, version: version, role: role)
      return
    }
    switch message {
    case .hello:
      throw DaemonProtocolError(code: .outOfOrder, message: "hello was already received")
    case .ping(let id):
      session.connection.send(.reply(id: id, .done))
    case .register, .unregister, .startUpdates, .changeRequest, .stopUpdates, .requestLocation,
      .startSignificantChanges, .stopSignificantChanges, .requestAuthorization, .addRegion,
      .removeRegion, .requestRegionState, .startHeading, .changeHeading, .stopHeading,
      .allowDeferred, .disallowDeferred, .ack, .refreshRegions, .purpose, .startVisits,
      .stopVisits, .requestTemporaryFullAccuracy, .startRanging, .stopRanging:
      guard role == .app, let host = session.host else {
        throw DaemonProtocolError(
          code: .forbidden,
          message: "\(message.type) is an app request; this is a \(role) connection")
      }
      try app(message, session, host)
    case .status(let id), .apps(let id), .authorize(let id, _, _, _), .regions(let id, _),
      .sources(let id), .services(let id, _), .wifi(let id, _), .wifiImport(let id, _),
      .history(let id, _):
      guard role == .control else {
        throw DaemonProtocolError(
          code: .forbidden, message: "\(message.type) needs the control role", id: id)
      }
      try control(message, session)
    case .authorizationDecision(let id, let status, let accuracy):
      guard role == .agent else {
        throw DaemonProtocolError(
          code: .forbidden, message: "authorizationDecision needs the agent role", id: id)
      }
      try agentDecided(id, status, accuracy, from: session)
    case .welcome, .error, .locations, .authorization, .regionEvents, .regionStarted,
      .regionsChanged, .regionList, .regionFailed, .regionState, .heading, .headingInterference,
      .deferredFinished, .paused, .resumed, .visit, .reply, .authorizationRequest,
      .temporaryFullAccuracyResult, .temporaryFullAccuracyRequest, .beacons, .rangingFailed:
      throw DaemonProtocolError(
        code: .outOfOrder, message: "\(message.type) is sent by the daemon, not to it")
    }
  }

  private func hello(_ session: Session, version: Int, role: DaemonRole) {
    let connection = session.connection
    guard version == DaemonProtocol.version else {
      connection.send(
        .error(
          DaemonErrorMessage(
            code: .unsupportedVersion,
            message:
              "this daemon speaks version \(DaemonProtocol.version); the peer asked for \(version)"
          )))
      close(session)
      return
    }
    let peer = connection.peer
    // Identity is read now, at hello, from what the kernel keeps about the process that connected
    // (and only that process may speak on the connection, see `read`).
    let facts = PeerFacts.read(pid: peer.pid, pidfd: peer.pidfd, label: peer.label)
    let principal: PeerIdentity.Principal
    switch PeerIdentity.resolve(
      facts, configuredID: { configuration.appID(forExecutable: $0, configured: true) },
      fileExists: PeerFacts.isRegularFile)
    {
    case .success(let found):
      principal = found
    case .failure(let refusal):
      connection.send(
        .error(
          DaemonErrorMessage(
            code: .forbidden,
            message: "pid \(peer.pid) cannot be identified: \(refusal.reason); refusing to guess")))
      DaemonLog.write("pid \(peer.pid) (uid \(peer.uid)) refused: \(refusal.reason)")
      close(session)
      return
    }
    switch role {
    case .control, .agent:
      guard
        DaemonAccess.mayControl(
          confined: principal.isConfined, uid: peer.uid, gid: peer.gid, groups: peer.groups,
          system: configuration.system, daemonUID: daemonUID, controlGroup: controlGroupID)
      else {
        let who =
          principal.isConfined
          ? "a confined app (\(PeerIdentity.displayable(principal.app))) never gets it"
          : configuration.system
            ? "it needs root or the control group"
            : "it needs uid 0 or the daemon's uid \(daemonUID)"
        connection.send(
          .error(
            DaemonErrorMessage(code: .forbidden, message: "the \(role) role is refused: \(who)")))
        DaemonLog.write("pid \(peer.pid) (uid \(peer.uid)): the \(role) role refused")
        close(session)
        return
      }
      session.role = role
      if role == .agent { loop.broker.addAgent(connection.id) }
      DaemonLog.write("pid \(peer.pid) (uid \(peer.uid)) connected as \(role)")
      connection.send(
        .welcome(
          DaemonWelcome(
            app: "", uid: Int(peer.uid),
            authorization: AuthorizationSnapshot(
              status: .notDetermined, servicesEnabled: persistence.servicesEnabled()),
            maximumRegionRadius: RegionSpec.defaultMaximumRadius,
            headingAvailable: pool?.descriptors.contains(where: \.producesHeading) ?? false,
            significantChangeAvailable: pool != nil)))
    case .app:
      let app = configuration.system ? "\(principal.app)@\(peer.uid)" : principal.app
      // Identities are not free: each may keep a decision, regions and events in the store.
      if !loop.knownApps.contains(app) {
        let owned = loop.knownApps.reduce(0) { $0 + (owner(of: $1) == peer.uid ? 1 : 0) }
        guard owned < configuration.maximumAppsPerUID else {
          connection.send(
            .error(
              DaemonErrorMessage(
                code: .tooMany,
                message:
                  "uid \(peer.uid) already has \(configuration.maximumAppsPerUID) app "
                  + "identities (max-apps-per-uid)")))
          DaemonLog.write("uid \(peer.uid): a new app refused (max-apps-per-uid)")
          close(session)
          return
        }
        loop.knownApps.insert(app)
      }
      for _ in 0..<2 {
        let host = host(for: app)
        let maximumRadius = host.hub.maximumRegionRadius
        let heading = host.hub.headingAvailable
        let significant = host.hub.significantChangeAvailable
        let beacons = host.hub.beaconsAvailable
        // An app that may not have precise locations is told its regions without their states,
        // and its kept events wait until it may (issue 14, F10).
        let current = currentAuthorization(app)
        let withholding = !current.allowsLocation || current.isReduced
        let sent = host.attach(connection, withholding: withholding) { _, regions in
          var welcome = DaemonWelcome(
            app: app, uid: Int(peer.uid), authorization: current, regions: regions,
            maximumRegionRadius: maximumRadius, headingAvailable: heading,
            significantChangeAvailable: significant)
          welcome.beaconsAvailable = beacons
          return .welcome(welcome)
        }
        // A host retired between the lookup and the attach: make a new one.
        guard let sent else { continue }
        session.role = .app
        session.host = host
        session.deliveredSequence = sent
        DaemonLog.write(
          "pid \(peer.pid) (uid \(peer.uid)) connected as app \(PeerIdentity.displayable(app))")
        return
      }
      connection.send(
        .error(DaemonErrorMessage(code: .unsupported, message: "the app could not be attached")))
      close(session)
    }
  }

  // MARK: App role

  private func manager(_ session: Session, _ client: Int) throws(DaemonProtocolError) -> ClientID {
    guard let manager = session.managers[client] else {
      throw DaemonProtocolError(
        code: .notRegistered, message: "client \(client) is not registered on this connection")
    }
    return manager.id
  }

  private func app(_ message: DaemonMessage, _ session: Session, _ host: AppHost)
    throws(DaemonProtocolError)
  {
    if case .ack(let sequence) = message {
      let through = min(
        sequence, max(session.deliveredSequence, session.connection.highestSequence))
      if through > 0 { host.acknowledge(through: through) }
      return
    }
    // Before the broker: the reason belongs with the question the agent is about to see.
    if case .purpose(let text) = message {
      try setPurpose(text, app: host.app)
      return
    }
    try authorizeThenRun(message, session, host) { [self] () throws(DaemonProtocolError) in
      try perform(message, session, host)
    }
  }

  /// Carries out an app request (after any authorization it needed was decided).
  private func perform(_ message: DaemonMessage, _ session: Session, _ host: AppHost)
    throws(DaemonProtocolError)
  {
    let hub = host.hub
    switch message {
    case .register(let client):
      guard session.managers[client] == nil else {
        throw DaemonProtocolError(
          code: .outOfOrder, message: "client \(client) is already registered")
      }
      guard session.managers.count < configuration.maximumManagers else {
        throw DaemonProtocolError(
          code: .unsupported,
          message: "a connection may register at most \(configuration.maximumManagers) clients")
      }
      let proxy = ManagerProxy(connection: session.connection, client: client, host: host)
      session.managers[client] = (hub.register(proxy), proxy)
      noteRegistered(1, app: host.app)
    case .unregister(let client):
      hub.unregister(try manager(session, client))
      session.managers[client] = nil
      noteRanged(-(session.ranging.removeValue(forKey: client)?.count ?? 0), app: host.app)
      noteRegistered(-1, app: host.app)
      if !isInUse(host) { appNoLongerInUse(host.app) }
    case .startUpdates(let client, let request):
      hub.startUpdates(try manager(session, client), request)
    case .changeRequest(let client, let request):
      hub.send(.changeRequest(try manager(session, client), request))
    case .stopUpdates(let client):
      hub.send(.stopUpdates(try manager(session, client)))
    case .requestLocation(let client, let request):
      hub.requestLocation(try manager(session, client), request)
    case .startSignificantChanges(let client):
      hub.startSignificantChanges(try manager(session, client))
    case .stopSignificantChanges(let client):
      hub.send(.stopSignificantChanges(try manager(session, client)))
    case .requestAuthorization:
      // The broker has decided (or asked and been answered) before this runs.
      break
    case .addRegion(let client, let group, let region, let initialState):
      let id = try manager(session, client)
      // The broker's decision, not the hub's copy: a request held while the agent decided runs
      // against the answer (an "approximate" answer gets no region; issue 14, F3).
      let authorization = currentAuthorization(host.app)
      if authorization.isReduced || !authorization.allowsLocation {
        session.connection.send(
          .regionFailed(
            client: client, group: group, identifier: region.identifier, failure: .denied))
        return
      }
      if hub.region(identifier: region.identifier, group: group) == nil,
        let refusal = regionsOfUIDAtCap(host.app)
      {
        session.connection.send(
          .regionFailed(
            client: client, group: group, identifier: region.identifier,
            failure: .invalid(refusal)))
        return
      }
      host.noteGroup(group)
      hub.addRegion(region, group: group, initialState: initialState, requester: id)
    case .removeRegion(let group, let identifier):
      hub.removeRegion(identifier: identifier, group: group)
      let connection = session.connection.id
      host.afterPendingWork { host.regionsChanged(by: connection) }
    case .refreshRegions:
      host.refreshRegions(session.connection)
    case .requestRegionState(let client, let group, let identifier):
      let id = try manager(session, client)
      // An app that may not have a precise location learns nothing, not even a state stored
      // earlier.
      let authorization = currentAuthorization(host.app)
      guard authorization.allowsLocation, !authorization.isReduced else { return }
      hub.requestRegionState(identifier: identifier, group: group, requester: id)
    case .startHeading(let client, let filter, let orientation):
      hub.send(
        .startHeading(try manager(session, client), filter: filter, orientation: orientation))
    case .changeHeading(let client, let filter, let orientation):
      hub.send(
        .changeHeading(try manager(session, client), filter: filter, orientation: orientation))
    case .stopHeading(let client):
      hub.send(.stopHeading(try manager(session, client)))
    case .allowDeferred(let client, let distance, let timeout):
      hub.allowDeferred(try manager(session, client), distance: distance, timeout: timeout)
    case .disallowDeferred(let client):
      hub.send(.disallowDeferred(try manager(session, client)))
    case .ack, .purpose:
      // Handled before authorization (`app`): acknowledging and giving a reason are never held.
      break
    case .startVisits(let client):
      // For the app (every manager hears its visits); the client, if any, hears `denied`.
      hub.startVisits(requester: client == 0 ? nil : try manager(session, client))
    case .stopVisits:
      hub.send(.stopVisits)
    case .requestTemporaryFullAccuracy(let id, let purposeKey):
      requestTemporaryFullAccuracy(id: id, purposeKey: purposeKey, session, host)
    case .startRanging(let client, let constraint):
      try startRanging(client, constraint, session, host)
    case .stopRanging(let client, let constraint):
      let id = try manager(session, client)
      if session.ranging[client]?.remove(constraint) != nil { noteRanged(-1, app: host.app) }
      hub.send(.stopRanging(id, constraint))
    case .hello, .welcome, .error, .ping, .locations, .authorization, .regionEvents,
      .regionStarted, .regionsChanged, .regionList, .regionFailed, .regionState, .heading,
      .headingInterference, .deferredFinished, .paused, .resumed, .visit, .status, .apps,
      .authorize,
      .regions, .sources, .services, .reply, .authorizationRequest, .authorizationDecision,
      .temporaryFullAccuracyResult, .temporaryFullAccuracyRequest, .beacons, .rangingFailed,
      .wifi, .wifiImport, .history:
      // Not app requests: `handle` routes these elsewhere.
      break
    }
  }

  /// `startRanging`: refused with `rangingFailed` when the app may not range (the broker's
  /// decision: approximate or denied) or the uid's managers range `max-ranged-constraints`
  /// constraints together.
  private func startRanging(
    _ client: Int, _ constraint: BeaconConstraint, _ session: Session, _ host: AppHost
  ) throws(DaemonProtocolError) {
    let id = try manager(session, client)
    let authorization = currentAuthorization(host.app)
    if authorization.isReduced || !authorization.allowsLocation {
      session.connection.send(
        .rangingFailed(client: client, constraint: constraint, reason: .denied))
      return
    }
    let uid = owner(of: host.app) ?? 0
    let isNew = session.ranging[client]?.contains(constraint) != true
    if isNew, loop.rangedByUID[uid, default: 0] >= configuration.maximumRangedConstraints {
      DaemonLog.write(
        "uid \(uid): its managers may range at most \(configuration.maximumRangedConstraints) "
          + "beacon constraints together (max-ranged-constraints); one more refused")
      session.connection.send(
        .rangingFailed(client: client, constraint: constraint, reason: .unavailable))
      return
    }
    if isNew {
      session.ranging[client, default: []].insert(constraint)
      noteRanged(1, app: host.app)
    }
    host.hub.startRanging(id, constraint)
  }

  /// Counts constraints ranged by the managers of an app's uid (`max-ranged-constraints`).
  func noteRanged(_ delta: Int, app: String) {
    guard delta != 0 else { return }
    let uid = owner(of: app) ?? 0
    let count = loop.rangedByUID[uid, default: 0] + delta
    loop.rangedByUID[uid] = count > 0 ? count : nil
  }
}
