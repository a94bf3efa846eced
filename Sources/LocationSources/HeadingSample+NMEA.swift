import Geodesy
import LocationFormats
import LocationModel

extension HeadingSample {
  /// The sample a decoded NMEA 0183 heading sentence gives (NMEA 0183 v4.11: HDG, HDM, HDT, THS).
  ///
  /// - HDG: the magnetic heading (sensor reading plus deviation, east positive). Its variation is
  ///   not used: true heading comes from the World Magnetic Model at the latest location, as for
  ///   every magnetic source.
  /// - HDM: the magnetic heading. HDT and THS: the true heading; THS with mode `V` (not valid) gives
  ///   nothing, mode `S` marks the sample simulated.
  /// - NMEA carries no accuracy: -1 (unknown). The time is the epoch's when the decoder knows it,
  ///   else `fallbackTime`.
  /// - Returns: nil when the sentence carries no usable heading.
  package init?(nmea heading: NMEAHeading, fallbackTime: Double, source: String, isSimulated: Bool)
  {
    var magnetic: Double?
    var trueHeading: Double?
    switch heading.kind {
    case .hdg, .hdm:
      magnetic = heading.magneticHeading
    case .hdt, .ths:
      if heading.mode == .invalid { return nil }
      trueHeading = heading.trueHeading
    case .gga, .rmc, .gns, .gll, .gsa, .gsv, .vtg, .zda, .gst:
      return nil
    }
    guard magnetic?.isFinite == true || trueHeading?.isFinite == true else { return nil }
    self.init(
      time: heading.time ?? fallbackTime, magneticHeading: magnetic, trueHeading: trueHeading,
      accuracy: -1, source: source, isSimulated: isSimulated || heading.mode == .simulated)
  }
}
