/// An app's authorization status: Apple's `CLAuthorizationStatus`, with the same raw values, as
/// every layer below the public one sees it.
package enum AuthorizationStatus: Int32, Sendable, Equatable, CaseIterable {
  /// The user has not decided.
  case notDetermined = 0
  /// Location services are restricted for the app (parental controls and the like).
  case restricted = 1
  /// The user denied the app.
  case denied = 2
  /// The app may use location services at any time.
  case authorizedAlways = 3
  /// The app may use location services while in use.
  case authorizedWhenInUse = 4

  /// Whether the status lets the app have locations (always or when in use).
  package var isAuthorized: Bool {
    switch self {
    case .authorizedAlways, .authorizedWhenInUse: return true
    case .notDetermined, .restricted, .denied: return false
    }
  }
}

/// How precise the locations an app receives are: Apple's `CLAccuracyAuthorization`, with the same
/// raw values.
package enum AccuracyAuthorization: Int, Sendable, Equatable, CaseIterable {
  /// Locations as precise as the sources give them.
  case fullAccuracy = 0
  /// Approximate locations (`ReducedAccuracy`): no region monitoring, coarse coordinates.
  case reducedAccuracy = 1
}

/// The app's authorization as the runtime knows it: its status, its accuracy and the global
/// location services switch.
package struct AuthorizationSnapshot: Sendable, Equatable {
  /// The status (`CLAuthorizationStatus`).
  package var status: AuthorizationStatus
  /// The accuracy (`CLAccuracyAuthorization`).
  package var accuracy: AccuracyAuthorization
  /// The global switch behind `locationServicesEnabled()`.
  package var servicesEnabled: Bool
  /// Whether the decision is an "allow once" (`locationd`'s agent): it ends with the app's last
  /// connection, and when the daemon starts. Kept in the store; not sent to apps.
  package var once: Bool
  /// Whether `accuracy` is a temporary full accuracy (`requestTemporaryFullAccuracyAuthorization`)
  /// over a reduced decision: it lasts while the app is in use, and the store keeps the reduced
  /// decision underneath (``persisted``), so that it ends when the daemon starts. Not sent to apps.
  package var temporaryFullAccuracy: Bool
  /// Whether a person (an agent) is being asked about this app now (Apple's
  /// `authorizationRequestInProgress`). Sent to apps; never stored.
  package var requestInProgress: Bool

  /// Creates a snapshot.
  /// - Parameters:
  ///   - status: The status.
  ///   - accuracy: The accuracy (default full).
  ///   - servicesEnabled: The global switch (default on).
  ///   - once: Whether it is an "allow once" (default no).
  ///   - temporaryFullAccuracy: Whether full accuracy is temporary (default no).
  ///   - requestInProgress: Whether an agent is being asked (default no).
  package init(
    status: AuthorizationStatus, accuracy: AccuracyAuthorization = .fullAccuracy,
    servicesEnabled: Bool = true, once: Bool = false, temporaryFullAccuracy: Bool = false,
    requestInProgress: Bool = false
  ) {
    self.status = status
    self.accuracy = accuracy
    self.servicesEnabled = servicesEnabled
    self.once = once
    self.temporaryFullAccuracy = temporaryFullAccuracy
    self.requestInProgress = requestInProgress
  }

  /// The decision as the store keeps it: a temporary full accuracy is stored as the reduced
  /// accuracy under it, and no question is ever open in the store.
  package var persisted: AuthorizationSnapshot {
    var stored = self
    if temporaryFullAccuracy {
      stored.accuracy = .reducedAccuracy
      stored.temporaryFullAccuracy = false
    }
    stored.requestInProgress = false
    return stored
  }

  /// Whether locations may be delivered: services on, and authorized always or when in use.
  package var allowsLocation: Bool { servicesEnabled && status.isAuthorized }

  /// Whether headings may be delivered (and a compass run for the app): services on and the app
  /// not denied or restricted. An app that has not asked may have headings, as on Apple
  /// platforms; its true heading needs location updates, which it cannot have.
  package var allowsHeadings: Bool {
    guard servicesEnabled else { return false }
    switch status {
    case .notDetermined, .authorizedAlways, .authorizedWhenInUse: return true
    case .denied, .restricted: return false
    }
  }

  /// Whether the app receives approximate locations only.
  package var isReduced: Bool { accuracy == .reducedAccuracy }
}

/// How an app's authorization request is answered when no agent (a person) is asked and nothing
/// is stored.
package enum AuthorizationPolicy: String, Sendable, Equatable, CaseIterable {
  /// Grant what the app asks for (when in use, or always). The default: a process that runs as the
  /// user already can open the user's devices and files; the store remembers the decision, and a
  /// decision stored with `locationctl` or by a test wins over this policy.
  case grant
  /// Deny every request.
  case deny
}
