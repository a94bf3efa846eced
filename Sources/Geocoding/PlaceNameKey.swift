import Foundation

/// The key under which the gazetteer indexes a name, so that "Zürich", "ZURICH" and "Zurich" meet:
/// lower case, compatibility decomposition (NFKD) with the combining marks dropped, a few letters
/// that do not decompose spelled out (ß ss, æ ae, ø o, œ oe, ł l, đ and ð d, þ th, ı i, ħ h, ŋ n,
/// ŧ t, ĸ k), and every run of characters that are neither letters nor digits one space, trimmed.
/// `scripts/build-gazetteer.py` folds the names of the file by the same rule (its `fold`).
package enum PlaceNameKey {
  private static let spelledOut: [Unicode.Scalar: String] = [
    "ß": "ss", "æ": "ae", "ø": "o", "œ": "oe", "ł": "l", "đ": "d", "ð": "d", "þ": "th",
    "ı": "i", "ħ": "h", "ŋ": "n", "ŧ": "t", "ĸ": "k",
  ]

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
    let lowered = name.lowercased()
    for scalar in lowered.decomposedStringWithCompatibilityMapping.unicodeScalars {
      if scalar.properties.generalCategory == .nonspacingMark { continue }
      if let replacement = spelledOut[scalar] {
        for part in replacement.unicodeScalars { append(part) }
      } else {
        append(scalar)
      }
    }
    return String(output)
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
