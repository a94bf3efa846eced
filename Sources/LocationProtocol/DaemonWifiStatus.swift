import LocationFormats

/// What the daemon knows of Wi-Fi (`locationctl wifi`): the access points it learned from its own
/// fixes, and whether it learns.
package struct DaemonWifiStatus: Sendable, Equatable {
  /// Whether learning is on (`wifi-learning` in `locationd.conf`).
  package var learning: Bool
  /// Access points known.
  package var known: Int
  /// Of them, those recognised as mobile (never used for positioning).
  package var mobile: Int
  /// The newest time an access point was heard with a good fix, seconds since 1970; nil when none.
  package var lastLearned: Double?
  /// How many were forgotten, when the request forgot them.
  package var forgotten: Int?

  /// Creates a status.
  package init(
    learning: Bool, known: Int, mobile: Int, lastLearned: Double? = nil, forgotten: Int? = nil
  ) {
    self.learning = learning
    self.known = known
    self.mobile = mobile
    self.lastLearned = lastLearned
    self.forgotten = forgotten
  }
}

extension DaemonWifiStatus: WireObject {
  package static var wireBlank: DaemonWifiStatus {
    DaemonWifiStatus(learning: false, known: 0, mobile: 0)
  }

  /// `learning`, `known`, `mobile`, and `lastLearned` and `forgotten` when known.
  package mutating func wire(_ c: inout WireCoder) throws(DaemonProtocolError) {
    try c.field("learning", &learning, default: false)
    try c.field("known", &known, default: 0)
    try c.field("mobile", &mobile, default: 0)
    try c.omittable("lastLearned", &lastLearned)
    try c.omittable("forgotten", &forgotten)
  }
}
