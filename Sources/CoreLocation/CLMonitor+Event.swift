import Foundation
internal import LocationEngine
internal import LocationModel
import LocationServices

/// The state of a monitored condition (`CLMonitor.Event.State`): Apple's `CLMonitoringState`, which
/// the Swift SDK imports under this name.
public enum __CLMonitoringState: UInt, Sendable {
  /// The condition's state is not known yet: no decisive location since it was added.
  case unknown = 0
  /// The condition is satisfied (for a circular condition: the device is inside).
  case satisfied = 1
  /// The condition is not satisfied (for a circular condition: the device is outside).
  case unsatisfied = 2
  /// The condition is not being monitored (unsupported on Linux, or invalid).
  case unmonitored = 3
}

extension CLMonitor {
  /// An event object that the framework passes to the events sequence in the monitor.
  ///
  /// Events are made when a condition's state changes (the first decisive location after it was
  /// added, or a crossing), when a condition cannot be monitored, and when the app's authorization
  /// changes in a way that stops or resumes monitoring (then every condition gets an event with its
  /// current state and the new diagnostic flags).
  public struct Event: Sendable {
    /// The type that represents the state of the monitoring event.
    public typealias State = __CLMonitoringState

    /// A string that identifies the event: the identifier of the condition it is about.
    public let identifier: String
    /// The event's state.
    public let state: CLMonitor.Event.State
    /// A date indicating the time of the event.
    ///
    /// For a change of state, the hub clock's time when the location that decided it was evaluated
    /// (the location's arrival, not its own `timestamp`); otherwise the time the event was made.
    public let date: Date
    /// An optional instance of a condition that represents the most specific condition that this
    /// event can apply to. Always `nil` here: circular conditions have nothing more specific.
    public let refinement: (any CLCondition)?
    /// A Boolean value that indicates whether the app receives accuracy-limited location updates
    /// (the app has reduced accuracy authorization).
    public let accuracyLimited: Bool
    /// A Boolean value that indicates whether the app has local authorization: `true` when the
    /// app's authorization is denied (monitoring is suspended).
    public let authorizationDenied: Bool
    /// A Boolean value that indicates whether the app has system-wide authorization: `true` when
    /// location services are off for the whole device.
    public let authorizationDeniedGlobally: Bool
    /// Whether an authorization request is in progress: a person is being asked about the app
    /// (through `locationd`'s agent); in embedded mode requests are answered at once: `false`.
    public let authorizationRequestInProgress: Bool
    /// A Boolean value that indicates whether the app can make authorization changes: `true` when
    /// the app's authorization is restricted.
    public let authorizationRestricted: Bool
    /// A Boolean value that indicates whether the app receives location updates based on other
    /// monitoring conditions. The number of conditions is limited by memory here: `false`.
    public let conditionLimitExceeded: Bool
    /// A Boolean value that indicates whether the app receives location updates based on the
    /// supported condition: `true` for a condition that cannot be monitored (a beacon condition
    /// with no source that hears beacons, a condition type of the app's own, or an invalid
    /// circular condition).
    public let conditionUnsupported: Bool
    /// A Boolean value that indicates whether the app receives location updates because it's
    /// insufficiently in use. Linux has no such notion: `false`.
    public let insufficientlyInUse: Bool
    /// A Boolean value that indicates whether it receives location updates based on successful
    /// persistence. `false`: a store that cannot be opened falls back to memory.
    public let persistenceUnavailable: Bool
    /// Whether a service session is required. Linux has none: `false`.
    public let serviceSessionRequired: Bool

    init(
      identifier: String, state: State, date: Date, diagnostics: MonitorDiagnostics,
      conditionUnsupported: Bool = false
    ) {
      self.identifier = identifier
      self.state = state
      self.date = date
      self.refinement = nil
      self.accuracyLimited = diagnostics.accuracyLimited
      self.authorizationDenied = diagnostics.authorizationDenied
      self.authorizationDeniedGlobally = diagnostics.authorizationDeniedGlobally
      self.authorizationRequestInProgress = diagnostics.authorizationRequestInProgress
      self.authorizationRestricted = diagnostics.authorizationRestricted
      self.conditionLimitExceeded = false
      self.conditionUnsupported = conditionUnsupported
      self.insufficientlyInUse = false
      self.persistenceUnavailable = false
      self.serviceSessionRequired = false
    }

    /// The diagnostic flags this event carries.
    var diagnostics: MonitorDiagnostics {
      MonitorDiagnostics(
        accuracyLimited: accuracyLimited, authorizationDenied: authorizationDenied,
        authorizationDeniedGlobally: authorizationDeniedGlobally,
        authorizationRestricted: authorizationRestricted,
        authorizationRequestInProgress: authorizationRequestInProgress)
    }
  }

  /// A structure that represents a condition and its associated event information that the
  /// framework is monitoring.
  public struct Record: Sendable {
    /// The condition that the framework is monitoring for.
    public let condition: any CLCondition
    /// The most recent event the monitor records (for a condition that has had none yet, an event
    /// made when it was added or restored, in its initial state).
    public let lastEvent: CLMonitor.Event
  }
}

/// The authorization flags that events carry.
struct MonitorDiagnostics: Sendable, Equatable {
  var accuracyLimited = false
  var authorizationDenied = false
  var authorizationDeniedGlobally = false
  var authorizationRestricted = false
  var authorizationRequestInProgress = false

  init(
    accuracyLimited: Bool = false, authorizationDenied: Bool = false,
    authorizationDeniedGlobally: Bool = false, authorizationRestricted: Bool = false,
    authorizationRequestInProgress: Bool = false
  ) {
    self.accuracyLimited = accuracyLimited
    self.authorizationDenied = authorizationDenied
    self.authorizationDeniedGlobally = authorizationDeniedGlobally
    self.authorizationRestricted = authorizationRestricted
    self.authorizationRequestInProgress = authorizationRequestInProgress
  }

  /// The flags for an authorization: services off is "denied globally" (whatever the app's own
  /// status), otherwise a denied or restricted app is flagged as such.
  init(_ snapshot: AuthorizationSnapshot) {
    accuracyLimited = snapshot.isReduced
    authorizationDeniedGlobally = !snapshot.servicesEnabled
    authorizationDenied =
      snapshot.servicesEnabled && snapshot.status == AuthorizationStatus.denied
    authorizationRestricted =
      snapshot.servicesEnabled && snapshot.status == AuthorizationStatus.restricted
    authorizationRequestInProgress = snapshot.requestInProgress
  }

  /// Whether these flags stop monitoring.
  var blocksMonitoring: Bool {
    authorizationDenied || authorizationDeniedGlobally || authorizationRestricted
  }
}

extension __CLMonitoringState {
  /// The state for an engine region state: inside is satisfied, outside unsatisfied.
  init(_ state: RegionState) {
    switch state {
    case .unknown: self = .unknown
    case .inside: self = .satisfied
    case .outside: self = .unsatisfied
    }
  }
}
