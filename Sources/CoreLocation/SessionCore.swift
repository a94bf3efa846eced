import Foundation
internal import LocationEngine
internal import LocationModel
import LocationServices
import Synchronization

/// What `CLServiceSession` and `CLBackgroundActivitySession` share: a hub client that keeps the
/// app in use while it is registered, asks for the session's authorization once, and hands every
/// change of the app's authorization to the diagnostics sequences that are being iterated.
///
/// The rule on Linux (ours; Apple's is about foreground and background, which Linux lacks): a
/// process that holds a session is in use, so `locationd` keeps an "allow once" and a temporary
/// full accuracy alive while it holds one, as it does while a manager, a `CLMonitor` or a
/// live-updates sequence is registered. For the same reason `insufficientlyInUse` is never true
/// for a held session, and `serviceSessionRequired` is never true: no service here needs a session.
final class SessionCore: HubClient {
  /// What a session asks for.
  enum Requirement: Sendable, Equatable {
    case none
    case whenInUse
    case always
  }

  /// The flags of one diagnostic, computed from the app's authorization.
  struct Flags: Sendable, Equatable {
    var accuracyLimited = false
    var alwaysAuthorizationDenied = false
    var authorizationDenied = false
    var authorizationDeniedGlobally = false
    var authorizationRequestInProgress = false
    var authorizationRestricted = false
    var fullAccuracyDenied = false
  }

  private struct State {
    var id: ClientID?
    var invalidated = false
    var flags: Flags
    var streams: [Int: AsyncStream<Flags>.Continuation] = [:]
    var nextStream = 0
  }

  let requirement: Requirement
  let purposeKey: String?
  private let environment: HubEnvironment
  private let state: Mutex<State>

  init(environment: HubEnvironment, requirement: Requirement, purposeKey: String?) {
    self.environment = environment
    self.requirement = requirement
    self.purposeKey = purposeKey
    state = Mutex(
      State(
        flags: Self.flags(
          environment.hub.authorization, requirement: requirement, purposeKey: purposeKey)))
  }

  /// Registers (the app is in use from now on) and asks for what the session needs: the
  /// authorization, then full accuracy for the purpose key (after the authorization was decided).
  func start() {
    let hub = environment.hub
    let id = hub.register(self)
    state.withLock { $0.id = id }
    switch requirement {
    case .none: break
    case .whenInUse: hub.requestAuthorization(always: false)
    case .always: hub.requestAuthorization(always: true)
    }
    if let purposeKey {
      hub.requestTemporaryFullAccuracy(purposeKey: purposeKey) { _ in }
    }
  }

  /// Ends the session: the app may stop being in use, and every diagnostics sequence finishes.
  func invalidate() {
    let (id, streams) = state.withLock {
      state -> (ClientID?, [AsyncStream<Flags>.Continuation]) in
      guard !state.invalidated else { return (nil, []) }
      state.invalidated = true
      defer { state.streams = [:] }
      return (state.id, state.streams.sorted { $0.key < $1.key }.map(\.value))
    }
    if let id { environment.hub.unregister(id) }
    for stream in streams { stream.finish() }
  }

  /// A new sequence of diagnostics: the current one first, then one at every change, newest kept;
  /// finished at once when the session was invalidated.
  func makeStream() -> AsyncStream<Flags> {
    let (stream, continuation) = AsyncStream.makeStream(
      of: Flags.self, bufferingPolicy: .bufferingNewest(1))
    let key = state.withLock { state -> Int? in
      guard !state.invalidated else { return nil }
      continuation.yield(state.flags)
      state.nextStream += 1
      state.streams[state.nextStream] = continuation
      return state.nextStream
    }
    guard let key else {
      continuation.finish()
      return stream
    }
    continuation.onTermination = { [weak self] _ in
      _ = self?.state.withLock { $0.streams.removeValue(forKey: key) }
    }
    return stream
  }

  /// The flags Apple's diagnostics report, for an authorization.
  static func flags(
    _ authorization: AuthorizationSnapshot, requirement: Requirement, purposeKey: String?
  ) -> Flags {
    var flags = Flags()
    let asking = authorization.requestInProgress
    flags.authorizationRequestInProgress = asking
    flags.authorizationDeniedGlobally = !authorization.servicesEnabled
    flags.authorizationDenied = authorization.servicesEnabled && authorization.status == .denied
    flags.authorizationRestricted = authorization.status == .restricted
    flags.accuracyLimited = authorization.status.isAuthorized && authorization.isReduced
    flags.alwaysAuthorizationDenied =
      requirement == .always && authorization.status == .authorizedWhenInUse && !asking
    flags.fullAccuracyDenied = purposeKey != nil && flags.accuracyLimited && !asking
    return flags
  }

  // MARK: HubClient

  func hub(_ service: any LocationService, deliver delivery: HubDelivery) {
    guard case .authorization(let snapshot) = delivery else { return }
    let next = Self.flags(snapshot, requirement: requirement, purposeKey: purposeKey)
    let streams = state.withLock { state -> [AsyncStream<Flags>.Continuation] in
      guard state.flags != next else { return [] }
      state.flags = next
      return state.streams.sorted { $0.key < $1.key }.map(\.value)
    }
    for stream in streams { stream.yield(next) }
  }
}
