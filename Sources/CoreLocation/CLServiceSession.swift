import Foundation
import LocationServices

/// An object that provides diagnostics about an app's authorization to use location services.
///
/// On Linux (the rule, ours where Apple speaks of foreground and background): holding a session is
/// how a process says it is in use. While any process of the app holds one (or has a
/// `CLLocationManager`, a `CLMonitor` or a `liveUpdates` sequence), `locationd` keeps the app's
/// "allow once" and temporary full accuracy; they end when the last of these goes. Creating a
/// session with `.whenInUse` or `.always` asks for that authorization as
/// `requestWhenInUseAuthorization()` / `requestAlwaysAuthorization()` do (an agent is asked, or the
/// policy decides; an app that already has it is not asked again); `.none` asks nothing. A
/// `fullAccuracyPurposeKey` then asks for temporary full accuracy as
/// `CLLocationManager.requestTemporaryFullAccuracyAuthorization(withPurposeKey:)` does.
///
/// `diagnostics` reports the app's state: the current diagnostic when iteration starts, then one
/// at every change; it finishes when the session is invalidated. `insufficientlyInUse` and
/// `serviceSessionRequired` are always `false` here: a process that holds a session is in use, and
/// no service requires a session (there is no `NSLocationRequireExplicitServiceSession`).
/// Releasing the session invalidates it.
public final class CLServiceSession: Sendable {
  /// Values that describe when the service session needs to request authorization.
  public enum AuthorizationRequirement: Equatable, Hashable {
    /// The session asks for no authorization; it keeps the app in use.
    case none
    /// The session asks for when-in-use authorization.
    case whenInUse
    /// The session asks for always authorization.
    case always
  }

  /// Values that describe the state of a core location services session.
  public struct Diagnostic: Sendable {
    /// Whether the app has reduced accuracy only (it is authorized, approximately).
    public let accuracyLimited: Bool
    /// Whether the session asks for always authorization and the app has when-in-use only.
    public let alwaysAuthorizationDenied: Bool
    /// Whether the user denied the app.
    public let authorizationDenied: Bool
    /// Whether location services are off for the whole device (`locationctl services off`).
    public let authorizationDeniedGlobally: Bool
    /// Whether a person is being asked about the app now (through `locationctl agent`).
    public let authorizationRequestInProgress: Bool
    /// Whether the app's authorization is restricted.
    public let authorizationRestricted: Bool
    /// Whether the session named a full accuracy purpose key and the app has reduced accuracy.
    public let fullAccuracyDenied: Bool
    /// Whether the app is not in use enough for the session: never on Linux (type documentation).
    public let insufficientlyInUse: Bool
    /// Whether a service session is required and missing: never on Linux.
    public let serviceSessionRequired: Bool

    init(_ flags: SessionCore.Flags) {
      accuracyLimited = flags.accuracyLimited
      alwaysAuthorizationDenied = flags.alwaysAuthorizationDenied
      authorizationDenied = flags.authorizationDenied
      authorizationDeniedGlobally = flags.authorizationDeniedGlobally
      authorizationRequestInProgress = flags.authorizationRequestInProgress
      authorizationRestricted = flags.authorizationRestricted
      fullAccuracyDenied = flags.fullAccuracyDenied
      insufficientlyInUse = false
      serviceSessionRequired = false
    }
  }

  /// An object you use to access location service session diagnostic events.
  public final class Diagnostics: AsyncSequence, Sendable {
    /// The element type.
    public typealias Element = Diagnostic

    let core: SessionCore

    init(core: SessionCore) { self.core = core }

    /// Creates the iterator: the current diagnostic, then one at every change.
    public func makeAsyncIterator() -> Iterator {
      Iterator(base: core.makeStream().makeAsyncIterator())
    }

    /// The iterator of the diagnostics.
    public struct Iterator: AsyncIteratorProtocol {
      var base: AsyncStream<SessionCore.Flags>.Iterator

      /// The next diagnostic, or `nil` once the session is invalidated.
      public mutating func next() async -> Diagnostic? {
        await base.next().map(Diagnostic.init)
      }
    }
  }

  let core: SessionCore

  /// A property that describes the current state of the services session.
  public var diagnostics: Diagnostics { Diagnostics(core: core) }

  /// Creates a services session by using the authorization mode you specify.
  public convenience init(authorization: AuthorizationRequirement) {
    self.init(authorization: authorization, purposeKey: nil)
  }

  /// Creates a services session by using the authorization mode and purpose key you specify.
  public convenience init(
    authorization: AuthorizationRequirement, fullAccuracyPurposeKey: String
  ) {
    self.init(authorization: authorization, purposeKey: fullAccuracyPurposeKey)
  }

  private init(authorization: AuthorizationRequirement, purposeKey: String?) {
    let requirement: SessionCore.Requirement
    switch authorization {
    case .none: requirement = .none
    case .whenInUse: requirement = .whenInUse
    case .always: requirement = .always
    }
    core = SessionCore(
      environment: HubEnvironment.current, requirement: requirement, purposeKey: purposeKey)
    core.start()
  }

  deinit { core.invalidate() }

  /// Ends the session: it no longer keeps the app in use, and its diagnostics finish.
  public func invalidate() { core.invalidate() }
}
