import Geodesy
import LocationEngine
import LocationModel
import LocationProtocol

// Translation between the hub's vocabulary (`EngineEvent`, `HubDelivery`) and protocol messages.
// Everything here runs on the client's queue.
extension DaemonClient {
  /// Sends a client's request, keeping what must be sent again after a reconnection.
  func handle(_ event: EngineEvent) {
    switch event {
    case .startUpdates(let id, let request):
      guard update(id, { $0.updates = request }) else { return }
      sendOrFail(id, .startUpdates(client: id.rawValue, request: request))
    case .changeRequest(let id, let request):
      guard update(id, { if $0.updates != nil { $0.updates = request } }) else { return }
      sendIfWelcomed(.changeRequest(client: id.rawValue, request: request))
    case .stopUpdates(let id):
      guard
        update(
          id,
          {
            $0.updates = nil
            $0.locationRequest = nil
          })
      else { return }
      sendIfWelcomed(.stopUpdates(client: id.rawValue))
    case .requestLocation(let id, let request):
      guard update(id, { $0.locationRequest = request }) else { return }
      if !sendOrFail(id, .requestLocation(client: id.rawValue, request: request)) {
        _ = update(id) { $0.locationRequest = nil }
      }
    case .addRegion(let group, let spec, let initialState, let requester):
      state.withLock { $0.initialStates[Self.key(group, spec.identifier)] = initialState }
      request(
        .addRegion(
          client: requester?.rawValue ?? 0, group: group, region: spec,
          initialState: initialState))
    case .removeRegion(let group, let identifier):
      state.withLock { state in
        _ = state.mirror.regions[group]?.removeValue(forKey: identifier)
        if state.refreshing { state.removedDuringRefresh.insert(Self.key(group, identifier)) }
      }
      request(.removeRegion(group: group, identifier: identifier))
    case .requestRegionState(let id, let group, let identifier):
      request(.requestRegionState(client: id.rawValue, group: group, identifier: identifier))
    case .startHeading(let id, let filter, let orientation):
      guard update(id, { $0.heading = (filter, orientation) }) else { return }
      sendOrFail(
        id, .startHeading(client: id.rawValue, filter: filter, orientation: orientation))
    case .changeHeading(let id, let filter, let orientation):
      guard update(id, { if $0.heading != nil { $0.heading = (filter, orientation) } }) else {
        return
      }
      sendIfWelcomed(.changeHeading(client: id.rawValue, filter: filter, orientation: orientation))
    case .stopHeading(let id):
      guard update(id, { $0.heading = nil }) else { return }
      sendIfWelcomed(.stopHeading(client: id.rawValue))
    case .allowDeferred(let id, let distance, let timeout):
      guard update(id, { $0.deferring = true }) else { return }
      if !sendIfWelcomed(.allowDeferred(client: id.rawValue, distance: distance, timeout: timeout))
      {
        _ = update(id) { $0.deferring = false }
        deliver(.deferredFinished(DeferredUpdates.Failure.deferredFailed.rawValue), to: id.rawValue)
      }
    case .startSignificantChanges(let id):
      guard update(id, { $0.significantChanges = true }) else { return }
      sendOrFail(id, .startSignificantChanges(client: id.rawValue))
    case .stopSignificantChanges(let id):
      guard update(id, { $0.significantChanges = false }) else { return }
      sendIfWelcomed(.stopSignificantChanges(client: id.rawValue))
    case .disallowDeferred(let id):
      guard update(id, { $0.deferring = false }) else { return }
      sendIfWelcomed(.disallowDeferred(client: id.rawValue))
    case .startVisits(let requester):
      // The app's, kept by the daemon: sent once (after the next welcome when disconnected).
      request(.startVisits(client: requester?.rawValue ?? 0))
    case .stopVisits:
      request(.stopVisits)
    case .startRanging(let id, let constraint):
      guard update(id, { $0.ranging.insert(constraint) }) else { return }
      sendIfWelcomed(.startRanging(client: id.rawValue, constraint: constraint))
    case .stopRanging(let id, let constraint):
      guard update(id, { $0.ranging.remove(constraint) }) else { return }
      sendIfWelcomed(.stopRanging(client: id.rawValue, constraint: constraint))
    case .addClient, .removeClient, .fix, .sourcesChanged, .sourceFailed, .sourcesEnded,
      .sourcesDenied, .timerFired, .authorization, .restoreRegions, .heading, .advertisement:
      // The daemon's own business (its sources, timers and decisions); an app cannot send these.
      HubLog.write(.debug, "daemon", "not sent to locationd: \(event)")
    }
  }

  static func key(_ group: String, _ identifier: String) -> String { group + "\u{0}" + identifier }

  /// Changes a registered client's record; false when the client is not registered.
  @discardableResult
  private func update(_ id: ClientID, _ change: (inout Record) -> Void) -> Bool {
    state.withLock { state in
      guard var record = state.clients[id.rawValue] else { return false }
      change(&record)
      state.clients[id.rawValue] = record
      return true
    }
  }

  /// Sends when welcomed; false (nothing sent) otherwise, the running state being sent again at
  /// the next welcome.
  @discardableResult
  private func sendIfWelcomed(_ message: DaemonMessage) -> Bool {
    guard state.withLock({ $0.welcomed }) else { return false }
    write(message)
    return true
  }

  /// Sends when welcomed; otherwise the client hears `locationUnknown` with the reason now (as a
  /// hub with no source yet does), and the service starts when the daemon is back.
  @discardableResult
  private func sendOrFail(_ id: ClientID, _ message: DaemonMessage) -> Bool {
    if sendIfWelcomed(message) { return true }
    let problem = state.withLock { $0.problem }
    deliver(.error(.locationUnknown, message: problem), to: id.rawValue)
    return false
  }

  // MARK: Deliveries

  /// Hands a manager its locations, if they came on the current connection, and answers its
  /// one-time request: in one lock. The app's reader calls it with a `locations` line read the
  /// short way (`DaemonProtocol.decodeLocationsLine`), `received` with the message.
  func receivedLocations(client number: Int, _ fixes: [Fix], generation: Int) {
    if LatencyTrace.isOn, let last = fixes.last {
      LatencyTrace.mark(.clientDelivery, fixTime: last.time)
    }
    let client = state.withLock { state -> (any HubClient)? in
      guard state.generation == generation, state.fd != nil else { return nil }
      state.clients[number]?.locationRequest = nil
      return state.clients[number]?.client
    }
    client?.hub(self, deliver: .locations(fixes))
  }

  /// Handles one decoded line from the daemon, if it came on the current connection.
  func received(_ decoded: Result<DaemonMessage, DaemonProtocolError>, generation: Int) {
    guard state.withLock({ $0.generation == generation && $0.fd != nil }) else { return }
    let message: DaemonMessage
    switch decoded {
    case .success(let value): message = value
    case .failure(let error):
      HubLog.write(.info, "daemon", "undecodable message from locationd: \(error)")
      return
    }
    switch message {
    case .welcome(let welcome):
      welcomed(welcome)
    case .error(let error):
      receivedError(error)
    case .locations(let client, let fixes):
      receivedLocations(client: client, fixes, generation: generation)
    case .authorization(let snapshot):
      let changed = state.withLock { state -> Bool in
        defer { state.mirror.authorization = snapshot }
        return state.mirror.authorization != snapshot
      }
      if changed { deliverToAll(.authorization(snapshot)) }
    case .regionEvents(let group, let events, let sequence):
      learnRegions(group: group, events)
      // Dated: a kept event happened while the app was away, not when it arrives.
      regionEvents(group: group, events.map(\.datedEvent), sequence: sequence)
    case .regionStarted(let client, let group, let spec):
      state.withLock { state in
        let initial =
          state.initialStates.removeValue(forKey: Self.key(group, spec.identifier)) ?? .unknown
        state.mirror.regions[group, default: [:]][spec.identifier] = (spec, initial)
      }
      deliver(.regionStarted(group: group, spec), to: client)
    case .regionsChanged:
      state.withLock { $0.regionsStale = true }
    case .regionList(let entries):
      regionList(entries)
    case .regionFailed(let client, let group, let identifier, let failure):
      state.withLock { _ = $0.initialStates.removeValue(forKey: Self.key(group, identifier)) }
      deliver(.regionFailed(group: group, identifier: identifier, failure), to: client)
    case .regionState(let client, let group, let event):
      learnRegions(group: group, [event])
      updateMirror(group: group, [event.event])
      deliver(.regionState(group: group, event.event), to: client)
    case .heading(let client, let heading):
      deliver(.heading(heading), to: client)
    case .headingInterference(let client, let interference):
      deliver(.headingInterference(interference), to: client)
    case .deferredFinished(let client, let code):
      _ = update(ClientID(client)) { $0.deferring = false }
      deliver(.deferredFinished(code), to: client)
    case .paused(let client):
      deliver(.paused, to: client)
    case .resumed(let client):
      deliver(.resumed, to: client)
    case .visit(let visit, let sequence):
      visitEvent(visit, sequence: sequence)
    case .temporaryFullAccuracyResult(let id, let declined):
      temporaryFullAccuracyAnswered(id: id, declined: declined)
    case .beacons(let client, let constraint, let beacons):
      deliver(.beacons(constraint, beacons), to: client)
    case .rangingFailed(let client, let constraint, let reason):
      _ = update(ClientID(client)) { $0.ranging.remove(constraint) }
      let error: EngineError = reason == .denied ? .denied : .rangingUnavailable
      deliver(.rangingFailed(constraint, error), to: client)
    case .hello, .register, .unregister, .startUpdates, .changeRequest, .stopUpdates,
      .requestLocation, .startSignificantChanges, .stopSignificantChanges, .requestAuthorization,
      .addRegion, .removeRegion, .requestRegionState, .startHeading, .changeHeading, .stopHeading,
      .allowDeferred, .disallowDeferred, .ack, .refreshRegions, .purpose, .startVisits,
      .stopVisits, .status, .apps, .authorize,
      .regions, .sources,
      .services, .ping, .reply, .authorizationRequest, .authorizationDecision,
      .requestTemporaryFullAccuracy, .temporaryFullAccuracyRequest, .startRanging, .stopRanging,
      .wifi, .wifiImport, .history:
      HubLog.write(.info, "daemon", "unexpected \(message.type) from locationd; ignored")
    }
  }

  /// `locbench latency`'s trace: a `locations` line was read (its `recv` returned at `time`), and
  /// decoded (now).
  static func traceRead(_ fixes: [Fix], at time: UInt64) {
    if let last = fixes.last {
      if let wake = LatencyTrace.takeWake() {
        LatencyTrace.mark(.clientWake, fixTime: last.time, at: wake)
      }
      LatencyTrace.mark(.clientRead, fixTime: last.time, at: time)
      LatencyTrace.mark(.clientDecoded, fixTime: last.time)
    }
  }

  /// An error from the daemon: for one client, an `EngineError`; otherwise a protocol complaint
  /// (logged), or a refusal of the hello (the connection ends).
  private func receivedError(_ error: DaemonErrorMessage) {
    if let client = error.client {
      let engineError: EngineError
      switch error.code {
      case .denied:
        engineError = .denied
        _ = update(ClientID(client)) {
          $0.updates = nil
          $0.locationRequest = nil
        }
      case .sourcesEnded: engineError = .sourcesEnded
      default:  // DaemonErrorCode is an open set of strings
        engineError = .locationUnknown
        _ = update(ClientID(client)) { $0.locationRequest = nil }
      }
      deliver(.error(engineError, message: error.message.isEmpty ? nil : error.message), to: client)
      return
    }
    HubLog.write(.info, "daemon", "locationd: \(error.code.rawValue): \(error.message)")
    if !state.withLock({ $0.welcomed }), let fd = state.withLock({ $0.fd }) {
      // A refused hello (unsupportedVersion): the reader sees the end and a retry is scheduled.
      state.withLock { $0.refusal = "\(error.code.rawValue): \(error.message)" }
      DaemonClientSocket.shutdown(fd)
    }
  }

  /// Adds to the mirror the regions that events name and the mirror lacks (another process of the
  /// app added them after the mirror's copy was made); their states follow from the events.
  private func learnRegions(group: String, _ events: [DaemonRegionEvent]) {
    state.withLock { state in
      for event in events {
        guard let spec = event.region,
          state.mirror.regions[group]?[spec.identifier] == nil,
          !state.removedDuringRefresh.contains(Self.key(group, spec.identifier))
        else { continue }
        state.mirror.regions[group, default: [:]][spec.identifier] = (spec, .unknown)
      }
    }
  }

  /// The answer to `refreshRegions`: the mirror's regions become the daemon's, except those this
  /// process removed meanwhile, with held events rewound as after a welcome.
  private func regionList(_ entries: [DaemonRegionEntry]) {
    state.withLock { state in
      var regions: [String: [String: (spec: RegionSpec, state: RegionState)]] = [:]
      for entry in entries
      where !state.removedDuringRefresh.contains(Self.key(entry.group, entry.region.identifier)) {
        regions[entry.group, default: [:]][entry.region.identifier] = (entry.region, entry.state)
      }
      state.mirror.regions = regions
      for held in state.held.reversed() { Self.rewind(held, in: &state.mirror) }
      state.regionsStale = false
      endRefresh(&state)
    }
  }

  /// The new states a batch of region events implies.
  private func updateMirror(group: String, _ events: [RegionEvent]) {
    state.withLock { state in Self.apply(events, group: group, to: &state.mirror) }
  }

  /// Sets the mirrored states that a batch of events leads to.
  static func apply(_ events: [RegionEvent], group: String, to mirror: inout Mirror) {
    for event in events {
      let regionState: RegionState
      switch event.kind {
      case .determined(let value): regionState = value
      case .entered: regionState = .inside
      case .exited: regionState = .outside
      }
      mirror.regions[group]?[event.identifier]?.state = regionState
    }
  }

  /// Sets the mirrored states to what they were before a held batch: the daemon's welcome already
  /// has the states after it, and a `CLMonitor` opened now must see the change when the batch is
  /// handed over (the state before an entry is outside, before an exit inside, before a first
  /// determination unknown).
  static func rewind(_ held: HeldEvents, in mirror: inout Mirror) {
    for event in held.events.reversed() {
      let before: RegionState
      switch event.kind {
      case .determined: before = .unknown
      case .entered: before = .outside
      case .exited: before = .inside
      }
      mirror.regions[held.group]?[event.identifier]?.state = before
    }
  }

  /// Region events: live ones go to every client at once; a sequenced one (kept by the daemon while
  /// the app was away) is dropped when seen before, held while no client of its group is
  /// registered, else handed over and acknowledged.
  private func regionEvents(group: String, _ events: [RegionEvent], sequence: Int64?) {
    guard let sequence else {
      updateMirror(group: group, events)
      deliverToAll(.regionEvents(group: group, events))
      return
    }
    let seen = state.withLock { state -> Bool in
      if sequence <= state.acknowledged || state.sequences[sequence] != nil { return true }
      state.sequences[sequence] = false
      let held = HeldEvents(group: group, events: events, sequence: sequence)
      state.held.append(held)
      Self.rewind(held, in: &state.mirror)
      return false
    }
    if seen {
      HubLog.write(.info, "daemon", "region event \(sequence) seen before; dropped")
      acknowledge(again: true)
      return
    }
    releaseHeldEvents()
  }

  /// A visit: a live one goes to every client at once; a sequenced one (kept by the daemon until
  /// acknowledged) is dropped when seen before, held while no `CLLocationManager` is registered,
  /// else handed over and acknowledged, as region events are.
  private func visitEvent(_ visit: Visit, sequence: Int64?) {
    guard let sequence else {
      deliverToAll(.visit(visit))
      return
    }
    let seen = state.withLock { state -> Bool in
      if sequence <= state.acknowledged || state.sequences[sequence] != nil { return true }
      state.sequences[sequence] = false
      state.held.append(
        HeldEvents(group: Self.visitGroup, events: [], sequence: sequence, visit: visit))
      return false
    }
    if seen {
      HubLog.write(.info, "daemon", "visit \(sequence) seen before; dropped")
      acknowledge(again: true)
      return
    }
    releaseHeldEvents()
  }

  /// Hands over held events whose group has a registered client, in sequence order, then
  /// acknowledges what can be.
  func releaseHeldEvents() {
    let ready = state.withLock { state -> [HeldEvents] in
      let groups = state.clients.values.reduce(into: Set<String>()) { $0.formUnion($1.groups) }
      let ready = state.held.filter { groups.contains($0.group) }
      state.held.removeAll { groups.contains($0.group) }
      for item in ready { state.sequences[item.sequence] = true }
      return ready.sorted { $0.sequence < $1.sequence }
    }
    for item in ready {
      if let visit = item.visit {
        deliverToAll(.visit(visit))
        continue
      }
      updateMirror(group: item.group, item.events)
      deliverToAll(.regionEvents(group: item.group, item.events))
    }
    acknowledge()
  }

  /// Acknowledges the highest handed-over sequence below every held one; with `again`, repeats the
  /// last acknowledgement when there is nothing new (a redelivery the daemon must forget).
  private func acknowledge(again: Bool = false) {
    let (ack, welcomed) = state.withLock { state -> (Int64?, Bool) in
      let lowestHeld = state.sequences.filter { !$0.value }.keys.min()
      let candidates = state.sequences.filter { $0.value && $0.key < (lowestHeld ?? .max) }.keys
      guard let highest = candidates.max() else {
        return (again && state.acknowledged > 0 ? state.acknowledged : nil, state.welcomed)
      }
      if highest > state.acknowledged { state.acknowledged = highest }
      // Sequences at or below the acknowledgement are dropped by comparison from now on.
      state.sequences = state.sequences.filter { $0.key > state.acknowledged }
      return (state.acknowledged, state.welcomed)
    }
    guard let ack, welcomed else { return }
    write(.ack(sequence: ack))
  }
}
