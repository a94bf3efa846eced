import Geodesy
import LocationModel

/// One client's location-update state: a value-type state machine (CONTRIBUTING.md, "How the code is written").
///
/// States: idle; streaming (`startUpdatingLocation`); requesting (`requestLocation`, waiting for
/// one fix). Each transition returns what to tell the client; the engine applies it.
struct UpdateSession: Sendable {
  /// What the session wants done after a transition.
  enum Action: Sendable, Equatable {
    case none
    case deliver(Fix)
    case fail(EngineError)
    /// Deliver the fix and finish the request (cancel its timer).
    case complete(Fix)
    /// Finish the request with an error (cancel its timer).
    case completeWithError(EngineError)
  }

  /// What a fix received does (`take(_:bestPossible:)`): the fix is the caller's, so the answer
  /// carries none, and the hot path copies no fix into it.
  enum Received: Sendable, Equatable {
    case none
    /// Deliver the fix.
    case deliver
    /// Deliver the fix and finish the request (cancel its timer).
    case complete

    /// The same as an `Action` on `fix`.
    func action(_ fix: Fix) -> Action {
      switch self {
      case .none: .none
      case .deliver: .deliver(fix)
      case .complete: .complete(fix)
      }
    }
  }

  /// The state, kept as its parts so that a fix received reads the request in place: an enum
  /// with the request and best fix as payloads would be copied whole for every fix matched.
  private enum Kind {
    case idle
    case streaming
    case requesting
  }
  private var kind = Kind.idle
  /// The request (streaming or requesting; left as it was when idle).
  private var current = UpdateRequest()
  /// The most accurate fix a request has seen so far.
  private var best: Fix?
  /// Where the last fix delivered was: the distance filter and a deferral count from it. Only the
  /// coordinate: a whole fix copied into every client's session for every fix was four
  /// `memcpy` calls and a reference count each (`locbench daemon`, 500 clients).
  private(set) var lastDelivered: DeferredUpdates.Origin?
  /// True once `locationUnknown` has been reported for the current outage.
  private var outageReported = false

  var isActive: Bool { kind != .idle }

  /// Whether the session streams (`startUpdatingLocation`), not waiting for one fix.
  var isStreaming: Bool { kind == .streaming }

  var request: UpdateRequest? { kind == .idle ? nil : current }

  mutating func start(_ request: UpdateRequest) {
    kind = .streaming
    current = request
    best = nil
    outageReported = false
  }

  /// Apple: "Calling this method while location services are already running does nothing."
  /// Returns false when the request was ignored for that reason.
  mutating func requestOne(_ request: UpdateRequest) -> Bool {
    guard kind == .idle else { return false }
    kind = .requesting
    current = request
    best = nil
    outageReported = false
    return true
  }

  mutating func change(_ request: UpdateRequest) {
    if kind != .idle { current = request }
  }

  mutating func stop() {
    kind = .idle
    best = nil
  }

  /// A fix arrived. `bestPossible` is the best nominal accuracy among the running sources.
  mutating func receive(_ fix: Fix, bestPossible: Double) -> Action {
    take(fix, bestPossible: bestPossible).action(fix)
  }

  /// `receive(_:bestPossible:)` without the fix in its answer.
  mutating func take(_ fix: Fix, bestPossible: Double) -> Received {
    outageReported = false
    switch kind {
    case .idle:
      return .none
    case .streaming:
      if current.distanceFilter > 0, let last = lastDelivered {
        let moved = Geodesic.wgs84.distance(
          latitude1: last.latitude, longitude1: last.longitude,
          latitude2: fix.latitude, longitude2: fix.longitude)
        guard moved >= current.distanceFilter else { return .none }
      }
      lastDelivered = DeferredUpdates.Origin(fix)
      return .deliver
    case .requesting:
      if Self.satisfies(fix, current, bestPossible: bestPossible) {
        kind = .idle
        best = nil
        lastDelivered = DeferredUpdates.Origin(fix)
        return .complete
      }
      if best.map({ fix.horizontalAccuracy <= $0.horizontalAccuracy }) ?? true {
        best = fix
      }
      return .none
    }
  }

  /// The rule for `requestLocation`: a fix ends the request when it meets `desiredAccuracy`, or when
  /// no running source can do better than it (its accuracy is at or below the best nominal
  /// accuracy of the running sources).
  static func satisfies(_ fix: Fix, _ request: UpdateRequest, bestPossible: Double) -> Bool {
    fix.horizontalAccuracy <= max(request.desiredAccuracy, bestPossible)
  }

  /// The request's deadline passed: the best fix seen, or `locationUnknown`.
  mutating func timeout() -> Action {
    guard kind == .requesting else { return .none }
    kind = .idle
    defer { best = nil }
    if let best {
      lastDelivered = DeferredUpdates.Origin(best)
      return .complete(best)
    }
    return .completeWithError(.locationUnknown)
  }

  /// A source failed: streaming clients hear `locationUnknown` once per outage; a pending request
  /// waits for its deadline (Apple reports failure of `requestLocation` only when it gives up).
  mutating func sourceFailed() -> Action {
    switch kind {
    case .idle, .requesting:
      return .none
    case .streaming:
      if outageReported { return .none }
      outageReported = true
      return .fail(.locationUnknown)
    }
  }

  /// Every source ended for good.
  mutating func sourcesEnded() -> Action {
    switch kind {
    case .idle:
      return .none
    case .streaming:
      return .fail(.sourcesEnded)
    case .requesting:
      return timeout()
    }
  }

  /// Authorization was withdrawn: updates stop with `denied`.
  mutating func denied() -> Action {
    switch kind {
    case .idle:
      return .none
    case .streaming:
      kind = .idle
      return .fail(.denied)
    case .requesting:
      kind = .idle
      best = nil
      return .completeWithError(.denied)
    }
  }
}
