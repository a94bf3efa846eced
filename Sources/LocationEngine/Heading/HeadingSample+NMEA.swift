import Geodesy
import LocationModel

/// Samples from decoded NMEA 0183 heading sentences (NMEA 0183 v4.11, sentences HDG, HDM, HDT and
/// THS; field layouts as in `LocationFormats.NMEAHeading`).
///
/// The engine cannot import `LocationFormats` (DESIGN.md, "Layers"), so these take the decoded
/// fields themselves; the NMEA source adapter passes `NMEAHeading`'s values through. Rules:
///
/// - NMEA carries no accuracy, so ``HeadingSample/accuracy`` is the `accuracy` argument, -1
///   ("unknown") unless the source's configuration names one.
/// - `time` is the epoch's time when the decoder knows it, otherwise the time of receipt.
/// - HDG: magnetic heading = sensor heading + deviation (east positive; a missing deviation is 0).
///   Its variation field is not used: the pipeline takes the declination from the World Magnetic
///   Model at the latest location, as for every magnetic source. An HDG without a heading gives
///   no sample.
/// - HDM: the magnetic heading. HDT: the true heading. Either without a heading gives no sample.
/// - THS: the true heading; mode `V` (not valid) gives no sample, mode `S` (simulator) marks the
///   sample simulated, the other modes (and none) are taken as they come.
extension HeadingSample {
  /// THS's mode indicator.
  public enum THSMode: Sendable, Equatable {
    /// `A`: autonomous.
    case autonomous
    /// `E`: estimated (dead reckoning).
    case estimated
    /// `M`: entered by hand.
    case manual
    /// `S`: simulator.
    case simulated
    /// `V`: data not valid.
    case invalid
  }

  /// A sample from HDG (heading, deviation and variation).
  ///
  /// - Parameters:
  ///   - sensorHeading: The magnetic sensor's reading, degrees.
  ///   - deviation: The sensor's deviation, degrees, east positive.
  ///   - time: Seconds since 1970-01-01T00:00:00Z.
  ///   - accuracy: Degrees; -1 when unknown.
  ///   - source: The source's URL.
  ///   - isSimulated: Whether the stream is a replay or simulation.
  /// - Returns: The sample, or nil when the sentence has no finite heading.
  public static func fromHDG(
    sensorHeading: Double?, deviation: Double?, time: Double, accuracy: Double = -1,
    source: String = "", isSimulated: Bool = false
  ) -> HeadingSample? {
    guard let sensorHeading, sensorHeading.isFinite else { return nil }
    let deviation = deviation.flatMap { $0.isFinite ? $0 : nil } ?? 0
    return HeadingSample(
      time: time, magneticHeading: HeadingPipeline.reduce(sensorHeading + deviation),
      accuracy: accuracy, source: source, isSimulated: isSimulated)
  }

  /// A sample from HDM (heading, magnetic).
  ///
  /// - Parameters:
  ///   - magneticHeading: Degrees from magnetic north.
  ///   - time: Seconds since 1970-01-01T00:00:00Z.
  ///   - accuracy: Degrees; -1 when unknown.
  ///   - source: The source's URL.
  ///   - isSimulated: Whether the stream is a replay or simulation.
  /// - Returns: The sample, or nil when the sentence has no finite heading.
  public static func fromHDM(
    magneticHeading: Double?, time: Double, accuracy: Double = -1, source: String = "",
    isSimulated: Bool = false
  ) -> HeadingSample? {
    guard let magneticHeading, magneticHeading.isFinite else { return nil }
    return HeadingSample(
      time: time, magneticHeading: HeadingPipeline.reduce(magneticHeading), accuracy: accuracy,
      source: source, isSimulated: isSimulated)
  }

  /// A sample from HDT (heading, true).
  ///
  /// - Parameters:
  ///   - trueHeading: Degrees from true north.
  ///   - time: Seconds since 1970-01-01T00:00:00Z.
  ///   - accuracy: Degrees; -1 when unknown.
  ///   - source: The source's URL.
  ///   - isSimulated: Whether the stream is a replay or simulation.
  /// - Returns: The sample, or nil when the sentence has no finite heading.
  public static func fromHDT(
    trueHeading: Double?, time: Double, accuracy: Double = -1, source: String = "",
    isSimulated: Bool = false
  ) -> HeadingSample? {
    guard let trueHeading, trueHeading.isFinite else { return nil }
    return HeadingSample(
      time: time, trueHeading: HeadingPipeline.reduce(trueHeading), accuracy: accuracy,
      source: source, isSimulated: isSimulated)
  }

  /// A sample from THS (true heading and status).
  ///
  /// - Parameters:
  ///   - trueHeading: Degrees from true north.
  ///   - mode: The mode indicator, if the sentence has one.
  ///   - time: Seconds since 1970-01-01T00:00:00Z.
  ///   - accuracy: Degrees; -1 when unknown.
  ///   - source: The source's URL.
  ///   - isSimulated: Whether the stream is a replay or simulation (mode `S` sets it too).
  /// - Returns: The sample, or nil when the heading is missing or the mode is `V`.
  public static func fromTHS(
    trueHeading: Double?, mode: THSMode?, time: Double, accuracy: Double = -1,
    source: String = "", isSimulated: Bool = false
  ) -> HeadingSample? {
    guard let trueHeading, trueHeading.isFinite else { return nil }
    var simulated = isSimulated
    switch mode {
    case .invalid?:
      return nil
    case .simulated?:
      simulated = true
    case .autonomous?, .estimated?, .manual?, nil:
      break
    }
    return HeadingSample(
      time: time, trueHeading: HeadingPipeline.reduce(trueHeading), accuracy: accuracy,
      source: source, isSimulated: simulated)
  }
}
