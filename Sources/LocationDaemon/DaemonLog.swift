import Foundation
import Synchronization

/// `locationd`'s log: lines on standard error (programs print diagnostics there; CONTRIBUTING.md).
/// No coordinates are ever logged.
package enum DaemonLog {
  /// Whether lines are written (tests turn it off).
  package static let enabled = Atomic<Bool>(true)

  /// Writes `locationd: message`.
  /// - Parameter message: The line.
  package static func write(_ message: @autoclosure () -> String) {
    guard enabled.load(ordering: .relaxed) else { return }
    FileHandle.standardError.write(Data("locationd: \(message())\n".utf8))
  }
}
