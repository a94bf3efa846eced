import Foundation
import Geodesy
import LocationFormats
import LocationModel
import TestSupport
import Testing

/// Replays every capture of gpsd's regression suite (`Tests/Fixtures/gpsd-regress`) through
/// `NMEADecoder` and checks that each fix gpsd reported (a `TPV` with mode 2 or 3 and a time in
/// the `.chk` file) is among ours: same time of day, latitude and longitude within 1e-7 degrees,
/// altitude above sea level (and above the ellipsoid, where we know the geoid separation) within a
/// millimetre, speed within 0.01 m/s where gpsd has them. Dates are compared separately.
@Suite struct NMEAGPSDRegressionTests {
  /// Captures where we reproduce fewer of gpsd's TPVs, how many fewer at most, and why (with
  /// which of gpsd and us is right).
  static let allowedShortfalls: [String: (count: Int, reason: String)] = [
    "ac12": (
      7,
      "GGA has 5 decimals of minutes, RMC 4: gpsd's dated TPVs carry the later RMC's rounded"
        + " position, ours the finer GGA one (1e-6 degrees apart); both right, ours more precise"
    ),
    "bundg_zeus_9": (
      332,
      "B&G chartplotter relaying GGA, GLL and RMC that disagree for one time (different roundings,"
        + " at times the previous second's position): gpsd's TPVs follow each sentence and"
        + " disagree among themselves; ours is the epoch's last sentence. No ground truth"
    ),
  ]

  struct Expected {
    var line: Int
    var timeOfDayMillis: Int
    var date: String
    var latitude: Double
    var longitude: Double
    var altitudeMSL: Double?
    var altitudeHAE: Double?
    var speed: Double?
    /// False when a later TPV of the same time follows: gpsd's state part-way through an epoch.
    var isFinal = true
  }

  struct CaptureResult {
    var name: String
    var expected = 0
    var matched = 0
    var expectedFinal = 0
    var matchedFinal = 0
    /// TPVs whose time has GGA/GNS/RMC/GLL sentences that disagree on the position.
    var conflicting = 0
    var matchedConflicting = 0
    /// Misses in conflicting epochs where gpsd's position is one of the sentences' positions.
    var explainedMisses = 0
    var dateDifferences = 0
    var firstDateDifference: String?
    var misses: [String] = []
    var ourFixes = 0
  }

  static var captureFolder: URL { Paths.fixtureFolder("gpsd-regress") }

  static func captures() -> [String] {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: captureFolder.path)) ?? []
    return names.filter { $0.hasSuffix(".log") }.map { String($0.dropLast(4)) }.sorted()
  }

  /// The raw text of a member of a flat JSON object: `"key":value` up to the next `,` or `}`.
  static func member(_ key: String, _ line: Substring) -> String? {
    guard let range = line.range(of: "\"\(key)\":") else { return nil }
    let rest = line[range.upperBound...]
    let end = rest.firstIndex { $0 == "," || $0 == "}" } ?? rest.endIndex
    return String(rest[..<end])
  }

  static func expectedFixes(_ chk: String) -> [Expected] {
    var result: [Expected] = []
    // gpsd fills in a speed computed from successive positions when the epoch has no receiver
    // speed yet; only a speed that follows an echoed RMC (of the TPV's time) or VTG (after a
    // sentence of that time) with a speed is the receiver's, and only that one is compared.
    // Likewise altitude is compared only where an echoed GGA or GNS of that time carried one
    // (gpsd also takes altitude from Garmin's proprietary PGRMZ, which we skip). Both sets are
    // cleared when the capture's time runs backwards (captures that loop).
    var speedTimes: Set<Int> = []
    var altitudeTimes: Set<Int> = []
    var lastEchoTime: Int?
    var lastTPVTime = -1
    for (index, line) in chk.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
      .enumerated()
    {
      if line.hasPrefix("$") {
        let fields = line.split(separator: ",", omittingEmptySubsequences: false)
        let type = fields.first?.dropFirst(3) ?? ""
        let timeField: Substring? =
          switch type {
          case "RMC", "GGA", "GNS", "ZDA": fields.count > 1 ? fields[1] : nil
          case "GLL": fields.count > 5 ? fields[5] : nil
          default: nil
          }
        if let timeField, let value = Double(timeField) {
          let whole = Int(value)
          lastEchoTime =
            ((whole / 10_000) * 3600 + (whole / 100 % 100) * 60 + whole % 100) * 1000
            + Int(((value - Double(whole)) * 1000).rounded())
        }
        if (type == "GGA" && fields.count > 9 && !fields[9].isEmpty)
          || (type == "GNS" && fields.count > 9 && !fields[9].isEmpty), let lastEchoTime
        {
          altitudeTimes.insert(lastEchoTime)
        }
        if type == "RMC" && fields.count > 7 && !fields[7].isEmpty, let lastEchoTime {
          speedTimes.insert(lastEchoTime)
        }
        if type == "VTG" && fields.count > 5, let lastEchoTime {
          let knots = fields[2] == "T" ? fields[5] : fields[3]
          if !knots.isEmpty { speedTimes.insert(lastEchoTime) }
        }
        continue
      }
      guard line.hasPrefix("{\"class\":\"TPV\"") else { continue }
      // gpsd's TPV objects are flat; Foundation's JSON parser rejects some of its numbers
      // ("1552.8000"), so the few members needed are read directly.
      guard let mode = Self.member("mode", line).flatMap({ Int($0) }), mode >= 2,
        let time = Self.member("time", line)?.trimmingCharacters(in: ["\""]),
        let latitude = Self.member("lat", line).flatMap({ Double($0) }),
        let longitude = Self.member("lon", line).flatMap({ Double($0) })
      else { continue }
      // "YYYY-MM-DDThh:mm:ss.sssZ"
      let parts = time.split(separator: "T")
      guard parts.count == 2 else { continue }
      let clock = parts[1].dropLast().split(separator: ":")
      guard clock.count == 3, let hours = Int(clock[0]), let minutes = Int(clock[1]),
        let seconds = Double(clock[2])
      else { continue }
      let millis = (hours * 3600 + minutes * 60) * 1000 + Int((seconds * 1000).rounded())
      if millis < lastTPVTime {
        speedTimes = speedTimes.filter { $0 < millis }
        altitudeTimes = altitudeTimes.filter { $0 < millis }
      }
      lastTPVTime = millis
      let hasAltitude = altitudeTimes.contains(millis)
      result.append(
        Expected(
          line: index + 1, timeOfDayMillis: millis, date: String(parts[0]), latitude: latitude,
          longitude: longitude,
          altitudeMSL: hasAltitude
            ? (Self.member("altMSL", line) ?? Self.member("alt", line)).flatMap { Double($0) }
            : nil,
          altitudeHAE: hasAltitude ? Self.member("altHAE", line).flatMap { Double($0) } : nil,
          speed: speedTimes.contains(millis)
            ? Self.member("speed", line).flatMap { Double($0) } : nil))
    }
    for index in result.indices.dropLast()
    where result[index + 1].timeOfDayMillis == result[index].timeOfDayMillis
      && result[index + 1].date == result[index].date
    {
      result[index].isFinal = false
    }
    return result
  }

  static func dateString(_ time: Double) -> String {
    let days = Int((time / 86_400).rounded(.down))
    // Civil from days: H. Hinnant, "chrono-Compatible Low-Level Date Algorithms", civil_from_days.
    let z = days + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let dayOfEra = z - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let mp = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * mp + 2) / 5 + 1
    let month = mp < 10 ? mp + 3 : mp - 9
    let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    return String(format: "%04d-%02d-%02d", year, month, day)
  }

  /// The positions the capture's own GGA, GNS, RMC and GLL sentences (good checksum, valid
  /// position) give for each time of day, in milliseconds; read independently of the decoder.
  static func sentencePositions(_ log: Data) -> [Int: [(Double, Double)]] {
    var result: [Int: [(Double, Double)]] = [:]
    let text = String(decoding: log, as: UTF8.self)
    for line in text.split(whereSeparator: \.isNewline) {
      guard let dollar = line.firstIndex(of: "$"), let star = line.lastIndex(of: "*"),
        dollar < star
      else { continue }
      let body = line[line.index(after: dollar)..<star]
      var sum: UInt8 = 0
      for byte in body.utf8 { sum ^= byte }
      let hex = line[line.index(after: star)...].prefix(2)
      guard UInt8(hex, radix: 16) == sum else { continue }
      let fields = body.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
      guard let type = fields.first?.dropFirst(2) else { continue }
      let layout: (time: Int, latitude: Int)
      switch type {
      case "GGA", "GNS": layout = (1, 2)
      case "RMC": layout = (1, 3)
      case "GLL": layout = (5, 1)
      default: continue
      }
      guard fields.count > max(layout.time, layout.latitude + 3),
        let time = Double(fields[layout.time]),
        let latitude = Double(fields[layout.latitude]),
        let longitude = Double(fields[layout.latitude + 2])
      else { continue }
      if type == "GGA" && (fields.count < 7 || fields[6] == "0" || fields[6].isEmpty) { continue }
      if type == "RMC" && fields[2] != "A" { continue }
      func degrees(_ value: Double, _ hemisphere: String) -> Double {
        let whole = (value / 100).rounded(.down)
        let result = whole + (value - whole * 100) / 60
        return hemisphere == "S" || hemisphere == "W" ? -result : result
      }
      let whole = Int(time)
      let millis =
        ((whole / 10_000) * 3600 + (whole / 100 % 100) * 60 + whole % 100) * 1000
        + Int(((time - Double(whole)) * 1000).rounded())
      result[millis, default: []].append(
        (
          degrees(latitude, fields[layout.latitude + 1]),
          degrees(longitude, fields[layout.latitude + 3])
        ))
    }
    return result
  }

  static func replay(_ name: String) throws -> CaptureResult {
    let log = try Data(contentsOf: captureFolder.appendingPathComponent(name + ".log"))
    let chk = try String(
      contentsOf: captureFolder.appendingPathComponent(name + ".log.chk"), encoding: .utf8)
    let decoded = NMEADecoder.decodeLog([UInt8](log))
    var ours: [Int: [(fix: Fix, dated: Bool)]] = [:]
    var result = CaptureResult(name: name)
    for output in decoded.outputs {
      switch output {
      case .fix(let fix), .undatedFix(let fix):
        let dated: Bool
        if case .fix = output { dated = true } else { dated = false }
        let secondsOfDay = fix.time - (fix.time / 86_400).rounded(.down) * 86_400
        ours[Int((secondsOfDay * 1000).rounded()), default: []].append((fix, dated))
        result.ourFixes += 1
      case .noFix, .heading, .satellites:
        break
      }
    }
    let positions = sentencePositions(log)
    for expected in expectedFixes(chk) {
      result.expected += 1
      // Sentences of this time that disagree on the position: gpsd's TPV follows whichever it
      // read last before printing, so no single fix can match every TPV of that time.
      let candidatesFromSentences = positions[expected.timeOfDayMillis] ?? []
      let conflicting = candidatesFromSentences.contains { position in
        candidatesFromSentences.contains {
          abs($0.0 - position.0) > 1e-7 || abs($0.1 - position.1) > 1e-7
        }
      }
      if conflicting { result.conflicting += 1 }
      let candidates = ours[expected.timeOfDayMillis] ?? []
      let match = candidates.first { candidate in
        let fix = candidate.fix
        guard abs(fix.latitude - expected.latitude) <= 1e-7,
          abs(fix.longitude - expected.longitude) <= 1e-7
        else { return false }
        if let altitude = expected.altitudeMSL {
          guard let ours = fix.altitude, abs(ours - altitude) <= 1e-3 else { return false }
        }
        if let altitude = expected.altitudeHAE, let ours = fix.ellipsoidalAltitude {
          guard abs(ours - altitude) <= 1e-3 else { return false }
        }
        if let speed = expected.speed {
          guard fix.speed >= 0, abs(fix.speed - speed) <= 0.01 else { return false }
        }
        return true
      }
      if expected.isFinal { result.expectedFinal += 1 }
      if let match {
        result.matched += 1
        if conflicting { result.matchedConflicting += 1 }
        if expected.isFinal { result.matchedFinal += 1 }
        let ourDate = match.dated ? dateString(match.fix.time) : "undated"
        if ourDate != expected.date {
          result.dateDifferences += 1
          if result.firstDateDifference == nil {
            result.firstDateDifference = "gpsd \(expected.date), ours \(ourDate)"
          }
        }
      } else {
        // A miss in a conflicting epoch is explained when gpsd's position is one of the
        // sentences' positions of that time.
        if conflicting
          && candidatesFromSentences.contains(where: {
            abs($0.0 - expected.latitude) <= 1e-7 && abs($0.1 - expected.longitude) <= 1e-7
          })
        {
          result.explainedMisses += 1
        }
        let near = candidates.map {
          "(\($0.fix.latitude), \($0.fix.longitude), alt \($0.fix.altitude ?? .nan), "
            + "hae \($0.fix.ellipsoidalAltitude ?? .nan), speed \($0.fix.speed))"
        }
        result.misses.append(
          "chk line \(expected.line): gpsd (\(expected.latitude), \(expected.longitude), alt "
            + "\(expected.altitudeMSL ?? .nan), hae \(expected.altitudeHAE ?? .nan), speed "
            + "\(expected.speed ?? .nan)); ours at that time: \(near)")
      }
    }
    return result
  }

  /// The per-capture table, the overall figures, and the allow-list check.
  ///
  /// gpsd prints a TPV after most sentences, so one epoch gives several TPVs of the same time;
  /// the last one is gpsd's merged result for that epoch ("final"). Every TPV is counted. Where
  /// the capture's own position sentences of one time disagree ("conflict"), gpsd's TPVs of that
  /// time follow whichever sentence it read last before printing, and no single fix matches them
  /// all: the 99.5 % target is asserted over the TPVs without such a conflict, and the figure
  /// over all TPVs is printed (and held above 93 %). Every capture with a TPV we do not reproduce
  /// must be in the allow-list, with its reason.
  @Test func reproducesGPSDFixes() throws {
    let names = Self.captures()
    try #require(!names.isEmpty, "no captures in \(Self.captureFolder.path)")
    var total = CaptureResult(name: "total")
    let verbose = ProcessInfo.processInfo.environment["NMEA_REGRESS_VERBOSE"] != nil
    print("capture                      TPVs matched  final matched conflict missed dates  note")
    for name in names {
      let result = try Self.replay(name)
      total.expected += result.expected
      total.matched += result.matched
      total.expectedFinal += result.expectedFinal
      total.matchedFinal += result.matchedFinal
      total.conflicting += result.conflicting
      total.matchedConflicting += result.matchedConflicting
      total.explainedMisses += result.explainedMisses
      let missed = result.expected - result.matched
      let allowance = Self.allowedShortfalls[name]
      let padded = name.padding(toLength: 28, withPad: " ", startingAt: 0)
      let figures = String(
        format: "%4d %7d %6d %7d %8d %6d %5d", result.expected, result.matched,
        result.expectedFinal, result.matchedFinal, result.conflicting, missed,
        result.dateDifferences)
      let dates = result.firstDateDifference.map { " [dates: \($0)]" } ?? ""
      print("\(padded) \(figures)  \(missed > 0 ? allowance?.reason ?? "" : "")\(dates)")
      if verbose {
        for miss in result.misses.prefix(5) { print("    \(miss)") }
      }
      if missed > 0 {
        #expect(
          allowance != nil && missed <= allowance?.count ?? 0,
          "\(name): \(missed) of gpsd's fixes not reproduced, first: \(result.misses.first ?? "")")
      }
    }
    func percent(_ part: Int, _ whole: Int) -> Double {
      whole == 0 ? 0 : Double(part) / Double(whole) * 100
    }
    let clean = total.expected - total.conflicting
    let cleanMatched = total.matched - total.matchedConflicting
    print(
      "TPVs without a conflict: \(cleanMatched) of \(clean) reproduced "
        + "(\(String(format: "%.2f", percent(cleanMatched, clean))) %); all TPVs: "
        + "\(total.matched) of \(total.expected) (\(String(format: "%.2f", percent(total.matched, total.expected))) %); "
        + "final TPVs of each epoch: \(total.matchedFinal) of \(total.expectedFinal) "
        + "(\(String(format: "%.2f", percent(total.matchedFinal, total.expectedFinal))) %)")
    print(
      "misses in conflicting epochs where gpsd's position is one of that time's sentence "
        + "positions: \(total.explainedMisses) of \(total.expected - total.matched)")
    #expect(percent(cleanMatched, clean) >= 99.5)
    #expect(total.explainedMisses == total.expected - total.matched)
    #expect(percent(total.matched, total.expected) >= 93)
  }
}
