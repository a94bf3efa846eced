import LocationModel

/// One app's authorization as a value-type state machine: the decision in force, how long it
/// lasts, and whether a person (an agent) is being asked. The embedded hub and `locationd` both
/// decide with it; they differ only in whether an agent can be asked.
///
/// The rules (Apple's where Apple publishes one, else ours):
/// - **Which requests ask.** `requestWhenInUseAuthorization` asks when the app is `notDetermined`;
///   `requestAlwaysAuthorization` asks when it is `notDetermined` or `authorizedWhenInUse` (the
///   upgrade); starting location updates or a one-time location asks for when-in-use, and starting
///   significant-change or region monitoring asks for always, when the app is `notDetermined`.
///   Nothing else asks: a decision stands until the user (here `locationctl`) changes it.
/// - **Who answers.** When an agent is connected it is asked (``Action/ask(always:)``) and every
///   further request of the app waits (``Action/hold``) until it answers, or leaves with no other
///   agent to ask. Otherwise the policy answers at once: `grant` gives what was asked for (and the
///   upgrade to always), `deny` denies a `notDetermined` app and leaves any other as it is.
/// - **In use.** An app is in use while one of its processes has a location manager, a
///   `CLMonitor`, a live-updates sequence or a session (`CLServiceSession`,
///   `CLBackgroundActivitySession`) registered; Linux has no foreground, so that is what says a
///   person is using it.
/// - **Once.** An agent's "allow once" is when-in-use that lasts while the app is in use
///   (``noLongerInUse()``); then the app is `notDetermined` again.
/// - **Temporary full accuracy.** `requestTemporaryFullAccuracyAuthorization` of an authorized app
///   with reduced accuracy asks an agent (``requestTemporaryFullAccuracy(agentAvailable:)``); an
///   allowed request gives full accuracy while the app is in use, and the reduced decision stays
///   underneath (the store keeps that one). No agent, an app that already has full accuracy, or
///   one that is not authorized: the request is declined without asking (Apple's
///   `promptDeclined`), and the stored decision rules.
/// - **Settings.** `locationctl authorize` (``set(_:accuracy:)``) and the services switch
///   (``servicesSwitched(_:)``) change the decision at once, whatever is being asked.
package struct AuthorizationMachine: Sendable, Equatable {
  /// A request that may need a decision.
  package enum Trigger: Sendable, Equatable {
    /// `requestWhenInUseAuthorization` (`always` false) or `requestAlwaysAuthorization`.
    case request(always: Bool)
    /// `startUpdatingLocation`.
    case startUpdates
    /// `requestLocation`.
    case requestLocation
    /// `startMonitoringSignificantLocationChanges`.
    case startSignificantChanges
    /// `startMonitoring(for:)` or `CLMonitor.add`.
    case addRegion
  }

  /// What an agent (a person) answered.
  package enum Answer: Sendable, Equatable {
    /// `authorizedAlways`.
    case always
    /// `authorizedWhenInUse`.
    case whenInUse
    /// `authorizedWhenInUse` until the app's last connection closes.
    case once
    /// `denied`.
    case denied
  }

  /// What a setting (`locationctl authorize`) makes of the app.
  package enum Setting: Sendable, Equatable {
    /// `authorizedAlways`.
    case always
    /// `authorizedWhenInUse`.
    case whenInUse
    /// `denied`.
    case denied
    /// No decision: `notDetermined`, asked again at the next request.
    case reset
  }

  /// How long the decision in force lasts.
  package enum Lasting: Sendable, Equatable {
    /// Until something changes it.
    case untilChanged
    /// While the app is in use ("allow once").
    case untilLastConnectionCloses
  }

  /// What the caller does next.
  package enum Action: Sendable, Equatable {
    /// Nothing changes; a request goes ahead.
    case unchanged
    /// A question is open: keep the request until it is answered, then handle it.
    case hold
    /// Ask an agent (for always, or when in use) and keep the request until it answers.
    case ask(always: Bool)
    /// This is now the app's authorization: store it, tell the app's managers, then handle the
    /// request (and any kept ones).
    case apply(AuthorizationSnapshot)
    /// The stored decision is gone (`notDetermined`): remove it, tell the app's managers.
    case forget(AuthorizationSnapshot)
  }

  /// How a request is answered when no agent is asked.
  package let policy: AuthorizationPolicy
  /// The authorization in force.
  package private(set) var current: AuthorizationSnapshot
  /// How long it lasts (an "allow once" is marked in the decision itself, `once`, so that the
  /// store keeps it).
  package var lasting: Lasting { current.once ? .untilLastConnectionCloses : .untilChanged }
  /// The open question to an agent: whether it is for always; nil when none is open.
  package private(set) var asking: Bool? {
    didSet { current.requestInProgress = asking != nil || askingTemporary }
  }
  /// Whether an agent is being asked for temporary full accuracy.
  package private(set) var askingTemporary = false {
    didSet { current.requestInProgress = asking != nil || askingTemporary }
  }

  /// What a temporary full accuracy request leads to.
  package enum TemporaryOutcome: Sendable, Equatable {
    /// No one is asked: the reason (Apple's `promptDeclined`).
    case declined(String)
    /// Ask an agent, and answer the request when it decides.
    case ask
    /// An agent is already being asked for it: the request waits for that answer.
    case waiting
  }

  /// Creates a machine.
  /// - Parameters:
  ///   - current: The stored authorization (and the services switch).
  ///   - policy: How requests are answered when no agent is asked.
  package init(current: AuthorizationSnapshot, policy: AuthorizationPolicy) {
    self.current = current
    self.policy = policy
  }

  /// The question a request asks of an app in `status`: nil when it asks none, else whether it is
  /// for always.
  package static func question(_ trigger: Trigger, status: AuthorizationStatus) -> Bool? {
    switch trigger {
    case .request(let always):
      switch status {
      case .notDetermined: return always
      case .authorizedWhenInUse: return always ? true : nil
      case .restricted, .denied, .authorizedAlways: return nil
      }
    case .startUpdates, .requestLocation:
      return status == .notDetermined ? false : nil
    case .startSignificantChanges, .addRegion:
      return status == .notDetermined ? true : nil
    }
  }

  /// A request of the app.
  /// - Parameters:
  ///   - trigger: The request.
  ///   - agentAvailable: Whether an agent can be asked.
  /// - Returns: `hold` while a question is open; `ask` when an agent is to be asked; `apply` when
  ///   the policy decided; else `unchanged`.
  package mutating func trigger(_ trigger: Trigger, agentAvailable: Bool) -> Action {
    guard asking == nil else { return .hold }
    guard let always = Self.question(trigger, status: current.status) else { return .unchanged }
    if agentAvailable {
      asking = always
      return .ask(always: always)
    }
    return policyAnswer(always: always)
  }

  /// The agent answered the open question.
  /// - Parameters:
  ///   - answer: The answer.
  ///   - accuracy: The accuracy it allows.
  /// - Returns: `apply` with the decision (`unchanged` when no question was open).
  package mutating func answered(_ answer: Answer, accuracy: AccuracyAuthorization) -> Action {
    guard asking != nil else { return .unchanged }
    asking = nil
    var next = current
    next.accuracy = accuracy
    next.temporaryFullAccuracy = false
    switch answer {
    case .always: next.status = .authorizedAlways
    case .whenInUse, .once: next.status = .authorizedWhenInUse
    case .denied: next.status = .denied
    }
    next.once = answer == .once
    current = next
    return .apply(next)
  }

  /// The agent asked left before answering.
  /// - Parameter anotherAgent: Whether another agent can be asked.
  /// - Returns: `ask` again (of the next agent), or the policy's answer (`apply` or `unchanged`),
  ///   after which kept requests go ahead.
  package mutating func agentLeft(anotherAgent: Bool) -> Action {
    guard let always = asking else { return .unchanged }
    if anotherAgent { return .ask(always: always) }
    asking = nil
    let action = policyAnswer(always: always)
    // The question is closed even when the policy changes nothing: the app is told so.
    return action == .unchanged ? .apply(current) : action
  }

  /// `requestTemporaryFullAccuracyAuthorization`.
  /// - Parameter agentAvailable: Whether an agent can be asked.
  /// - Returns: `ask` (the question is now open), `waiting` (it already was), or `declined` with
  ///   the reason no one is asked.
  package mutating func requestTemporaryFullAccuracy(agentAvailable: Bool) -> TemporaryOutcome {
    guard current.servicesEnabled else { return .declined("location services are off") }
    guard current.status.isAuthorized else {
      return .declined("the app is not authorized to use location services")
    }
    guard current.accuracy == .reducedAccuracy else {
      return .declined("the app already has full accuracy")
    }
    if askingTemporary { return .waiting }
    guard agentAvailable else {
      return .declined(Self.noOneToAsk)
    }
    askingTemporary = true
    return .ask
  }

  /// Why a temporary full accuracy request with no agent to ask is declined.
  package static let noOneToAsk = "no one can be asked: the stored accuracy stands"

  /// The agent answered the temporary full accuracy question (or left with no other to ask:
  /// not allowed).
  /// - Parameter allowed: Whether full accuracy was allowed.
  /// - Returns: `apply` with the accuracy in force and the question closed (`unchanged` when no
  ///   question was open).
  package mutating func answeredTemporary(allowed: Bool) -> Action {
    guard askingTemporary else { return .unchanged }
    askingTemporary = false
    if allowed, current.status.isAuthorized, current.accuracy == .reducedAccuracy {
      current.accuracy = .fullAccuracy
      current.temporaryFullAccuracy = true
    }
    return .apply(current)
  }

  /// A setting made by the user (`locationctl authorize`).
  /// - Parameters:
  ///   - setting: The setting.
  ///   - accuracy: The accuracy it allows (ignored for `reset`, which is full).
  /// - Returns: `apply`, or `forget` for `reset`.
  package mutating func set(_ setting: Setting, accuracy: AccuracyAuthorization) -> Action {
    var next = current
    next.accuracy = accuracy
    next.once = false
    next.temporaryFullAccuracy = false
    switch setting {
    case .always: next.status = .authorizedAlways
    case .whenInUse: next.status = .authorizedWhenInUse
    case .denied: next.status = .denied
    case .reset:
      next.status = .notDetermined
      next.accuracy = .fullAccuracy
      current = next
      return .forget(next)
    }
    current = next
    return .apply(next)
  }

  /// A whole authorization set from outside (tests, a simulated world).
  /// - Parameter snapshot: The authorization.
  /// - Returns: `apply`.
  package mutating func replace(_ snapshot: AuthorizationSnapshot) -> Action {
    current = snapshot
    return .apply(snapshot)
  }

  /// The global location services switch changed.
  /// - Parameter enabled: Whether services are on.
  /// - Returns: `apply` with the switch changed (`unchanged` when it already was).
  package mutating func servicesSwitched(_ enabled: Bool) -> Action {
    guard current.servicesEnabled != enabled else { return .unchanged }
    current.servicesEnabled = enabled
    return .apply(current)
  }

  /// The app is no longer in use (its last manager, monitor, live-updates sequence or session
  /// ended, or its last connection closed): an "allow once" and a temporary full accuracy end.
  /// - Returns: `apply` with `notDetermined` after "allow once", with reduced accuracy after a
  ///   temporary full accuracy, else `unchanged`.
  package mutating func noLongerInUse() -> Action {
    switch lasting {
    case .untilChanged:
      guard current.temporaryFullAccuracy else { return .unchanged }
      current.accuracy = .reducedAccuracy
      current.temporaryFullAccuracy = false
      return .apply(current)
    case .untilLastConnectionCloses:
      current.status = .notDetermined
      current.accuracy = .fullAccuracy
      current.once = false
      current.temporaryFullAccuracy = false
      return .apply(current)
    }
  }

  private mutating func policyAnswer(always: Bool) -> Action {
    var next = current
    switch (current.status, policy) {
    case (.notDetermined, .grant):
      next.status = always ? .authorizedAlways : .authorizedWhenInUse
    case (.notDetermined, .deny):
      next.status = .denied
    case (.authorizedWhenInUse, .grant):
      guard always else { return .unchanged }
      next.status = .authorizedAlways
    case (.authorizedWhenInUse, .deny), (.restricted, _), (.denied, _), (.authorizedAlways, _):
      return .unchanged
    }
    next.once = false
    next.temporaryFullAccuracy = false
    current = next
    return .apply(next)
  }
}
