import Foundation

/// How much a Wi-Fi reading counts in a weighted centroid: the weight of a reading of `signal`
/// dBm is `1 / d^g`, with `d` the distance the log-distance path-loss model gives for it
/// (T. S. Rappaport, *Wireless Communications: Principles and Practice*, 2nd ed., section 4.9.1):
/// `signal = P₀ − 10 · n · log₁₀(d / 1 m)`, so `d = 10^((P₀ − signal) / (10 · n))` and
/// `w = 10^(g · (signal − P₀) / (10 · n))`.
///
/// These are the weights of weighted centroid localization (J. Blumenthal, R. Grossmann,
/// F. Golatowski and D. Timmermann, "Weighted centroid localization in ZigBee-based sensor
/// networks", IEEE WISP 2007), where the degree `g` trades the pull of the nearest transmitter
/// against the averaging of the others. With `g = n` the weight is the linear received power
/// `10^(signal / 10)` (up to a constant); a smaller `g` is softer: shadowing of σ dB multiplies a
/// linear-power weight by a factor of `10^(σ / 10)` (2.5 for 4 dB), so one faded or boosted reading
/// decides less. The model's `d` is never used as a distance, only as a rank of nearness, so `P₀`
/// and `n` need not fit a given access point: they only scale the weights.
package struct WifiSignalModel: Sendable, Equatable {
  /// `P₀`, the received power at 1 m, dBm.
  package var referencePower: Double = -40
  /// `n`, the path-loss exponent (2 in free space, about 3 in a town).
  package var pathLossExponent: Double = 3
  /// `g`, the degree of the weights `1 / d^g`.
  package var weightExponent: Double = 2

  /// The default model: `P₀` −40 dBm, `n` 3, `g` 2.
  package init() {}

  /// Creates a model.
  package init(referencePower: Double, pathLossExponent: Double, weightExponent: Double) {
    self.referencePower = referencePower
    self.pathLossExponent = pathLossExponent
    self.weightExponent = weightExponent
  }

  /// The distance, metres, the log-distance model gives for a reading of `signal` dBm.
  package func distance(signal: Double) -> Double {
    pow(10, (referencePower - signal) / (10 * pathLossExponent))
  }

  /// The weight `1 / d^g` of a reading of `signal` dBm; 0 for a non-finite signal.
  package func weight(signal: Double) -> Double {
    guard signal.isFinite else { return 0 }
    // Clamped to -120...0 dBm so that no reading underflows to zero or overflows.
    let clamped = min(0, max(-120, signal))
    return pow(10, weightExponent * (clamped - referencePower) / (10 * pathLossExponent))
  }
}
