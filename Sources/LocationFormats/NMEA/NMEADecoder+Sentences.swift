import LocationModel

#if canImport(Geodesy)
  import Geodesy
#endif

// Field layouts: NMEA 0183 version 4.11 (fields after the address, in order). Every decoder reads
// all of its fields first and changes nothing when one is bad; it returns false then.
extension NMEADecoder {
  static let north = UInt8(ascii: "N")
  static let south = UInt8(ascii: "S")
  static let east = UInt8(ascii: "E")
  static let west = UInt8(ascii: "W")
  static let knots = 1852.0 / 3600.0

  /// GGA quality indicator (0 none ... 8 simulator; 9, used by some receivers for SBAS, counts
  /// as differential). Nil: no fix or an unknown value.
  @inline(__always)
  static func ggaQuality(_ value: Int) -> FixQuality? {
    switch value {
    case 1: return .autonomous
    case 2, 9: return .differential
    case 3: return .precise
    case 4: return .rtkFixed
    case 5: return .rtkFloat
    case 6: return .estimated
    case 7: return .manual
    case 8: return .simulated
    default: return nil
    }
  }

  /// Mode indicator of RMC, GLL, VTG and GNS (NMEA 2.3 and later). Nil for `N` (not valid);
  /// `0` (field absent, NMEA 2.0 and older) is autonomous.
  @inline(__always)
  static func modeQuality(_ mode: UInt8) -> FixQuality? {
    switch mode {
    case 0, UInt8(ascii: "A"): return .autonomous
    case UInt8(ascii: "D"): return .differential
    case UInt8(ascii: "E"): return .estimated
    case UInt8(ascii: "F"): return .rtkFloat
    case UInt8(ascii: "R"): return .rtkFixed
    case UInt8(ascii: "P"): return .precise
    case UInt8(ascii: "M"): return .manual
    case UInt8(ascii: "S"): return .simulated
    case UInt8(ascii: "N"): return nil
    default: return .autonomous
    }
  }

  /// Course in 0..<360 (360 reads as 0); a value past 360 marks the field bad.
  @inline(__always)
  static func normalizedAngle(_ value: Double?, _ fields: inout NMEAFieldCursor) -> Double? {
    guard let value else { return nil }
    if value < 0 || value > 360 {
      fields.bad = true
      return nil
    }
    return value == 360 ? 0 : value
  }

  /// GGA: time, lat, N/S, lon, E/W, quality, satellites used, HDOP, altitude, M, separation, M,
  /// age of differential data, station.
  mutating func decodeGGA(_ fields: inout NMEAFieldCursor, _ out: inout [NMEAOutput]) -> Bool {
    let time = fields.timeOfDay()
    let latitude = fields.angle(positive: NMEADecoder.north, negative: NMEADecoder.south, limit: 90)
    let longitude = fields.angle(positive: NMEADecoder.east, negative: NMEADecoder.west, limit: 180)
    let qualityValue = fields.integer()
    let used = fields.integer()
    let hdop = fields.unsignedNumber()
    let altitude = fields.number()
    fields.skip(1)
    let separation = fields.number()
    if fields.bad { return false }
    guard enterEpoch(time, &out) else { return true }
    if let qualityValue, let quality = NMEADecoder.ggaQuality(qualityValue), let latitude,
      let longitude
    {
      setPosition(
        decimals: fields.angleDecimals, latitude: latitude, longitude: longitude,
        quality: quality, fromFixData: true)
      epoch.altitude = altitude
      epoch.separation = altitude == nil ? nil : separation
      epoch.hdop = hdop
      epoch.satellitesUsed = used
    } else {
      epoch.noFixSeen = true
    }
    return true
  }

  /// GNS: time, lat, N/S, lon, E/W, mode letters (one per constellation), satellites used, HDOP,
  /// altitude, separation, age, station, navigational status.
  mutating func decodeGNS(_ fields: inout NMEAFieldCursor, _ out: inout [NMEAOutput]) -> Bool {
    let time = fields.timeOfDay()
    let latitude = fields.angle(positive: NMEADecoder.north, negative: NMEADecoder.south, limit: 90)
    let longitude = fields.angle(positive: NMEADecoder.east, negative: NMEADecoder.west, limit: 180)
    fields.advance()
    // The best of the per-constellation modes: RTK fixed > float > precise > differential >
    // autonomous > estimated > manual > simulated; all `N` (or none) means no fix.
    var best: FixQuality?
    var bestRank = 0
    var index = fields.fieldStart
    while index < fields.fieldEnd {
      let mode = fields.base[index]
      let rank: Int
      switch mode {
      case UInt8(ascii: "R"): rank = 8
      case UInt8(ascii: "F"): rank = 7
      case UInt8(ascii: "P"): rank = 6
      case UInt8(ascii: "D"): rank = 5
      case UInt8(ascii: "A"): rank = 4
      case UInt8(ascii: "E"): rank = 3
      case UInt8(ascii: "M"): rank = 2
      case UInt8(ascii: "S"): rank = 1
      case UInt8(ascii: "N"): rank = 0
      default:
        fields.bad = true
        rank = 0
      }
      if rank > bestRank {
        bestRank = rank
        best = NMEADecoder.modeQuality(mode)
      }
      index &+= 1
    }
    let used = fields.integer()
    let hdop = fields.unsignedNumber()
    let altitude = fields.number()
    let separation = fields.number()
    if fields.bad { return false }
    guard enterEpoch(time, &out) else { return true }
    if let best, let latitude, let longitude {
      setPosition(
        decimals: fields.angleDecimals, latitude: latitude, longitude: longitude,
        quality: best, fromFixData: true)
      epoch.altitude = altitude
      epoch.separation = altitude == nil ? nil : separation
      epoch.hdop = hdop
      epoch.satellitesUsed = used
    } else {
      epoch.noFixSeen = true
    }
    return true
  }

  /// RMC: time, status A/V, lat, N/S, lon, E/W, speed (knots), course (true), date ddmmyy,
  /// magnetic variation, E/W, mode, navigational status.
  mutating func decodeRMC(_ fields: inout NMEAFieldCursor, _ out: inout [NMEAOutput]) -> Bool {
    let time = fields.timeOfDay()
    let status = fields.character()
    let latitude = fields.angle(positive: NMEADecoder.north, negative: NMEADecoder.south, limit: 90)
    let longitude = fields.angle(positive: NMEADecoder.east, negative: NMEADecoder.west, limit: 180)
    let speed = fields.unsignedNumber()
    let course = NMEADecoder.normalizedAngle(fields.number(), &fields)
    let date = fields.integer()
    fields.skip(2)
    let mode = fields.character()
    if fields.bad { return false }
    if let time, let date {
      // ddmmyy; two-digit years 80...99 are 19yy, the rest 20yy.
      let yy = date % 100
      let civil = NMEADate(
        year: yy >= 80 ? 1900 + yy : 2000 + yy, month: (date / 100) % 100, day: date / 10_000)
      if civil.isValid && date < 1_000_000 {
        learnDate(day: civil.daysSinceEpoch, timeOfDay: time, &out)
      }
    }
    guard enterEpoch(time, &out) else { return true }
    if status == UInt8(ascii: "A"), let quality = NMEADecoder.modeQuality(mode), let latitude,
      let longitude
    {
      setPosition(
        decimals: fields.angleDecimals, latitude: latitude, longitude: longitude,
        quality: quality, fromFixData: false)
      if let speed { epoch.speed = speed * NMEADecoder.knots }
      if let course { epoch.course = course }
    } else {
      epoch.noFixSeen = true
    }
    return true
  }

  /// GLL: lat, N/S, lon, E/W, time, status A/V, mode. NMEA 1.x sends only the position: then the
  /// position joins the open epoch.
  mutating func decodeGLL(_ fields: inout NMEAFieldCursor, _ out: inout [NMEAOutput]) -> Bool {
    let latitude = fields.angle(positive: NMEADecoder.north, negative: NMEADecoder.south, limit: 90)
    let longitude = fields.angle(positive: NMEADecoder.east, negative: NMEADecoder.west, limit: 180)
    let time = fields.timeOfDay()
    let status = fields.character()
    let mode = fields.character()
    if fields.bad { return false }
    guard enterEpoch(time, &out) else { return true }
    if status == UInt8(ascii: "A") || (status == 0 && time == nil),
      let quality = NMEADecoder.modeQuality(mode), let latitude, let longitude
    {
      setPosition(
        decimals: fields.angleDecimals, latitude: latitude, longitude: longitude,
        quality: quality, fromFixData: false)
    } else {
      epoch.noFixSeen = true
    }
    return true
  }

  /// VTG: course true, T, course magnetic, M, speed knots, N, speed km/h, K, mode. NMEA 1.x
  /// leaves out the letters: course true, course magnetic, knots, km/h.
  mutating func decodeVTG(_ fields: inout NMEAFieldCursor) -> Bool {
    let course = NMEADecoder.normalizedAngle(fields.number(), &fields)
    fields.advance()
    let lettered =
      fields.fieldEnd &- fields.fieldStart == 1
      && fields.base[fields.fieldStart] == UInt8(ascii: "T")
    var knots: Double?
    var kilometres: Double?
    var mode: UInt8 = 0
    if lettered {
      fields.skip(2)
      knots = fields.unsignedNumber()
      fields.skip(1)
      kilometres = fields.unsignedNumber()
      fields.skip(1)
      mode = fields.character()
    } else {
      knots = fields.unsignedNumber()
      kilometres = fields.unsignedNumber()
    }
    if fields.bad { return false }
    guard epochOpen, epoch.hasPosition, NMEADecoder.modeQuality(mode) != nil else {
      return true
    }
    if let knots {
      epoch.speed = knots * NMEADecoder.knots
    } else if let kilometres {
      epoch.speed = kilometres / 3.6
    }
    if let course { epoch.course = course }
    return true
  }

  /// ZDA: time, day, month, year, local zone hours, local zone minutes. Dates epochs only.
  mutating func decodeZDA(_ fields: inout NMEAFieldCursor, _ out: inout [NMEAOutput]) -> Bool {
    let time = fields.timeOfDay()
    let day = fields.integer()
    let month = fields.integer()
    let year = fields.integer()
    if fields.bad { return false }
    if let time, let day, let month, let year {
      let civil = NMEADate(year: year, month: month, day: day)
      if civil.isValid { learnDate(day: civil.daysSinceEpoch, timeOfDay: time, &out) }
    }
    return true
  }

  /// GST: time, RMS of the range residuals, error ellipse semi-major and semi-minor (1 sigma,
  /// metres), orientation, latitude, longitude and altitude standard deviations (metres).
  mutating func decodeGST(_ fields: inout NMEAFieldCursor) -> Bool {
    let time = fields.timeOfDay()
    _ = fields.unsignedNumber()
    let major = fields.unsignedNumber()
    let minor = fields.unsignedNumber()
    _ = fields.number()
    let latitudeSigma = fields.unsignedNumber()
    let longitudeSigma = fields.unsignedNumber()
    let altitudeSigma = fields.unsignedNumber()
    if fields.bad { return false }
    let values = GSTValues(
      timeOfDay: time, semiMajor: major, semiMinor: minor, latitudeSigma: latitudeSigma,
      longitudeSigma: longitudeSigma, altitudeSigma: altitudeSigma)
    if epochOpen && (time == nil || time == epoch.timeOfDay) {
      epoch.gst = values
    } else if time != nil {
      pendingGST = values
    }
    return true
  }

  /// GSA: mode A/M, fix type 1/2/3, up to 12 satellite IDs, PDOP, HDOP, VDOP, system ID (4.11).
  /// Receivers that list more or fewer IDs are read from the end: the DOPs are the last three
  /// fields (the last four when the 4.11 system ID is there).
  mutating func decodeGSA(_ fields: inout NMEAFieldCursor) -> Bool {
    fields.skip(1)
    let fixType = fields.integer()
    // One pass, keeping the last four values and how many fields were filled before them.
    var count = 0
    var filled = 0
    var window: (Double?, Double?, Double?, Double?) = (nil, nil, nil, nil)
    while !fields.exhausted {
      if window.0 != nil { filled &+= 1 }
      window = (window.1, window.2, window.3, fields.number())
      count &+= 1
    }
    let pdop: Double?
    let hdop: Double?
    let vdop: Double?
    if count == 16 {
      (pdop, hdop, vdop) = (window.0, window.1, window.2)
    } else {
      if window.0 != nil && count >= 4 { filled &+= 1 }
      (pdop, hdop, vdop) = (window.1, window.2, window.3)
    }
    if (pdop ?? 0) < 0 || (hdop ?? 0) < 0 || (vdop ?? 0) < 0 { fields.bad = true }
    if fields.bad { return false }
    lastFixType = fixType ?? 0
    lastHDOP = hdop
    lastVDOP = vdop
    if epochOpen {
      epoch.gsaSeen = true
      epoch.gsaUsed &+= filled
    }
    return true
  }

  /// GSV: number of messages, message number, satellites in view, then up to four of (ID,
  /// elevation, azimuth, SNR), then the signal ID (4.11).
  mutating func decodeGSV(
    _ fields: inout NMEAFieldCursor, talker: (UInt8, UInt8), _ out: inout [NMEAOutput]
  ) -> Bool {
    let total = fields.integer()
    let number = fields.integer()
    let inView = fields.integer()
    guard let total, let number, total >= 1, number >= 1, number <= total, total <= 99 else {
      return false
    }
    if !options.reportSatellites {
      // Plain digits (nearly always) need no closer look; anything else is read as numbers.
      if !readPlainSatellites(&fields, keep: false) { readSatellites(&fields, keep: false) }
      return !fields.bad
    }
    if number == 1 {
      skyTalker = talker
      skyTotal = total
      skyNext = 1
      skyInView = inView ?? 0
      skySatellites.removeAll(keepingCapacity: true)
    }
    let inGroup = skyTotal == total && skyNext == number && skyTalker == talker
    let before = skySatellites.count
    if !readPlainSatellites(&fields, keep: inGroup) {
      readSatellites(&fields, keep: inGroup)
    }
    if fields.bad {
      skySatellites.removeSubrange(before..<skySatellites.count)
      skyTotal = 0
      return false
    }
    return finishGSV(inGroup, total, number, talker, &out)
  }

  /// The satellites of a GSV sentence, appended when `keep`: blocks of four fields (ID,
  /// elevation, azimuth, SNR) until the fields run out. A lone last field is NMEA 4.11's signal
  /// ID, hexadecimal (one digit in the standard; BeiDou's go past 9); anything else sets `bad`.
  private mutating func readSatellites(_ fields: inout NMEAFieldCursor, keep: Bool) {
    while !fields.exhausted {
      let start = fields
      let id = fields.integer()
      if fields.exhausted {
        fields = start
        _ = fields.hexadecimal()
        return
      }
      let elevation = fields.number()
      let azimuth = fields.number()
      let snr = fields.number()
      if let id, keep {
        skySatellites.append(
          NMEASatellite(id: id, elevation: elevation, azimuth: azimuth, snr: snr))
      }
    }
  }

  /// The satellites of a GSV sentence whose fields are all plain digits or empty (nearly every
  /// receiver's), read by `plainInteger()` in blocks of four, appended when `keep`. False, with
  /// nothing appended and `fields` untouched, when a field is anything else: `readSatellites`
  /// then reads them, and gives the same values for plain fields.
  @inline(__always)
  private mutating func readPlainSatellites(_ fields: inout NMEAFieldCursor, keep: Bool)
    -> Bool
  {
    var plain = fields
    let before = skySatellites.count
    while !plain.exhausted {
      let id = plain.plainInteger()
      // A lone last field is the 4.11 signal ID.
      if plain.exhausted { break }
      let elevation = plain.plainInteger()
      let azimuth = plain.plainInteger()
      let snr = plain.plainInteger()
      if plain.irregular { break }
      if let id, keep {
        skySatellites.append(
          NMEASatellite(
            id: id, elevation: elevation.map { Double($0) }, azimuth: azimuth.map { Double($0) },
            snr: snr.map { Double($0) }))
      }
    }
    guard !plain.irregular else {
      skySatellites.removeSubrange(before..<skySatellites.count)
      return false
    }
    fields = plain
    return true
  }

  /// The end of a GSV sentence read without error: the group goes on, or ends with its view.
  private mutating func finishGSV(
    _ inGroup: Bool, _ total: Int, _ number: Int, _ talker: (UInt8, UInt8),
    _ out: inout [NMEAOutput]
  ) -> Bool {
    guard inGroup else {
      skyTotal = 0
      return true
    }
    skyNext &+= 1
    if number == total {
      let name = NMEADecoder.talkerName(talker)
      out.append(
        .satellites(NMEASkyView(talker: name, inView: skyInView, satellites: skySatellites)))
      skyTotal = 0
    }
    return true
  }

  /// HDT (heading, T), HDM (heading, M), HDG (sensor heading, deviation, E/W, variation, E/W),
  /// THS (true heading, mode).
  mutating func decodeHeading(
    _ fields: inout NMEAFieldCursor, kind: NMEASentenceKind, talker: (UInt8, UInt8),
    _ out: inout [NMEAOutput]
  ) -> Bool {
    let heading = NMEADecoder.normalizedAngle(fields.number(), &fields)
    var result = NMEAHeading(kind: kind, talker: "")
    switch kind {
    case .hdt:
      result.trueHeading = heading
    case .hdm:
      result.magneticHeading = heading
    case .hdg:
      let deviation = fields.unsignedNumber()
      let deviationSide = fields.character()
      let variation = fields.unsignedNumber()
      let variationSide = fields.character()
      result.sensorHeading = heading
      result.deviation = NMEADecoder.signed(deviation, deviationSide, &fields)
      result.variation = NMEADecoder.signed(variation, variationSide, &fields)
      if let heading {
        let magnetic = NMEADecoder.wrap(heading + (result.deviation ?? 0))
        result.magneticHeading = magnetic
        if let variation = result.variation {
          result.trueHeading = NMEADecoder.wrap(magnetic + variation)
        }
      }
    case .ths:
      result.trueHeading = heading
      switch fields.character() {
      case UInt8(ascii: "A"): result.mode = .autonomous
      case UInt8(ascii: "E"): result.mode = .estimated
      case UInt8(ascii: "M"): result.mode = .manual
      case UInt8(ascii: "S"): result.mode = .simulated
      case UInt8(ascii: "V"): result.mode = .invalid
      case 0: result.mode = nil
      default: fields.bad = true
      }
    case .gga, .rmc, .gns, .gll, .gsa, .gsv, .vtg, .zda, .gst:
      break
    }
    if fields.bad { return false }
    guard heading != nil else { return true }
    result.talker = NMEADecoder.talkerName(talker)
    result.time = openEpochTime()
    out.append(.heading(result))
    return true
  }

  /// An angle with an E/W letter, east positive; a value without a letter or a wrong letter is
  /// bad.
  static func signed(_ value: Double?, _ side: UInt8, _ fields: inout NMEAFieldCursor) -> Double? {
    guard let value else { return nil }
    if side == NMEADecoder.east { return value }
    if side == NMEADecoder.west { return -value }
    fields.bad = true
    return nil
  }

  /// The two talker bytes as a (small, not heap-allocated) string; bytes that are not ASCII
  /// letters or digits read as `?`.
  static func talkerName(_ talker: (UInt8, UInt8)) -> String {
    func clean(_ byte: UInt8) -> UInt8 {
      switch byte {
      case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
        UInt8(ascii: "a")...UInt8(ascii: "z"):
        return byte
      default: return UInt8(ascii: "?")
      }
    }
    return String(unsafeUninitializedCapacity: 2) { buffer in
      buffer[0] = clean(talker.0)
      buffer[1] = clean(talker.1)
      return 2
    }
  }

  /// An angle brought into 0..<360.
  static func wrap(_ angle: Double) -> Double {
    var result = angle.truncatingRemainder(dividingBy: 360)
    if result < 0 { result += 360 }
    return result == 360 ? 0 : result
  }
}
