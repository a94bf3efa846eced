/// Counts kept by `GPSDDecoder`.
///
/// Every line lands in exactly one of `messages`, `garbageLines`, `overlongLines` or `otherLines`.
package struct GPSDStatistics: Sendable, Equatable {
  /// Lines seen.
  package var lines = 0
  /// Lines that held a JSON object with a class (all classes).
  package var messages = 0
  /// `TPV` objects.
  package var tpv = 0
  /// `SKY` objects.
  package var sky = 0
  /// `ATT` objects.
  package var attitude = 0
  /// `VERSION` objects.
  package var versions = 0
  /// `ERROR` objects.
  package var errors = 0
  /// Objects of other classes.
  package var otherClasses = 0
  /// Lines that were not a JSON object with a string `class`.
  package var garbageLines = 0
  /// Lines longer than `GPSDDecoder.maximumLineLength`, discarded.
  package var overlongLines = 0
  /// Blank lines and `#` comments.
  package var otherLines = 0
  /// Members that were present but unusable, over all objects.
  package var invalidFields = 0
  /// 1-based number of the first garbage or overlong line, if any.
  package var firstBadLine: Int?
  /// Why that line was bad (no coordinates in it).
  package var firstBadReason: String?

  /// Creates empty statistics.
  package init() {}

  mutating func noteBad(_ reason: String) {
    if firstBadLine == nil {
      firstBadLine = lines
      firstBadReason = reason
    }
  }

  mutating func count(_ message: GPSDMessage) {
    messages += 1
    switch message {
    case .version: versions += 1
    case .tpv(let tpv):
      self.tpv += 1
      invalidFields += tpv.invalidFields.count
    case .sky(let sky):
      self.sky += 1
      invalidFields += sky.invalidFields.count
    case .attitude(let attitude):
      self.attitude += 1
      invalidFields += attitude.invalidFields.count
    case .error: errors += 1
    case .other: otherClasses += 1
    }
  }
}
