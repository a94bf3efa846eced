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
/// - **Once.** An agent's "allow once" is when-in-use that lasts until the app's last connection
///   closes (``lastConnectionClosed()``); then the app is `notDetermined` again.
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
    /// Until the app's last connection closes ("allow once").
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
  package private(set) var asking: Bool?

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
    return policyAnswer(always: always)
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

  /// The app's last connection closed: an "allow once" ends.
  /// - Returns: `apply` with `notDetermined` after "allow once", else `unchanged`.
  package mutating func lastConnectionClosed() -> Action {
    switch lasting {
    case .untilChanged:
      return .unchanged
    case .untilLastConnectionCloses:
      current.status = .notDetermined
      current.accuracy = .fullAccuracy
      current.once = false
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
    current = next
    return .apply(next)
  }
}
