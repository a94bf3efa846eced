/// Counts kept by `NMEADecoder`: what was decoded, what was skipped and why.
///
/// Every sentence lands in exactly one of `sentences`, `checksumErrors`, `missingChecksum`,
/// `proprietary`, `unknown` or `malformed`; a line without any sentence counts in `otherLines`.
/// (A line may hold more than one sentence when a receiver drops a line feed.)
package struct NMEAStatistics: Sendable, Equatable {
  /// Lines seen (line feeds, plus a last line without one).
  package var lines = 0
  /// Sentences of a known kind whose checksum matched and whose fields decoded.
  package var sentences = 0
  /// Sentences whose checksum did not match their content (skipped).
  package var checksumErrors = 0
  /// Sentences without a `*hh` checksum (skipped unless `Options.acceptMissingChecksum`).
  package var missingChecksum = 0
  /// Proprietary sentences (`$P...`) with a good checksum, skipped.
  package var proprietary = 0
  /// Sentences with a good checksum of a kind this decoder does not handle (AIS `!AIVDM`, `MWV`,
  /// ...), skipped.
  package var unknown = 0
  /// Known sentences with a good checksum whose fields are not valid (letters in a number,
  /// minutes past 60, an hour past 23, ...), skipped whole.
  package var malformed = 0
  /// Lines that hold no sentence: blank, `#` comments, binary noise.
  package var otherLines = 0
  /// Lines longer than `NMEADecoder.maximumLineLength` bytes (counted in `malformed` as well).
  package var overlongLines = 0
  /// Fixes produced (`.fix` and `.undatedFix`).
  package var fixes = 0
  /// Epochs that closed without a valid position (`.noFix`, or dropped when undated).
  package var noFixEpochs = 0
  /// 1-based line number of the first checksum error, malformed or overlong sentence, if any.
  package var firstBadLine: Int?
  /// What was wrong with the line `firstBadLine` names (no coordinates in it).
  package var firstBadReason: String?
  var perKind = [Int](repeating: 0, count: NMEASentenceKind.allCases.count)

  /// Creates empty statistics.
  package init() {}

  /// The number of decoded sentences of one kind.
  /// - Parameter kind: the sentence kind.
  /// - Returns: how many sentences of that kind were decoded.
  package func count(of kind: NMEASentenceKind) -> Int { perKind[kind.rawValue] }

  /// Decoded sentences per kind, for kinds seen at least once.
  package var perType: [NMEASentenceKind: Int] {
    var result: [NMEASentenceKind: Int] = [:]
    for kind in NMEASentenceKind.allCases where perKind[kind.rawValue] > 0 {
      result[kind] = perKind[kind.rawValue]
    }
    return result
  }

  /// The first problem as a `FormatError` with its line number, or nil when every sentence was
  /// good.
  /// - Parameter file: the file name to put in the error, if any.
  /// - Returns: the error describing the first bad line.
  package func firstError(file: String? = nil) -> FormatError? {
    guard let firstBadLine else { return nil }
    return FormatError(
      .malformed, firstBadReason ?? "bad NMEA sentence", file: file, line: firstBadLine)
  }

  mutating func noteBad(line: Int, _ reason: StaticString) {
    if firstBadLine == nil {
      firstBadLine = line
      firstBadReason = reason.description
    }
  }
}
