import Foundation

/// The library's small logger: lines on standard error, a category per source, off unless
/// `CORELOCATION_LOG` asks (`info` or `debug`). Coordinates never appear in log lines.
///
/// `info`: sources starting, stopping and failing. `debug`: also every fix a source delivers, with
/// its time and accuracy (what `whereami -v` shows).
package enum HubLog {
  /// How much is logged.
  package enum Level: Int, Sendable, Comparable {
    /// Nothing.
    case off = 0
    /// Source lifecycle.
    case info = 1
    /// Every fix.
    case debug = 2

    package static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }
  }

  /// The level from `CORELOCATION_LOG`, read when the first message is considered.
  package static let level: Level = {
    switch ProcessInfo.processInfo.environment["CORELOCATION_LOG"]?.lowercased() {
    case "debug": return .debug
    case "info", "1", "on": return .info
    default: return .off  // an environment variable
    }
  }()

  /// Writes a line `corelocation[category]: message` when `level` is enabled.
  package static func write(
    _ level: Level, _ category: String, _ message: @autoclosure () -> String
  ) {
    guard level <= self.level, level != .off else { return }
    FileHandle.standardError.write(Data("corelocation[\(category)]: \(message())\n".utf8))
  }
}
