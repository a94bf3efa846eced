import Foundation

/// Reads the project's reference data (`<package root>/Tests/Fixtures`).
enum TestData {
  struct Failure: Error, CustomStringConvertible {
    var description: String
  }

  /// The test data folder, found from this file's path.
  static var directory: URL {
    URL(fileURLWithPath: #filePath)
      .deletingLastPathComponent()  // GeodesyTests
      .deletingLastPathComponent()  // Tests
      .deletingLastPathComponent()  // package root
      .appendingPathComponent("Tests/Fixtures")
  }

  /// The text of a file under the shared test data folder.
  static func text(_ relativePath: String) throws -> String {
    let url = directory.appendingPathComponent(relativePath)
    guard let data = FileManager.default.contents(atPath: url.path) else {
      throw Failure(description: "cannot read \(url.path)")
    }
    return String(decoding: data, as: UTF8.self)
  }
}

/// SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators",
/// OOPSLA 2014): a small, seeded generator so that random tests repeat exactly.
struct SplitMix64: RandomNumberGenerator {
  private var state: UInt64

  init(seed: UInt64) { state = seed }

  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }

  /// A double uniformly distributed in `range`.
  mutating func uniform(_ range: ClosedRange<Double>) -> Double {
    Double.random(in: range, using: &self)
  }
}
