/// SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators", OOPSLA
/// 2014): a 64-bit state advanced by the golden-ratio increment, each output the state through
/// Stafford's "Mix13" finalizer, with the constants of Vigna's reference `splitmix64.c`. The one
/// seeded generator of the project: reduced accuracy's per-cell offsets, the simulations' days and
/// noise, and the benchmarks' inputs, all the same on every run. Not a cryptographic function.
package struct SplitMix64: RandomNumberGenerator, Sendable {
  /// The state.
  package var state: UInt64

  /// A generator whose state starts at `seed`.
  package init(seed: UInt64) { state = seed }

  /// The next 64 pseudo-random bits.
  package mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }

  /// Uniform in [0, 1), 53 bits.
  package mutating func unit() -> Double { Double(next() >> 11) * 0x1p-53 }

  /// Uniform in `range`.
  package mutating func uniform(_ range: ClosedRange<Double>) -> Double {
    range.lowerBound + unit() * (range.upperBound - range.lowerBound)
  }

  /// True with probability `probability`.
  package mutating func chance(_ probability: Double) -> Bool { unit() < probability }
}
