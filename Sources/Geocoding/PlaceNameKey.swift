/// The key under which the gazetteer indexes a name, so that "Zürich", "ZURICH" and "Zurich" meet:
/// lower case, compatibility decomposition (NFKD) with the nonspacing marks dropped, a few letters
/// that do not decompose spelled out (ß ss, æ ae, ø o, œ oe, ł l, đ and ð d, þ th, ı i, ħ h, ŋ n,
/// ŧ t, ĸ k), and every run of characters that are neither letters nor digits one space, trimmed.
///
/// The decomposition is a table (`PlaceNameFoldTable.swift`) that `scripts/build-fold-table.py`
/// makes with the rule and the Unicode version (Python's `unicodedata`) that
/// `scripts/build-gazetteer.py` folds the file's names with, so that a query's key is the file's
/// key for the same name whatever Unicode version Foundation or the Swift runtime has (only which
/// characters count as letters or digits is the runtime's); and it is read from the program's
/// constant data, where Foundation's decomposition kept about 30 KB of heap from its first use.
/// Hangul syllables decompose by the Unicode Standard's arithmetic (section 3.12).
package enum PlaceNameKey {
  /// The key of a name.
  ///
  /// - Parameter name: Any text.
  /// - Returns: The folded key, possibly empty.
  package static func fold(_ name: String) -> String {
    var output = String.UnicodeScalarView()
    var pendingSpace = false
    func append(_ scalar: Unicode.Scalar) {
      if isLetterOrDigit(scalar) {
        if pendingSpace && !output.isEmpty { output.append(" ") }
        pendingSpace = false
        output.append(scalar)
      } else {
        pendingSpace = true
      }
    }
    if name.utf8.allSatisfy({ $0 < 0x80 }) {
      // ASCII: decomposition changes nothing.
      for scalar in name.unicodeScalars {
        let value = scalar.value
        append(
          (0x41...0x5A).contains(value) ? Unicode.Scalar(value + 0x20) ?? scalar : scalar)
      }
      return String(output)
    }
    for scalar in name.lowercased().unicodeScalars {
      let value = scalar.value
      if value < 0x80 {
        append(scalar)
      } else if hangulSyllables.contains(value) {
        forEachJamo(ofSyllable: value, append)
      } else if !forEachFolded(value, append) {
        append(scalar)
      }
    }
    return String(output)
  }

  /// The Hangul syllables, U+AC00 to U+D7A3.
  private static let hangulSyllables: ClosedRange<UInt32> = 0xAC00...0xD7A3

  /// The conjoining jamo a Hangul syllable decomposes to, leading consonant, vowel and trailing
  /// consonant if any (the Unicode Standard, section 3.12, "Hangul Syllable Decomposition").
  private static func forEachJamo(ofSyllable value: UInt32, _ body: (Unicode.Scalar) -> Void) {
    let index = value - hangulSyllables.lowerBound
    let (leading, rest) = index.quotientAndRemainder(dividingBy: 21 * 28)
    let (vowel, trailing) = rest.quotientAndRemainder(dividingBy: 28)
    if let scalar = Unicode.Scalar(0x1100 + leading) { body(scalar) }
    if let scalar = Unicode.Scalar(0x1161 + vowel) { body(scalar) }
    if trailing > 0, let scalar = Unicode.Scalar(0x11A7 + trailing) { body(scalar) }
  }

  /// Calls `body` with each character that `value` folds to, from the table, and returns whether
  /// the table has it (a character it does not have folds to itself).
  private static func forEachFolded(_ value: UInt32, _ body: (Unicode.Scalar) -> Void) -> Bool {
    var low = 0
    var high = foldedScalars.count
    while low < high {
      let middle = (low + high) >> 1
      if foldedScalars[middle] < value { low = middle + 1 } else { high = middle }
    }
    guard low < foldedScalars.count, foldedScalars[low] == value, low < foldedEnds.count else {
      return false
    }
    let start = low == 0 ? 0 : Int(foldedEnds[low - 1])
    let end = Int(foldedEnds[low])
    let text = UnsafeBufferPointer(
      start: foldedText.utf8Start, count: foldedText.utf8CodeUnitCount)
    guard start <= end, end <= text.count else { return true }
    var bytes = text[start..<end].makeIterator()
    var decoder = UTF8()
    while case .scalarValue(let scalar) = decoder.decode(&bytes) { body(scalar) }
    return true
  }

  private static func isLetterOrDigit(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.properties.generalCategory {
    case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
      .decimalNumber, .letterNumber, .otherNumber:
      return true
    default:
      return false
    }
  }

  /// FNV-1a, 64 bits, over the UTF-8 bytes of a key (Fowler, Noll and Vo; the offset basis and
  /// prime of the IETF draft "The FNV Non-Cryptographic Hash Algorithm").
  ///
  /// - Parameter key: A folded key.
  /// - Returns: The hash the name index is sorted by.
  package static func hash(_ key: String) -> UInt64 {
    var value: UInt64 = 0xCBF2_9CE4_8422_2325
    for byte in key.utf8 {
      value ^= UInt64(byte)
      value &*= 0x100_0000_01B3
    }
    return value
  }
}
