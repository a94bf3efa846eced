import Foundation
import LocationServices

/// An object that keeps your app in use, allowing a when-in-use authorized app to receive updates
/// or events.
///
/// Linux has no foreground, background or status-bar indicator. Here the session keeps the app in
/// use while it is held (`CLServiceSession`'s rule): `locationd` keeps the app's "allow once" and
/// temporary full accuracy alive, even when the process has no location manager. It asks for no
/// authorization. `diagnostics` reports the app's state as `CLServiceSession`'s does;
/// `insufficientlyInUse` and `serviceSessionRequired` are always `false` here. Releasing the
/// session invalidates it.
public final class CLBackgroundActivitySession: Sendable {
  /// Values that describe the state of a background activity session.
  public struct Diagnostic: Sendable {
    /// Whether the user denied the app.
    public let authorizationDenied: Bool
    /// Whether location services are off for the whole device.
    public let authorizationDeniedGlobally: Bool
    /// Whether a person is being asked about the app now.
    public let authorizationRequestInProgress: Bool
    /// Whether the app's authorization is restricted.
    public let authorizationRestricted: Bool
    /// Whether the app is not in use enough for the session: never on Linux.
    public let insufficientlyInUse: Bool
    /// Whether a service session is required and missing: never on Linux.
    public let serviceSessionRequired: Bool

    init(_ flags: SessionCore.Flags) {
      authorizationDenied = flags.authorizationDenied
      authorizationDeniedGlobally = flags.authorizationDeniedGlobally
      authorizationRequestInProgress = flags.authorizationRequestInProgress
      authorizationRestricted = flags.authorizationRestricted
      insufficientlyInUse = false
      serviceSessionRequired = false
    }
  }

  /// An object you use to access background activity session diagnostic events.
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

  /// The session's diagnostics: the current one, then one at every change.
  public var diagnostics: Diagnostics { Diagnostics(core: core) }

  /// Creates a new background activity session.
  public init() {
    core = SessionCore(environment: HubEnvironment.current, requirement: .none, purposeKey: nil)
    core.start()
  }

  deinit { core.invalidate() }

  /// Invalidates the background activity session.
  public func invalidate() { core.invalidate() }
}
