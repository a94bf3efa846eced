import Foundation
import LocationControl
import Synchronization

/// Collects what `locationctl` writes.
final class Captured: Sendable {
  private let outputText = Mutex("")
  private let errorText = Mutex("")

  /// Standard output so far.
  var output: String { outputText.withLock { $0 } }
  /// Standard error so far.
  var error: String { errorText.withLock { $0 } }

  /// An I/O set writing here, reading from `input`.
  func io(input: Int32 = -1, onOutput: (@Sendable (String) -> Void)? = nil) -> ControlIO {
    ControlIO(
      input: input,
      output: { [self] text in
        outputText.withLock { $0 += text }
        onOutput?(text)
      },
      error: { [self] text in errorText.withLock { $0 += text } })
  }
}
