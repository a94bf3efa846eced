import Geodesy
import LocationModel

/// Deferred location updates in the step function (`DeferredUpdates` holds the rules): a client's
/// locations, after its distance filter, are held and delivered as one batch when the distance or
/// the timeout is reached, then `deferredFinished(nil)`; Apple's preconditions give their error
/// codes; `disallowDeferredLocationUpdates` and stopping updates deliver the held batch and finish
/// with `deferredCanceled`.
///
/// "GPS hardware" (Apple's precondition for deferral) is a running source whose nominal accuracy
/// is GNSS-class (20 m or better) or a recording (replays of GNSS tracks).
extension LocationEngine {
  mutating func allowDeferred(
    _ client: ClientID, distance: Double, timeout: Double, at now: EngineInstant,
    into effects: inout [EngineEffect]
  ) {
    let session = sessions[client]
    let streaming = session?.isStreaming == true
    let request = session?.request ?? UpdateRequest()
    let conditions = DeferredUpdates.Conditions(
      isUpdating: streaming && allowed, isPaused: isPaused(client),
      hasGNSS: sources.contains {
        $0.producesLocation && ($0.nominalAccuracy <= 20 || $0.nominalAccuracy == .infinity)
      },
      desiredAccuracy: request.desiredAccuracy, distanceFilter: request.distanceFilter)
    var deferral = deferrals[client] ?? DeferredUpdates()
    // The distance counts from the current location: the last one delivered to this client.
    if !deferral.isDeferring, let last = session?.lastDelivered {
      deferral.noteDelivered(last)
    }
    let action = deferral.allow(
      untilTraveled: distance, timeout: timeout, conditions: conditions, at: now.monotonic)
    deferrals[client] = deferral
    finishDeferral(client, action, into: &effects)
    // A new request over a running deferral finishes the old one and starts the new one.
    if case .finish = action, let deadline = deferrals[client]?.deadline {
      effects.append(.armTimer(.deferralDeadline(client), deadline: deadline))
    }
  }

  /// Applies what the deferral says.
  mutating func finishDeferral(
    _ client: ClientID, _ action: DeferredUpdates.Action?, into effects: inout [EngineEffect]
  ) {
    switch action {
    case nil, .some(.none), .some(.hold):
      break
    case .some(.deliver(let fix)):
      effects.append(.deliverLocations(client, [fix]))
    case .some(.started(let deadline)):
      if let deadline { effects.append(.armTimer(.deferralDeadline(client), deadline: deadline)) }
    case .some(.finish(let batch, let error)):
      effects.append(.cancelTimer(.deferralDeadline(client)))
      if !batch.isEmpty { effects.append(.deliverLocations(client, batch)) }
      effects.append(.deferredFinished(client, error))
    case .some(.reject(let failure)):
      effects.append(.deferredFinished(client, failure))
    }
  }

  /// Sends what a session did with a fix received through the client's deferral: a location to
  /// deliver is held while deferring. Returns whether a request was completed.
  /// - Parameters:
  ///   - received: The session's answer (`nil`: the client has no session).
  ///   - fix: The fix received.
  ///   - batch: `[fix]`, shared by every client's delivery.
  mutating func route(
    _ received: UpdateSession.Received?, of fix: Fix, _ client: ClientID, at now: EngineInstant,
    batch: [Fix], into effects: inout [EngineEffect]
  ) -> Bool {
    switch received {
    case nil, .some(.none):
      return false
    case .some(.deliver):
      // Deferrals are rare: no look-up without them.
      if !deferrals.isEmpty, deferrals[client]?.isDeferring == true {
        finishDeferral(client, deferrals[client]?.fix(fix, at: now.monotonic), into: &effects)
      } else {
        effects.append(.deliverLocations(client, batch))
      }
      return false
    case .some(.complete):
      effects.append(.cancelTimer(.requestTimeout(client)))
      effects.append(.deliverLocations(client, batch))
      return true
    }
  }
}
