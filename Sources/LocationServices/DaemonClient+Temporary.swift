import LocationModel
import LocationProtocol

// Temporary full accuracy through `locationd`: a request with an `id`, answered by
// `temporaryFullAccuracyResult` (docs/protocol.md, "Temporary full accuracy").
extension DaemonClient {
  /// Asks the daemon for temporary full accuracy; `completion` hears nil when a person was asked
  /// (the accuracy they chose arrives first, as an authorization delivery), else why no one was.
  /// Not connected, or the connection lost before the answer: declined with the reason.
  package func requestTemporaryFullAccuracy(
    purposeKey: String, completion: @escaping @Sendable (String?) -> Void
  ) {
    queue.async { [self] in
      let (id, welcomed, problem) = state.withLock { state -> (Int, Bool, String) in
        let id = state.nextTemporaryRequest
        state.nextTemporaryRequest += 1
        if state.welcomed { state.temporaryRequests[id] = completion }
        return (id, state.welcomed, state.problem)
      }
      guard welcomed else {
        completion(problem)
        return
      }
      write(.requestTemporaryFullAccuracy(id: id, purposeKey: purposeKey))
    }
  }

  /// The daemon's answer to a temporary full accuracy request.
  func temporaryFullAccuracyAnswered(id: Int, declined: String?) {
    let completion = state.withLock { $0.temporaryRequests.removeValue(forKey: id) }
    completion?(declined)
  }

  /// The connection ended: every request still waiting is declined with the reason.
  func declineTemporaryRequests(_ reason: String) {
    let waiting = state.withLock { state -> [@Sendable (String?) -> Void] in
      defer { state.temporaryRequests = [:] }
      return state.temporaryRequests.keys.sorted().compactMap { state.temporaryRequests[$0] }
    }
    for completion in waiting { completion(reason) }
  }
}
