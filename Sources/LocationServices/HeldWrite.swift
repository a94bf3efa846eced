import LocationEngine
import LocationModel

/// A write the hub commits through its ``CommitOutbox`` before it announces what depends on it
/// (README, "When the store fails").
enum HeldWrite: Sendable {
  /// One evaluation's region states (and, in `locationd`, the events kept for the app), committed
  /// at `time` (wall-clock seconds); released as the `regionEvents` delivery.
  case regionEvents(group: String, [RegionEvent], time: Double)
  /// A region no longer monitored: its row goes (a restart must not bring it back).
  case regionRemoved(group: String, identifier: String)
  /// The app's decision and the services switch.
  case authorization(AuthorizationSnapshot)
  /// A visit (and, in `locationd`, the event kept for the app), committed at `time`; released as
  /// the `visit` delivery.
  case visit(Visit, time: Double)
  /// Visit monitoring on or off for the app, from `time` (wall-clock seconds).
  case visitMonitoring(Bool, time: Double)
}
