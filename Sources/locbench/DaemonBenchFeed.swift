import Foundation

/// The NMEA 0183 feed both daemons read: one epoch (RMC then GGA) per fix, a receiver moving east
/// at 10 m/s from 52° N 5° E, times `start + index / rate` with hundredths of a second.
///
/// Sentence layouts are NMEA 0183's RMC and GGA; the checksum is the XOR of the bytes between `$`
/// and `*`, two hex digits.
struct DaemonBenchFeed {
  /// Unix time of fix 0, whole milliseconds (a multiple of the period).
  let startMilliseconds: Int64
  /// Milliseconds between fixes.
  let periodMilliseconds: Int64

  /// A feed whose first fix is at the next whole second of the wall clock.
  init(rate: Double) {
    periodMilliseconds = Int64((1000 / rate).rounded())
    let now = Date().timeIntervalSince1970
    startMilliseconds = Int64(now.rounded(.up)) * 1000
  }

  /// The feed whose first fix is at `startMilliseconds` (another process's feed, rebuilt).
  init(startMilliseconds: Int64, periodMilliseconds: Int64) {
    self.startMilliseconds = startMilliseconds
    self.periodMilliseconds = periodMilliseconds
  }

  /// The latitude of the track, degrees (constant).
  static let latitude = 52.0
  /// The longitude of fix 0, degrees.
  static let longitude = 5.0

  /// The fix index whose time is `milliseconds` (Unix time), or nil when it is not on the grid.
  func index(ofMilliseconds milliseconds: Int64) -> Int? {
    let offset = milliseconds - startMilliseconds
    let index = (Double(offset) / Double(periodMilliseconds)).rounded()
    guard index >= 0, abs(Double(offset) - index * Double(periodMilliseconds)) < 2 else {
      return nil
    }
    return Int(index)
  }

  /// The position of epoch `index` as its sentences carry it (longitude rounded to the
  /// sentence's 10^-5 minutes), degrees, and its time (Unix seconds).
  func position(_ index: Int) -> (latitude: Double, longitude: Double, time: Double) {
    let milliseconds = startMilliseconds + Int64(index) * periodMilliseconds
    // As `angle(_:degreeDigits:)` writes it: whole degrees, then minutes to 10^-5.
    let degrees = longitude(index)
    let whole = Double(Int(degrees))
    let minutes100k = ((degrees - whole) * 60 * 100_000).rounded()
    return (Self.latitude, whole + minutes100k / 100_000 / 60, Double(milliseconds) / 1000)
  }

  /// The longitude of epoch `index` (10 m/s east: metres per degree of longitude at 52° on the
  /// sphere are close enough here), degrees.
  private func longitude(_ index: Int) -> Double {
    let metres = 10 * Double(index) * Double(periodMilliseconds) / 1000
    return Self.longitude + metres / (111_320 * cos(Self.latitude * .pi / 180))
  }

  /// The bytes of epoch `index`: an RMC and a GGA sentence, CR LF terminated.
  func epoch(_ index: Int) -> [UInt8] {
    let milliseconds = startMilliseconds + Int64(index) * periodMilliseconds
    var seconds = time_t(milliseconds / 1000)
    var calendar = tm()
    gmtime_r(&seconds, &calendar)
    let hundredths = Int(milliseconds % 1000) / 10
    let clock =
      digits(Int(calendar.tm_hour), 2) + digits(Int(calendar.tm_min), 2)
      + digits(Int(calendar.tm_sec), 2) + "." + digits(hundredths, 2)
    let date =
      digits(Int(calendar.tm_mday), 2) + digits(Int(calendar.tm_mon) + 1, 2)
      + digits(Int(calendar.tm_year) % 100, 2)
    let lat = angle(Self.latitude, degreeDigits: 2)
    let lon = angle(longitude(index), degreeDigits: 3)
    var bytes: [UInt8] = []
    NMEABench.sentence("GPRMC,\(clock),A,\(lat),N,\(lon),E,19.438,90.00,\(date),,,A", into: &bytes)
    NMEABench.sentence("GPGGA,\(clock),\(lat),N,\(lon),E,1,10,0.90,12.0,M,47.0,M,,", into: &bytes)
    return bytes
  }

  private func digits(_ value: Int, _ width: Int) -> String {
    let text = String(value)
    return String(repeating: "0", count: max(0, width - text.count)) + text
  }

  /// `ddmm.mmmmm` (or `dddmm.mmmmm`) for a positive angle.
  private func angle(_ degrees: Double, degreeDigits: Int) -> String {
    let whole = Int(degrees)
    let minutes100k = Int(((degrees - Double(whole)) * 60 * 100_000).rounded())
    return digits(whole, degreeDigits) + digits(minutes100k / 100_000, 2) + "."
      + digits(minutes100k % 100_000, 5)
  }
}
