import LocationProtocol
import LocationStore

// The control role's `history` request (`locationctl export`): a page of the track history.
extension DaemonServer {
  /// What `locationctl status` shows of the history; nil when it is off.
  var historyStatus: DaemonHistoryStatus? {
    guard configuration.history.enabled else { return nil }
    let days = configuration.history.retentionDays
    guard let extent = try? store.historyExtent() else {
      return DaemonHistoryStatus(points: -1, days: days)
    }
    return DaemonHistoryStatus(
      points: extent.count, oldest: extent.oldest, newest: extent.newest, days: days)
  }

  /// One page of the track history: at most `DaemonHistoryQuery.maximumPoints` points, whatever
  /// the query asks, so that no reply line grows with the history. The first page of an export
  /// (no cursor) commits the points the recorder still holds, so that it reads everything
  /// recorded until then.
  /// - Throws: `unsupported` when the history is off (`history = no`, the default) or the store
  ///   cannot be read; `malformed` for bounds that are not finite.
  func historyPage(_ query: DaemonHistoryQuery, id: Int) throws(DaemonProtocolError)
    -> DaemonHistoryPage
  {
    guard configuration.history.enabled else {
      let file = configuration.configPath ?? "locationd.conf"
      throw DaemonProtocolError(
        code: .unsupported,
        message: "track history is off: set history = yes in \(file) and restart locationd",
        id: id)
    }
    if query.after == nil { recorder.withLock { $0 }?.flush() }
    let limit = min(max(1, query.limit), DaemonHistoryQuery.maximumPoints)
    do {
      let page = try store.history(
        since: query.since, until: query.until,
        after: query.after.map { HistoryCursor(time: $0.time, sequence: $0.sequence) },
        limit: limit)
      return DaemonHistoryPage(
        points: page.fixes,
        next: page.next.map { DaemonHistoryCursor(time: $0.time, sequence: $0.sequence) })
    } catch {
      if error.code == .invalidValue {
        throw DaemonProtocolError(code: .malformed, message: error.message, id: id)
      }
      throw DaemonProtocolError(
        code: .unsupported, message: "the track history cannot be read (\(error.message))", id: id)
    }
  }
}
