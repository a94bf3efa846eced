import Geodesy
import LocationModel

/// One client's location-update state: a value-type state machine (CONTRIBUTING.md, "How the code is written").
///
/// States: idle; streaming (`startUpdatingLocation`); requesting (`requestLocation`, waiting for
/// one fix). Each transition returns what to tell the client; the engine applies it.
struct UpdateSession: Sendable {
  enum Mode: Sendable, Equatable {
    case idle
    case streaming(UpdateRequest)
    case requesting(UpdateRequest, best: Fix?)
  }

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

  private(set) var mode: Mode = .idle
  private(set) var lastDelivered: Fix?
  /// True once `locationUnknown` has been reported for the current outage.
  private var outageReported = false

  var isActive: Bool {
    switch mode {
    case .idle: return false
    case .streaming, .requesting: return true
    }
  }

  var request: UpdateRequest? {
    switch mode {
    case .idle: return nil
    case .streaming(let request): return request
    case .requesting(let request, _): return request
    }
  }

  mutating func start(_ request: UpdateRequest) {
    mode = .streaming(request)
    outageReported = false
  }

  /// Apple: "Calling this method while location services are already running does nothing."
  /// Returns false when the request was ignored for that reason.
  mutating func requestOne(_ request: UpdateRequest) -> Bool {
    switch mode {
    case .streaming, .requesting:
      return false
    case .idle:
      mode = .requesting(request, best: nil)
      outageReported = false
      return true
    }
  }

  mutating func change(_ request: UpdateRequest) {
    switch mode {
    case .idle: break
    case .streaming: mode = .streaming(request)
    case .requesting(_, let best): mode = .requesting(request, best: best)
    }
  }

  mutating func stop() {
    mode = .idle
  }

  /// A fix arrived. `bestPossible` is the best nominal accuracy among the running sources.
  mutating func receive(_ fix: Fix, bestPossible: Double) -> Action {
    take(fix, bestPossible: bestPossible).action(fix)
  }

  /// `receive(_:bestPossible:)` without the fix in its answer.
  mutating func take(_ fix: Fix, bestPossible: Double) -> Received {
    outageReported = false
    switch mode {
    case .idle:
      return .none
    case .streaming(let request):
      // The last delivered coordinate is read in place (binding `lastDelivered` would copy the
      // whole fix for every fix received).
      if request.distanceFilter > 0, let lastLatitude = lastDelivered?.latitude,
        let lastLongitude = lastDelivered?.longitude
      {
        let moved = Geodesic.wgs84.distance(
          latitude1: lastLatitude, longitude1: lastLongitude,
          latitude2: fix.latitude, longitude2: fix.longitude)
        guard moved >= request.distanceFilter else { return .none }
      }
      lastDelivered = fix
      return .deliver
    case .requesting(let request, let best):
      if Self.satisfies(fix, request, bestPossible: bestPossible) {
        mode = .idle
        lastDelivered = fix
        return .complete
      }
      if best.map({ fix.horizontalAccuracy <= $0.horizontalAccuracy }) ?? true {
        mode = .requesting(request, best: fix)
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
    switch mode {
    case .idle, .streaming:
      return .none
    case .requesting(_, let best):
      mode = .idle
      if let best {
        lastDelivered = best
        return .complete(best)
      }
      return .completeWithError(.locationUnknown)
    }
  }

  /// A source failed: streaming clients hear `locationUnknown` once per outage; a pending request
  /// waits for its deadline (Apple reports failure of `requestLocation` only when it gives up).
  mutating func sourceFailed() -> Action {
    switch mode {
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
    switch mode {
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
    switch mode {
    case .idle:
      return .none
    case .streaming:
      mode = .idle
      return .fail(.denied)
    case .requesting:
      mode = .idle
      return .completeWithError(.denied)
    }
  }
}
