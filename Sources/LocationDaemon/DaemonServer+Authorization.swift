import LocationEngine
import LocationModel
import LocationProtocol
import LocationServices

/// A request of an app, held while an agent decides; it may fail like any request.
typealias HeldRequest = (connection: Int, run: () throws(DaemonProtocolError) -> Void)

/// `locationd`'s authorization broker: every app's ``AuthorizationMachine``, the agents in the
/// order they said hello, the questions put to them, and the requests each app made while its
/// question was open. The I/O thread's own value; the server applies what the machines decide.
struct AuthorizationBroker {
  /// A question put to an agent.
  struct Question {
    /// The app asking.
    var app: String
    /// Whether it asks for always.
    var always: Bool
    /// The agent connection asked.
    var agent: Int
    /// Set for a temporary full accuracy question: the app's purpose key.
    var purposeKey: String? = nil
  }

  /// Agent connections, in the order they said hello.
  private(set) var agents: [Int] = []
  /// Open questions, by request id.
  private(set) var questions: [Int: Question] = [:]
  private var nextQuestion = 1
  /// Every app's machine, made at its first use from the stored decision.
  var machines: [String: AuthorizationMachine] = [:]
  /// Requests held per app while its question is open, in arrival order.
  var held: [String: [HeldRequest]] = [:]
  /// Temporary full accuracy requests per app waiting for the agent's answer: the connection and
  /// the request's `id`, in arrival order.
  var temporaryWaiters: [String: [(connection: Int, id: Int)]] = [:]

  /// An agent said hello.
  mutating func addAgent(_ connection: Int) { agents.append(connection) }

  /// An agent left: the ids of the questions it was asked, in order.
  mutating func removeAgent(_ connection: Int) -> [Int] {
    agents.removeAll { $0 == connection }
    return questions.keys.sorted().filter { questions[$0]?.agent == connection }
  }

  /// Puts a question to the first agent; nil when none is connected.
  mutating func ask(app: String, always: Bool, purposeKey: String? = nil) -> (
    id: Int, agent: Int
  )? {
    guard let agent = agents.first else { return nil }
    let id = nextQuestion
    nextQuestion += 1
    questions[id] = Question(app: app, always: always, agent: agent, purposeKey: purposeKey)
    return (id, agent)
  }

  /// Puts an open question to the first agent again (its agent left).
  mutating func reask(_ id: Int) -> Question? {
    guard let agent = agents.first, questions[id] != nil else { return nil }
    questions[id]?.agent = agent
    return questions[id]
  }

  /// Closes a question.
  mutating func close(_ id: Int) -> Question? { questions.removeValue(forKey: id) }
}

extension DaemonServer {
  /// The app's machine: the one in use, else one made from the stored decision.
  private func machine(_ app: String) -> AuthorizationMachine {
    if let machine = loop.broker.machines[app] { return machine }
    var current =
      persistence.authorization(app: app) ?? AuthorizationSnapshot(status: .notDetermined)
    current.servicesEnabled = persistence.servicesEnabled()
    return AuthorizationMachine(current: current, policy: configuration.policy)
  }

  /// The authorization in force for an app now, as the broker decided it (the hub hears of a
  /// decision a moment later, on its own executor; requests are checked against this one).
  func currentAuthorization(_ app: String) -> AuthorizationSnapshot { machine(app).current }

  /// An app's `purpose`: kept (empty: forgotten) for the agent's questions and `apps`. The text
  /// reaches a person's terminal, so it may hold no control or format characters (an escape
  /// sequence, a bidirectional override) and at most `DaemonProtocol.maximumPurposeBytes`.
  func setPurpose(_ text: String, app: String) throws(DaemonProtocolError) {
    guard text.utf8.count <= DaemonProtocol.maximumPurposeBytes else {
      throw DaemonProtocolError(
        code: .tooLarge,
        message: "a purpose has at most \(DaemonProtocol.maximumPurposeBytes) bytes")
    }
    guard PeerIdentity.isPrintable(text) else {
      throw DaemonProtocolError(
        code: .malformed, message: "a purpose may hold no control or format characters")
    }
    loop.purposes[app] = text.isEmpty ? nil : text
  }

  /// Runs one transition of an app's machine and keeps its new state.
  func transition(
    _ app: String, _ body: (inout AuthorizationMachine) -> AuthorizationMachine.Action
  ) -> AuthorizationMachine.Action {
    var machine = machine(app)
    let action = body(&machine)
    loop.broker.machines[app] = machine
    return action
  }

  /// Stores a decision and tells the app's managers (through its hub when it is live).
  func apply(_ action: AuthorizationMachine.Action, app: String) {
    switch action {
    case .apply(let snapshot):
      if let host = liveHost(app) {
        // The hub stores it through its outbox (retried while the store fails).
        host.hub.setAuthorization(snapshot)
      } else {
        do {
          try persistence.setAuthorization(snapshot, app: app)
        } catch {
          DaemonLog.write(
            "app \(app): the decision could not be stored (\(error.message)); it holds until "
              + "the daemon stops")
        }
      }
    case .forget(let snapshot):
      do {
        try store.removeAuthorization(app: app)
      } catch {
        DaemonLog.write("app \(app): the decision could not be removed: \(error)")
      }
      liveHost(app)?.hub.setAuthorization(snapshot)
    case .unchanged, .hold, .ask:
      break
    }
  }

  /// The question a message asks, if it is one of the requests that may.
  static func trigger(_ message: DaemonMessage) -> AuthorizationMachine.Trigger? {
    switch message {
    case .requestAuthorization(let always): return .request(always: always)
    case .startUpdates: return .startUpdates
    // Ranging asks for when-in-use authorization, as starting updates does.
    case .startRanging: return .startUpdates
    case .requestLocation: return .requestLocation
    case .startSignificantChanges: return .startSignificantChanges
    // Visits ask for always authorization, as significant change does.
    case .startVisits: return .startSignificantChanges
    case .addRegion: return .addRegion
    case .hello, .welcome, .error, .ping, .register, .unregister, .changeRequest, .stopUpdates,
      .stopSignificantChanges, .removeRegion, .requestRegionState, .startHeading, .changeHeading,
      .stopHeading, .allowDeferred, .disallowDeferred, .ack, .refreshRegions, .purpose,
      .stopVisits, .visit, .locations, .requestTemporaryFullAccuracy,
      .temporaryFullAccuracyResult, .temporaryFullAccuracyRequest,
      .authorization, .regionEvents, .regionStarted, .regionsChanged, .regionList, .regionFailed,
      .regionState, .heading, .headingInterference, .deferredFinished, .paused, .resumed, .status,
      .apps, .authorize, .regions, .sources, .services, .reply, .authorizationRequest,
      .authorizationDecision, .stopRanging, .beacons, .rangingFailed, .wifi, .wifiImport,
      .history:
      return nil
    }
  }

  /// Handles an app request now, or holds it behind an open question (asking an agent first when
  /// the request is the one that asks).
  func authorizeThenRun(
    _ message: DaemonMessage, _ session: Session, _ host: AppHost,
    _ run: @escaping () throws(DaemonProtocolError) -> Void
  ) throws(DaemonProtocolError) {
    let app = host.app
    let agentAvailable = !loop.broker.agents.isEmpty
    let action: AuthorizationMachine.Action
    if let trigger = Self.trigger(message) {
      action = transition(app) { $0.trigger(trigger, agentAvailable: agentAvailable) }
    } else {
      action = machine(app).asking == nil ? .unchanged : .hold
    }
    switch action {
    case .hold:
      // Kept in place (no copy per message), and at most `max-held-requests` for all the apps of
      // one uid together (each request a line of at most 64 KiB): a peer that floods while the
      // user decides, with one identity or many, gets an error, not the daemon's memory.
      let uid = owner(of: app)
      let heldByUID = loop.broker.held.reduce(0) { total, entry in
        total + (owner(of: entry.key) == uid ? entry.value.count : 0)
      }
      guard heldByUID < configuration.maximumHeldRequests else {
        throw DaemonProtocolError(
          code: .tooMany,
          message:
            "\(configuration.maximumHeldRequests) requests of uid \(uid.map(String.init) ?? "?") "
            + "already wait for the user's decision")
      }
      loop.broker.held[app, default: []].append((session.connection.id, run))
    case .ask(let always):
      loop.broker.held[app, default: []].append((session.connection.id, run))
      if let (id, agent) = loop.broker.ask(app: app, always: always) {
        loop.sessions[agent]?.connection.send(
          .authorizationRequest(
            id: id, app: app, always: always, purpose: loop.purposes[app]))
        DaemonLog.write("app \(app): asking the agent")
      }
      // The app's managers learn that a person is being asked (`authorizationRequestInProgress`).
      apply(.apply(machine(app).current), app: app)
    case .apply, .forget:
      apply(action, app: app)
      try run()
    case .unchanged:
      try run()
    }
  }

  /// An agent's `authorizationDecision`.
  func agentDecided(
    _ id: Int, _ decision: DaemonAgentDecision, _ accuracy: DaemonAccuracy, from session: Session
  ) throws(DaemonProtocolError) {
    guard let question = loop.broker.questions[id], question.agent == session.connection.id
    else {
      throw DaemonProtocolError(
        code: .notFound, message: "no authorization request \(id) is waiting for this agent",
        id: id)
    }
    _ = loop.broker.close(id)
    if question.purposeKey != nil {
      let allowed = decision != .denied && accuracy == .full
      DaemonLog.write(
        "app \(question.app): the agent \(allowed ? "allowed" : "did not allow") temporary full "
          + "accuracy")
      temporaryAnswered(question.app, allowed: allowed, declined: nil)
      return
    }
    let answer: AuthorizationMachine.Answer
    switch decision {
    case .always: answer = .always
    case .whenInUse: answer = .whenInUse
    case .once: answer = .once
    case .denied: answer = .denied
    }
    DaemonLog.write(
      "app \(question.app): the agent decided \(decision.rawValue), \(accuracy.rawValue)")
    apply(
      transition(question.app) { $0.answered(answer, accuracy: accuracy.authorization) },
      app: question.app)
    releaseHeld(question.app)
  }

  /// An agent left: its questions go to the next agent, or to the policy.
  func agentLeft(_ connection: Int) {
    for id in loop.broker.removeAgent(connection) {
      guard let question = loop.broker.questions[id] else { continue }
      let anotherAgent = !loop.broker.agents.isEmpty
      if let purposeKey = question.purposeKey {
        if anotherAgent, let again = loop.broker.reask(id) {
          askTemporary(id: id, agent: again.agent, app: again.app, purposeKey: purposeKey)
        } else {
          _ = loop.broker.close(id)
          temporaryAnswered(
            question.app, allowed: false, declined: "the agent left before the user answered")
        }
        continue
      }
      let action = transition(question.app) { $0.agentLeft(anotherAgent: anotherAgent) }
      if case .ask = action, let again = loop.broker.reask(id) {
        loop.sessions[again.agent]?.connection.send(
          .authorizationRequest(
            id: id, app: again.app, always: again.always, purpose: loop.purposes[again.app]))
        continue
      }
      _ = loop.broker.close(id)
      apply(action, app: question.app)
      releaseHeld(question.app)
    }
  }

  /// Runs an app's held requests in order, now that its question is answered.
  private func releaseHeld(_ app: String) {
    guard let requests = loop.broker.held.removeValue(forKey: app) else { return }
    for (connection, run) in requests {
      guard let session = loop.sessions[connection] else { continue }
      do {
        try run()
      } catch {
        fail(session, error)
      }
    }
  }

  /// Forgets the held requests of a connection that closed.
  func dropHeldRequests(of connection: Int) {
    for app in loop.broker.held.keys {
      loop.broker.held[app]?.removeAll { $0.connection == connection }
    }
    for app in loop.broker.temporaryWaiters.keys {
      loop.broker.temporaryWaiters[app]?.removeAll { $0.connection == connection }
    }
  }

  /// The app is no longer in use: "allow once" and a temporary full accuracy end.
  func appNoLongerInUse(_ app: String) {
    apply(transition(app) { $0.noLongerInUse() }, app: app)
  }

  /// Whether the app is in use: one of its connections has a manager, monitor, live-updates
  /// sequence or session registered (``AuthorizationMachine``'s rule).
  func isInUse(_ host: AppHost) -> Bool { (loop.registeredClients[host.app] ?? 0) > 0 }

  /// Counts clients registered (`delta` > 0) or gone for an app, all its connections together.
  func noteRegistered(_ delta: Int, app: String) {
    let count = (loop.registeredClients[app] ?? 0) + delta
    loop.registeredClients[app] = count > 0 ? count : nil
  }

  // MARK: Temporary full accuracy

  /// `requestTemporaryFullAccuracy` of an app, once any open authorization question is decided:
  /// declined at once (with the reason) unless an agent can ask the user; else the agent is asked
  /// (or already is) and the answer comes with its decision.
  func requestTemporaryFullAccuracy(
    id: Int, purposeKey: String, _ session: Session, _ host: AppHost
  ) {
    let app = host.app
    let connection = session.connection
    if let problem = Self.purposeKeyProblem(purposeKey) {
      connection.send(.temporaryFullAccuracyResult(id: id, declined: problem))
      return
    }
    var machine = machine(app)
    let outcome = machine.requestTemporaryFullAccuracy(agentAvailable: !loop.broker.agents.isEmpty)
    loop.broker.machines[app] = machine
    switch outcome {
    case .declined(let reason):
      let said =
        reason == AuthorizationMachine.noOneToAsk
        ? reason + " (no agent is connected: `locationctl agent` asks the user)" : reason
      connection.send(.temporaryFullAccuracyResult(id: id, declined: said))
    case .waiting:
      // Bounded like held requests: a peer that floods while the user decides gets declined.
      guard loop.broker.temporaryWaiters[app, default: []].count < configuration.maximumHeldRequests
      else {
        connection.send(
          .temporaryFullAccuracyResult(
            id: id, declined: "too many requests already wait for the user's answer"))
        return
      }
      loop.broker.temporaryWaiters[app, default: []].append((connection.id, id))
    case .ask:
      loop.broker.temporaryWaiters[app, default: []].append((connection.id, id))
      if let (question, agent) = loop.broker.ask(app: app, always: false, purposeKey: purposeKey) {
        askTemporary(id: question, agent: agent, app: app, purposeKey: purposeKey)
      }
      apply(.apply(machine.current), app: app)
    }
  }

  /// Why a purpose key cannot be shown to a person, if it cannot: the rules of `purpose`.
  static func purposeKeyProblem(_ key: String) -> String? {
    if key.isEmpty { return "the purpose key is empty" }
    if key.utf8.count > DaemonProtocol.maximumPurposeBytes {
      return "a purpose key has at most \(DaemonProtocol.maximumPurposeBytes) bytes"
    }
    if !PeerIdentity.isPrintable(key) {
      return "a purpose key may hold no control or format characters"
    }
    return nil
  }

  private func askTemporary(id: Int, agent: Int, app: String, purposeKey: String) {
    loop.sessions[agent]?.connection.send(
      .temporaryFullAccuracyRequest(
        id: id, app: app, purposeKey: purposeKey, purpose: loop.purposes[app]))
    DaemonLog.write("app \(app): asking the agent for temporary full accuracy")
  }

  /// The temporary full accuracy question of an app is closed: the accuracy in force is applied,
  /// then every waiting request hears the result (after the app's managers were told, so that a
  /// completion handler sees the new `accuracyAuthorization`).
  private func temporaryAnswered(_ app: String, allowed: Bool, declined: String?) {
    apply(transition(app) { $0.answeredTemporary(allowed: allowed) }, app: app)
    let waiters = (loop.broker.temporaryWaiters.removeValue(forKey: app) ?? []).compactMap {
      waiter in loop.sessions[waiter.connection].map { ($0.connection, waiter.id) }
    }
    let answer: @Sendable () -> Void = {
      for (connection, id) in waiters {
        connection.send(.temporaryFullAccuracyResult(id: id, declined: declined))
      }
    }
    guard let host = liveHost(app) else { return answer() }
    host.afterPendingWork(answer)
  }
}
