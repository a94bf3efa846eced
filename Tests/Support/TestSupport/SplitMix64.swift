/// SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators",
/// OOPSLA 2014): a small seeded generator, so that random tests repeat exactly.
package struct SplitMix64: RandomNumberGenerator {
  private var state: UInt64

  /// A generator whose stream is fixed by `seed`.
  package init(seed: UInt64) { state = seed }

  /// The next 64-bit word.
  package mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }

  /// A double uniformly distributed in `range`.
  package mutating func uniform(_ range: ClosedRange<Double>) -> Double {
    Double.random(in: range, using: &self)
  }
}
