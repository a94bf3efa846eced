import LocationModel

#if canImport(Geodesy)
  import Geodesy
#endif

/// The sentences of one time of fix, merged.
struct Epoch {
  var timeOfDay: Int64
  var hasPosition = false
  /// Decimals of the position's minutes (its precision).
  var positionDecimals = 0
  /// True once GGA or GNS gave a position (their quality indicator wins).
  var hasFixData = false
  var latitude = 0.0
  var longitude = 0.0
  var quality = FixQuality.autonomous
  var altitude: Double?
  var separation: Double?
  var speed = -1.0
  var course = -1.0
  var hdop: Double?
  var satellitesUsed: Int?
  var gsaUsed = 0
  var gsaSeen = false
  var noFixSeen = false
  var gst: GSTValues?

  init(timeOfDay: Int64) {
    self.timeOfDay = timeOfDay
  }
}

/// The fields of one GST sentence that matter here (standard deviations, metres).
struct GSTValues {
  var timeOfDay: Int64?
  var semiMajor: Double?
  var semiMinor: Double?
  var latitudeSigma: Double?
  var longitudeSigma: Double?
  var altitudeSigma: Double?
}

/// An epoch waiting for a date: its output carries the time of day only.
struct Held {
  var timeOfDay: Int64
  var output: NMEAOutput
}

extension NMEAOutput {
  /// The same output moved by `seconds` (used to put a date under a time of day).
  func shifted(by seconds: Double) -> NMEAOutput {
    switch self {
    case .fix(var fix):
      fix.time += seconds
      return .fix(fix)
    case .undatedFix(var fix):
      fix.time += seconds
      return .fix(fix)
    case .noFix(let time):
      return .noFix(time: time + seconds)
    case .heading, .satellites:
      return self
    }
  }
}

extension NMEADecoder {
  /// The 1-sigma user range error assumed for a fix of some quality, metres.
  ///
  /// Our rule: `autonomous` times 1 for autonomous, precise (PPS), manual and simulated fixes;
  /// times 0.25 for differential (DGPS, SBAS); 0.1 for RTK float; 0.005 for RTK fixed; 2.5 for dead
  /// reckoning; 250 for network positions.
  /// - Parameters:
  ///   - quality: the fix quality.
  ///   - autonomous: the user range error of an autonomous fix (`Options.userRangeError`).
  /// - Returns: the user range error in metres.
  package static func userRangeError(for quality: FixQuality, autonomous: Double) -> Double {
    switch quality {
    case .none, .autonomous, .precise, .manual, .simulated: return autonomous
    case .differential: return autonomous * 0.25
    case .rtkFloat: return autonomous * 0.1
    case .rtkFixed: return autonomous * 0.005
    case .estimated: return autonomous * 2.5
    case .network: return autonomous * 250
    }
  }

  /// The horizontal accuracy (68 % radius, metres) given to a fix that has neither GST nor DOP.
  ///
  /// Our rule, conservative on purpose: 30 m autonomous, precise or simulated; 10 m differential;
  /// 2 m RTK float; 0.5 m RTK fixed; 100 m dead reckoning or manual; 1000 m network.
  /// - Parameter quality: the fix quality.
  /// - Returns: the accuracy in metres.
  package static func defaultAccuracy(for quality: FixQuality) -> Double {
    switch quality {
    case .none, .autonomous, .precise, .simulated: return 30
    case .differential: return 10
    case .rtkFloat: return 2
    case .rtkFixed: return 0.5
    case .estimated, .manual: return 100
    case .network: return 1000
    }
  }

  // MARK: Epochs

  /// Makes `timeOfDay` the open epoch's time, closing the open epoch if its time differs.
  mutating func beginEpoch(_ timeOfDay: Int64, _ out: inout [NMEAOutput]) {
    if options.reportsAtCycleEnd {
      let current = epochOpen ? epoch.timeOfDay : reportedTime
      // Already reported at its cycle end: a late sentence of that epoch is ignored.
      if !epochOpen, reportedTime == timeOfDay { return }
      // A change of time: the sentence before this one ended the cycle.
      if let current, current != timeOfDay { cycleEnder = previousType }
    }
    if epochOpen {
      if epoch.timeOfDay == timeOfDay { return }
      closeEpoch(&out)
    }
    epoch = Epoch(timeOfDay: timeOfDay)
    epochOpen = true
    if let gst = pendingGST, gst.timeOfDay == timeOfDay { epoch.gst = gst }
    pendingGST = nil
  }

  /// Opens the epoch of a sentence's time; returns whether an epoch is open for its content.
  mutating func enterEpoch(_ timeOfDay: Int64?, _ out: inout [NMEAOutput]) -> Bool {
    if let timeOfDay { beginEpoch(timeOfDay, &out) }
    return epochOpen
  }

  /// Closes the open epoch: its fix or no-fix goes out, dated, or is held until a date is known.
  mutating func closeEpoch(_ out: inout [NMEAOutput]) {
    epochOpen = false
    let secondsOfDay = Double(epoch.timeOfDay) / 1_000_000
    // A dated fix is built with its final time (the same sum as `shifted(by:)`), without a
    // second copy of it.
    if epoch.hasPosition, let day = dayForEpoch(epoch.timeOfDay) {
      statistics.fixes &+= 1
      anchorDay = day
      anchorTimeOfDay = epoch.timeOfDay
      var fix = makeFix(secondsOfDay: secondsOfDay)
      fix.time += Double(day) * 86_400
      out.append(.fix(fix))
      return
    }
    let output: NMEAOutput
    if epoch.hasPosition {
      output = .fix(makeFix(secondsOfDay: secondsOfDay))
      statistics.fixes &+= 1
    } else if epoch.noFixSeen {
      output = .noFix(time: secondsOfDay)
      statistics.noFixEpochs &+= 1
    } else {
      return
    }
    if let day = dayForEpoch(epoch.timeOfDay) {
      anchorDay = day
      anchorTimeOfDay = epoch.timeOfDay
      out.append(output.shifted(by: Double(day) * 86_400))
    } else {
      held.append(Held(timeOfDay: epoch.timeOfDay, output: output))
      if held.count > max(options.maximumHeldEpochs, 0) {
        releaseHeldUndated(&out, keeping: max(options.maximumHeldEpochs, 0))
      }
    }
  }

  /// The day (since 1970) within 12 hours of the anchor's time for a time of day.
  static func day(for timeOfDay: Int64, anchorDay: Int, anchorTimeOfDay: Int64) -> Int {
    let difference = timeOfDay &- anchorTimeOfDay
    if difference > halfDay { return anchorDay &- 1 }
    if difference < -halfDay { return anchorDay &+ 1 }
    return anchorDay
  }

  /// The day of an epoch, from the anchor or else the default date; nil when neither is known.
  mutating func dayForEpoch(_ timeOfDay: Int64) -> Int? {
    if !hasAnchor {
      guard let date = options.defaultDate, date.isValid else { return nil }
      anchorDay = date.daysSinceEpoch
      anchorTimeOfDay = timeOfDay
      hasAnchor = true
    }
    return NMEADecoder.day(
      for: timeOfDay, anchorDay: anchorDay, anchorTimeOfDay: anchorTimeOfDay)
  }

  /// Unix time of the open epoch, if it can be dated now.
  func openEpochTime() -> Double? {
    guard epochOpen else { return nil }
    let day: Int
    if hasAnchor {
      day = NMEADecoder.day(
        for: epoch.timeOfDay, anchorDay: anchorDay, anchorTimeOfDay: anchorTimeOfDay)
    } else if let date = options.defaultDate, date.isValid {
      day = date.daysSinceEpoch
    } else {
      return nil
    }
    return Double(day) * 86_400 + Double(epoch.timeOfDay) / 1_000_000
  }

  /// A date learned from RMC or ZDA for a time of day: dates later epochs and releases held ones.
  mutating func learnDate(day: Int, timeOfDay: Int64, _ out: inout [NMEAOutput]) {
    anchorDay = day
    anchorTimeOfDay = timeOfDay
    hasAnchor = true
    if held.isEmpty { return }
    for item in held {
      let itemDay = NMEADecoder.day(
        for: item.timeOfDay, anchorDay: day, anchorTimeOfDay: timeOfDay)
      out.append(item.output.shifted(by: Double(itemDay) * 86_400))
    }
    held.removeAll()
  }

  /// Gives out held epochs, oldest first, until `keeping` are left: fixes as `.undatedFix`,
  /// no-fix epochs dropped.
  mutating func releaseHeldUndated(_ out: inout [NMEAOutput], keeping: Int) {
    let count = held.count &- keeping
    if count <= 0 { return }
    for item in held[0..<count] {
      if case .fix(let fix) = item.output { out.append(.undatedFix(fix)) }
    }
    held.removeFirst(count)
  }

  /// Builds the fix of the open epoch (time of day only; the caller adds the date).
  func makeFix(secondsOfDay: Double) -> Fix {
    let quality = epoch.quality
    let rangeError = NMEADecoder.userRangeError(
      for: quality, autonomous: options.userRangeError)
    var horizontal = -1.0
    var vertical = -1.0
    if let gst = epoch.gst {
      if let a = gst.latitudeSigma, let b = gst.longitudeSigma {
        horizontal = (a * a + b * b).squareRoot()
      } else if let a = gst.semiMajor, let b = gst.semiMinor {
        horizontal = (a * a + b * b).squareRoot()
      }
      if let sigma = gst.altitudeSigma { vertical = sigma }
    }
    if !(horizontal >= 0 && horizontal.isFinite) {
      if let hdop = epoch.hdop ?? lastHDOP, hdop > 0 {
        horizontal = hdop * rangeError
      } else {
        horizontal = NMEADecoder.defaultAccuracy(for: quality)
      }
      if !horizontal.isFinite { horizontal = NMEADecoder.defaultAccuracy(for: quality) }
    }
    if vertical < 0 && lastFixType == 3, let vdop = lastVDOP, vdop > 0 {
      vertical = vdop * rangeError
    }
    if epoch.altitude == nil || !vertical.isFinite { vertical = -1 }
    var ellipsoidal: Double?
    if let altitude = epoch.altitude, let separation = epoch.separation {
      ellipsoidal = altitude + separation
    }
    return Fix(
      latitude: epoch.latitude,
      longitude: epoch.longitude,
      altitude: epoch.altitude,
      ellipsoidalAltitude: ellipsoidal,
      horizontalAccuracy: horizontal,
      verticalAccuracy: vertical,
      speed: epoch.speed,
      course: epoch.course,
      time: secondsOfDay,
      quality: quality,
      satellitesUsed: epoch.satellitesUsed ?? (epoch.gsaSeen ? epoch.gsaUsed : nil),
      isSimulated: quality.isSimulated,
      source: options.source
    )
  }

  /// Puts a position into the open epoch. The one with more decimals wins; among equally precise
  /// ones the later sentence wins (as in gpsd). The quality of GGA/GNS (`fromFixData`) wins over
  /// RMC's and GLL's mode letters.
  mutating func setPosition(
    decimals: Int, latitude: Double, longitude: Double, quality: FixQuality, fromFixData: Bool
  ) {
    if fromFixData {
      epoch.quality = quality
      epoch.hasFixData = true
    } else if !epoch.hasFixData {
      epoch.quality = quality
    }
    if epoch.hasPosition && decimals < epoch.positionDecimals { return }
    epoch.hasPosition = true
    epoch.positionDecimals = decimals
    epoch.latitude = latitude
    epoch.longitude = longitude
  }
}
