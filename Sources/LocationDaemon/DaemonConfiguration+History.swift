import Foundation

/// The track history keys of `locationd.conf` (issue 18), in the main part of the file (before
/// any section). Off unless `history = yes`:
///
/// ```
/// history = yes            # keep the device's positions in the store (default no)
/// history-days = 30        # days a point is kept (default 30)
/// history-interval = 1     # seconds between two recorded points, at least (default 1)
/// ```
///
/// While it is on, the daemon asks its sources for locations all the time, as an app that
/// always updates would (`TrackRecorder`), and `locationctl export` reads what was kept.
package struct HistorySettings: Sendable, Equatable {
  /// Whether the daemon records its positions (`history`).
  package var enabled = false
  /// Days a point is kept before it is pruned (`history-days`).
  package var retentionDays = 30.0
  /// Seconds between two recorded points, at least (`history-interval`), by the fixes' times.
  package var minimumInterval = 1.0

  /// Settings with the defaults (off).
  package init() {}

  /// The keys this type reads.
  static let keys: Set<String> = ["history", "history-days", "history-interval"]

  /// Applies one `key = value` of the main part of the file.
  mutating func apply(key: String, value: String, place: String)
    throws(DaemonConfigurationError)
  {
    func number(_ range: ClosedRange<Double>) throws(DaemonConfigurationError) -> Double {
      guard let number = Double(value), range.contains(number) else {
        throw DaemonConfigurationError(
          message:
            "\(place): \(key) must be a number from \(Self.plain(range.lowerBound)) to "
            + "\(Self.plain(range.upperBound)), not '\(value)'")
      }
      return number
    }
    switch key {
    case "history": enabled = try DaemonConfiguration.yesOrNo(value, place: place, key: key)
    case "history-days": retentionDays = try number(0.01...36_500)
    case "history-interval": minimumInterval = try number(0...86_400)
    default:  // a key of another part of the file
      throw DaemonConfigurationError(message: "\(place): unknown key \(key)")
    }
  }

  private static func plain(_ value: Double) -> String {
    value == value.rounded() ? String(Int(value)) : String(value)
  }
}
