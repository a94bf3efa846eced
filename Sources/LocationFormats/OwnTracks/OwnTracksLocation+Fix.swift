import LocationModel

extension OwnTracksLocation {
  /// The horizontal accuracy given to a received location without `acc`: 100 m, a phone's
  /// network location (OwnTracks' iOS app leaves `acc` out when it is zero, and other publishers
  /// may not know it; claiming better than 100 m without a word from the device would be a guess).
  package static let assumedAccuracy = 100.0

  /// The message for a fix, with OwnTracks' units and integers.
  ///
  /// Our rounding (OwnTracks documents integers and no rounding): `acc` is the horizontal
  /// accuracy rounded to the nearest metre but at least 1 (a receiver takes 0 for "exact");
  /// `alt` and `vac` to the nearest metre, `vac` only with an altitude; `vel` is the speed in km/h
  /// (m/s times 3.6) to the nearest; `cog` the course to the nearest degree (359.6 is 0); `tst`
  /// the fix's time rounded down to the second (the second the fix was taken in). `lat` and `lon`
  /// are kept as they are.
  ///
  /// What the fix does not know (a negative accuracy, speed or course; no altitude) is left out.
  /// OwnTracks' iOS app also leaves out zeros; its Android app writes them (`"vel": 0`), and so
  /// does this: a stationary device says so.
  ///
  /// - Parameters:
  ///   - fix: the fix; its coordinate must be valid.
  ///   - trackerID: `tid`, if any.
  ///   - trigger: `t`, if any (nil: an automatic update).
  /// - Throws: `.invalidValue` when the fix has no valid coordinate or its time is not a time
  ///   after 1970.
  package init(fix: Fix, trackerID: String? = nil, trigger: OwnTracksTrigger? = nil)
    throws(FormatError)
  {
    guard fix.hasValidCoordinate else {
      throw FormatError(.invalidValue, "the fix has no valid coordinate")
    }
    guard fix.time.isFinite, fix.time >= 0, fix.time < 9_007_199_254_740_992 else {
      throw FormatError(.invalidValue, "the fix's time is not a time after 1970")
    }
    let altitude = fix.altitude.flatMap { Self.nearest($0) }
    self.init(
      latitude: fix.latitude,
      longitude: fix.longitude,
      accuracy: Self.nearest(fix.horizontalAccuracy).map { max(1, $0) },
      altitude: altitude,
      verticalAccuracy: altitude == nil || fix.verticalAccuracy < 0
        ? nil : Self.nearest(fix.verticalAccuracy),
      velocity: fix.speed < 0 ? nil : Self.nearest(fix.speed * 3.6),
      course: fix.course < 0 ? nil : Self.nearest(fix.course).map { $0 % 360 },
      timestamp: Int(fix.time.rounded(.down)),
      trackerID: trackerID,
      trigger: trigger)
  }

  /// The fix this message describes, as a receiver of another device's positions sees it.
  ///
  /// `acc` is the horizontal accuracy (``assumedAccuracy`` without it); `tst` the time; `vel`
  /// km/h becomes m/s (divided by 3.6); `cog` the course; `alt` the altitude, with `vac` its
  /// accuracy. The quality is `.network`: another device's position, relayed. Whether a fix is
  /// too old to use is the receiving source's decision, not the decoder's.
  ///
  /// - Parameter source: the fix's `source` (the subscription's URL).
  package func fix(source: String) -> Fix {
    Fix(
      latitude: latitude,
      longitude: longitude,
      altitude: altitude.map(Double.init),
      horizontalAccuracy: accuracy.map(Double.init) ?? Self.assumedAccuracy,
      verticalAccuracy: altitude != nil ? verticalAccuracy.map(Double.init) ?? -1 : -1,
      speed: velocity.map { Double($0) / 3.6 } ?? -1,
      course: course.map(Double.init) ?? -1,
      time: Double(timestamp),
      quality: .network,
      source: source)
  }

  /// The nearest whole number, or nil for what no `Int` of a message should hold.
  private static func nearest(_ value: Double) -> Int? {
    let rounded = value.rounded()
    guard rounded.isFinite, abs(rounded) < 9_007_199_254_740_992 else { return nil }
    return Int(rounded)
  }
}
