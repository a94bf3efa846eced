import Foundation
import Geodesy
import LocationFormats
import LocationModel
import TestSupport
import Testing

/// Builds `$BODY*hh\r\n` with the right checksum.
func nmea(_ body: String) -> String {
  var sum: UInt8 = 0
  for byte in body.utf8 { sum ^= byte }
  let hex = String(sum, radix: 16, uppercase: true)
  return "$\(body)*\(hex.count == 1 ? "0" : "")\(hex)\r\n"
}

/// Decodes a whole log given as text.
func decode(_ text: String, options: NMEADecoder.Options = .init()) -> (
  outputs: [NMEAOutput], statistics: NMEAStatistics
) {
  NMEADecoder.decodeLog(Array(text.utf8), options: options)
}

func fixes(_ outputs: [NMEAOutput]) -> [Fix] {
  outputs.compactMap { if case .fix(let fix) = $0 { fix } else { nil } }
}

@Suite struct NMEADecoderTests {
  static let gga = "GPGGA,123519.00,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,"
  static let rmc = "GPRMC,123519.00,A,4807.038,N,01131.000,E,022.4,084.4,230394,003.1,W"

  /// A receiver's simulator mode (RMC's mode indicator `S`) makes a simulated fix, and no other
  /// quality does (`FixQuality.isSimulated`, asked for every fix the decoder makes).
  @Test func simulatorModeMakesASimulatedFix() throws {
    let simulated = try #require(fixes(decode(nmea(Self.rmc + ",S")).outputs).first)
    #expect(simulated.quality == .simulated && simulated.isSimulated)
    let real = try #require(fixes(decode(nmea(Self.rmc + ",A")).outputs).first)
    #expect(real.quality == .autonomous && !real.isSimulated)
    for quality in FixQuality.allCases {
      #expect(quality.isSimulated == (quality == .simulated), "\(quality)")
    }
  }

  @Test func mergesOneEpoch() throws {
    let log = nmea(Self.gga) + nmea(Self.rmc) + nmea("GPGSA,A,3,04,05,,09,12,,,24,,,,,2.5,1.3,2.1")
    let result = decode(log)
    let fix = try #require(fixes(result.outputs).first)
    #expect(fixes(result.outputs).count == 1)
    #expect(abs(fix.latitude - (48 + 7.038 / 60)) < 1e-12)
    #expect(abs(fix.longitude - (11 + 31.0 / 60)) < 1e-12)
    #expect(fix.altitude == 545.4)
    #expect(abs((fix.ellipsoidalAltitude ?? 0) - 592.3) < 1e-9)
    #expect(abs(fix.speed - 22.4 * 1852 / 3600) < 1e-12)
    #expect(fix.course == 84.4)
    // 1994-03-23T12:35:19Z
    #expect(fix.time == 764_426_119)
    #expect(fix.quality == .autonomous)
    #expect(fix.satellitesUsed == 8)
    #expect(abs(fix.horizontalAccuracy - 0.9 * 4) < 1e-12)
    #expect(abs(fix.verticalAccuracy - 2.1 * 4) < 1e-12)
    #expect(fix.hasValidCoordinate)
    #expect(result.statistics.sentences == 3)
    #expect(result.statistics.count(of: .gga) == 1)
    #expect(result.statistics.fixes == 1)
  }

  @Test func newTimeClosesTheEpoch() throws {
    var decoder = NMEADecoder(options: .init(defaultDate: NMEADate(year: 2024, month: 5, day: 1)))
    func feed(_ text: String) -> [NMEAOutput] {
      Array(text.utf8).withUnsafeBytes { decoder.decode(bytes: $0) }
    }
    #expect(feed(nmea(Self.gga)).isEmpty)
    let next = feed(nmea("GPGGA,123520.00,4807.040,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,"))
    let first = try #require(fixes(next).first)
    #expect(first.time == NMEADate(year: 2024, month: 5, day: 1).secondsSinceEpoch + 45_319)
    let last = try #require(fixes(decoder.finish()).first)
    #expect(last.time == first.time + 1)
  }

  @Test func holdsEpochsUntilTheFirstDate() {
    var log = ""
    for second in 55...59 {
      log += nmea("GPGGA,2359\(second),4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,")
    }
    log += nmea("GPRMC,000000,A,4807.038,N,01131.000,E,0.0,0.0,010125,,")
    let result = decode(log)
    let times = fixes(result.outputs).map(\.time)
    let midnight = NMEADate(year: 2025, month: 1, day: 1).secondsSinceEpoch
    // The held epochs are from the day before the RMC's date.
    #expect(times == [-5, -4, -3, -2, -1, 0].map { midnight + $0 })
  }

  @Test func rollsOverAtMidnight() {
    let log =
      nmea("GPRMC,235959,A,4807.038,N,01131.000,E,0.0,0.0,311299,,")
      + nmea("GPGGA,000000,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,")
    let times = fixes(decode(log).outputs).map(\.time)
    let newYear = NMEADate(year: 2000, month: 1, day: 1).secondsSinceEpoch
    #expect(times == [newYear - 1, newYear])
  }

  @Test func givesUndatedFixesWhenNoDateComes() throws {
    let result = decode(nmea(Self.gga))
    guard case .undatedFix(let fix) = try #require(result.outputs.first) else {
      Issue.record("expected an undated fix")
      return
    }
    #expect(fix.time == 45_319)
    var log = ""
    for second in 10..<20 {
      log += nmea("GPGGA,1200\(second),4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,")
    }
    let limited = decode(log, options: .init(maximumHeldEpochs: 3))
    #expect(limited.outputs.allSatisfy { if case .undatedFix = $0 { true } else { false } })
    #expect(limited.outputs.count == 10)
  }

  @Test func reportsOldReceiverDatesAsDecoded() throws {
    // A receiver hit by the GPS week rollover says 1999-08-22 in 2019: kept as it is.
    let log = nmea("GPRMC,120000,A,4807.038,N,01131.000,E,0.0,0.0,220899,,")
    let fix = try #require(fixes(decode(log).outputs).first)
    #expect(fix.time == NMEADate(year: 1999, month: 8, day: 22).secondsSinceEpoch + 43_200)
  }

  @Test func zdaDates() throws {
    let log =
      nmea("GPZDA,120000.00,05,06,2023,00,00")
      + nmea(
        Self.gga.replacingOccurrences(
          of: "123519.00", with: "120001.00"))
    let fix = try #require(fixes(decode(log).outputs).first)
    #expect(fix.time == NMEADate(year: 2023, month: 6, day: 5).secondsSinceEpoch + 43_201)
  }

  @Test func accuracyFromGSTThenDOPThenQuality() throws {
    let dated = NMEADecoder.Options(defaultDate: NMEADate(year: 2020, month: 1, day: 1))
    let withGST = decode(
      nmea(Self.gga) + nmea("GPGST,123519.00,1.2,3.0,2.0,45.0,1.5,2.0,4.5"), options: dated)
    let gstFix = try #require(fixes(withGST.outputs).first)
    #expect(abs(gstFix.horizontalAccuracy - 2.5) < 1e-12)
    #expect(gstFix.verticalAccuracy == 4.5)
    // GST before the epoch's first position sentence still counts.
    let early = decode(
      nmea("GPGST,123519.00,1.2,3.0,2.0,45.0,1.5,2.0,4.5") + nmea(Self.gga), options: dated)
    #expect(fixes(early.outputs).first?.horizontalAccuracy == gstFix.horizontalAccuracy)
    let noDOP = decode(nmea("GPRMC,123519.00,A,4807.038,N,01131.000,E,,,230394,,,D"))
    let fix = try #require(fixes(noDOP.outputs).first)
    #expect(fix.quality == .differential)
    #expect(fix.horizontalAccuracy == NMEADecoder.defaultAccuracy(for: .differential))
    #expect(fix.speed == -1 && fix.course == -1)
    let rtk = decode(
      nmea("GNGGA,123519.00,4807.038,N,01131.000,E,4,20,0.5,545.4,M,46.9,M,1.0,0001")
        + nmea(Self.rmc))
    let rtkFix = try #require(fixes(rtk.outputs).first)
    #expect(rtkFix.quality == .rtkFixed)
    #expect(abs(rtkFix.horizontalAccuracy - 0.5 * 4 * 0.005) < 1e-12)
  }

  @Test func noFixEpochs() throws {
    let log =
      nmea("GPRMC,010203,V,,,,,,,230394,,,N") + nmea("GPGGA,010203,,,,,0,00,99.99,,,,,,")
      + nmea(Self.rmc)
    let result = decode(log)
    guard case .noFix(let time) = try #require(result.outputs.first) else {
      Issue.record("expected no fix first")
      return
    }
    #expect(time == NMEADate(year: 1994, month: 3, day: 23).secondsSinceEpoch + 3723)
    #expect(fixes(result.outputs).count == 1)
    #expect(result.statistics.noFixEpochs == 1)
  }

  @Test(arguments: [
    ("GPGGA,123519,48x7.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,", "letter in a number"),
    ("GPGGA,123519,4860.000,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,", "60 minutes"),
    ("GPGGA,243519,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,", "hour 24"),
    ("GPGGA,123519,4807.038,X,01131.000,E,1,08,0.9,545.4,M,46.9,M,,", "bad hemisphere"),
    ("GPGGA,123519,9107.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,", "latitude 91"),
    ("GPRMC,123519,A,4807.038,N,18131.000,E,022.4,084.4,230394,003.1,W", "longitude 181"),
    ("GPRMC,123519,A,4807.038,N,01131.000,E,022.4,400.0,230394,003.1,W", "course 400"),
    ("GPGSV,3,4,11,01,02,003,04", "message 4 of 3"),
    ("GPGGA,123519,4807.038,N,01131.000,E,1,08,0.9,5.4.5,M,46.9,M,,", "two points"),
  ])
  func skipsMalformedSentences(body: String, why: String) {
    let result = decode(nmea("GPZDA,000000,01,01,2020,,") + nmea(body))
    #expect(result.outputs.isEmpty, "\(why)")
    #expect(result.statistics.malformed == 1, "\(why)")
    #expect(result.statistics.firstBadLine == 2, "\(why)")
    #expect(result.statistics.firstError(file: "x.nmea")?.line == 2)
  }

  @Test func checksums() {
    let good = nmea(Self.gga)
    let lower = good.lowercased().replacingOccurrences(of: "$gpgga", with: "$GPGGA")
      .replacingOccurrences(of: ",n,", with: ",N,").replacingOccurrences(of: ",e,", with: ",E,")
      .replacingOccurrences(of: ",m,", with: ",M,")
    #expect(
      fixes(
        decode(lower, options: .init(defaultDate: .init(year: 2020, month: 1, day: 1)))
          .outputs
      ).count == 1)
    let wrong = good.replacingOccurrences(of: "545.4", with: "545.5")
    let bad = decode(wrong)
    #expect(bad.outputs.isEmpty)
    #expect(bad.statistics.checksumErrors == 1)
    let bare = "$\(Self.gga)\r\n"
    #expect(decode(bare).statistics.missingChecksum == 1)
    #expect(decode(bare).outputs.isEmpty)
    #expect(decode(bare, options: .init(acceptMissingChecksum: true)).statistics.fixes == 1)
  }

  @Test func countsWhatItSkips() {
    let log =
      "# a comment\r\n\r\n" + nmea("PGRME,7.6,M,41.7,M,42.4,M") + nmea("WIMWV,78.8,R,12.0,N,A")
      + "!AIVDM,1,1,,B,ENk`s@96TPVTh6h@@@@@@@@@@@@=8e2s7Gm?@00003vP000,2*4D\r\n"
      + "\u{1}\u{2}garbage\n"
    let statistics = decode(log).statistics
    #expect(statistics.proprietary == 1)
    #expect(statistics.unknown == 2)
    #expect(statistics.otherLines == 3)
    #expect(statistics.lines == 6)
    #expect(statistics.sentences == 0)
  }

  @Test func readsSentencesRunTogetherOrAfterNoise() {
    let truncated = "$GPGGA,123519,4807.0"
    let log = "\u{B5}b\u{1}" + truncated + nmea(Self.gga) + nmea(Self.rmc)
    let result = decode(log)
    #expect(result.statistics.sentences == 2)
    #expect(result.statistics.missingChecksum == 1)
    #expect(fixes(result.outputs).count == 1)
  }

  @Test func headings() throws {
    let log =
      nmea("HEHDT,274.07,T") + nmea("HCHDG,101.1,2.0,E,3.5,W") + nmea("HCHDM,98.5,M")
      + nmea("GPTHS,359.99,A") + nmea("INTHS,,V")
    let headings = decode(log).outputs.compactMap {
      if case .heading(let heading) = $0 { heading } else { nil }
    }
    #expect(headings.count == 4)
    #expect(headings[0] == NMEAHeading(kind: .hdt, talker: "HE", trueHeading: 274.07))
    #expect(headings[1].sensorHeading == 101.1)
    #expect(headings[1].deviation == 2.0)
    #expect(headings[1].variation == -3.5)
    #expect(abs((headings[1].magneticHeading ?? 0) - 103.1) < 1e-9)
    #expect(abs((headings[1].trueHeading ?? 0) - 99.6) < 1e-9)
    #expect(headings[2].magneticHeading == 98.5)
    #expect(headings[3].trueHeading == 359.99)
    #expect(headings[3].mode == .autonomous)
    #expect(decode(log).statistics.count(of: .ths) == 2)
  }

  @Test func headingTimeComesFromTheOpenEpoch() throws {
    let log = nmea(Self.rmc) + nmea("GPHDT,10.0,T")
    let heading = try #require(
      decode(log).outputs.compactMap { if case .heading(let h) = $0 { h } else { nil } }.first)
    #expect(heading.time == NMEADate(year: 1994, month: 3, day: 23).secondsSinceEpoch + 45_319)
  }

  /// The sky views decoded from GSV sentences (bodies without `$` and checksum).
  func skyViews(_ bodies: String...) -> [NMEASkyView] {
    skyViews(in: decode(bodies.map(nmea).joined()).outputs)
  }

  /// The sky views among a decoder's outputs.
  func skyViews(in outputs: [NMEAOutput]) -> [NMEASkyView] {
    outputs.compactMap { if case .satellites(let view) = $0 { view } else { nil } }
  }

  @Test func satelliteGroups() throws {
    let views = skyViews(
      "GPGSV,2,1,05,01,40,083,46,02,17,308,41,12,07,344,39,14,22,228,45", "GPGSV,2,2,05,15,,,",
      "GLGSV,1,1,01,65,10,100,,1")
    #expect(views.count == 2)
    #expect(views[0].talker == "GP")
    #expect(views[0].inView == 5)
    #expect(views[0].satellites.map(\.id) == [1, 2, 12, 14, 15])
    #expect(views[0].satellites[0] == NMEASatellite(id: 1, elevation: 40, azimuth: 83, snr: 46))
    #expect(views[0].satellites[4] == NMEASatellite(id: 15))
    #expect(views[1].talker == "GL")
    #expect(views[1].satellites == [NMEASatellite(id: 65, elevation: 10, azimuth: 100)])
  }

  /// Plain digits take a shorter reader than other numbers: a group mixing both, a decimal or a
  /// sign in the middle of a sentence, and a signal ID, give the same satellites as
  /// the general reader gives them.
  @Test func satellitesOfPlainAndOtherFieldsAgree() throws {
    let views = skyViews(
      "GPGSV,3,1,06,01,40,083,46,02,17,308,41", "GPGSV,3,2,06,03,07.5,344,39,04,-2,228,+45",
      "GPGSV,3,3,06,05,,,,06,90,000,00,1")
    try #require(views.count == 1)
    #expect(
      views[0].satellites == [
        NMEASatellite(id: 1, elevation: 40, azimuth: 83, snr: 46),
        NMEASatellite(id: 2, elevation: 17, azimuth: 308, snr: 41),
        NMEASatellite(id: 3, elevation: 7.5, azimuth: 344, snr: 39),
        NMEASatellite(id: 4, elevation: -2, azimuth: 228, snr: 45),
        NMEASatellite(id: 5),
        NMEASatellite(id: 6, elevation: 90, azimuth: 0, snr: 0),
      ])
  }

  /// With satellites off, GSV's plain fields are only scanned; a field that is not plain digits
  /// is read as a number, so a sentence counts as good or malformed as it does with satellites on.
  @Test(arguments: [
    ("GPGSV,1,1,02,01,40,083,46,02,17,308,41", true),
    ("GPGSV,1,1,02,01,40,083,46,02,17,308,", true),
    ("GPGSV,1,1,01,01,-3,083.5,+46,1", true),
    ("GPGSV,1,1,01,0123456789,40,083,46", true),
    ("GPGSV,1,1,01,01,123456789012345678,083,46", false),
    ("GPGSV,1,1,01,01,4O,083,46", false),
    ("GPGSV,1,1,01,01,40,083,-", false),
    ("GPGSV,1,1,x1,01,40,083,46", false),
    ("GPGSV,1,1,01,01,40,083,46,,,,,,,,", true),
    ("GPGSV,1,1,01,01,4000000000,083,46", true),
    ("GPGSV,1,1,01,01,400000000,083,46", true),
    ("GPGSV,1,1,01,01,40,083,4600000000", true),
    ("GPGSV,1,1,01,01,40,083,460000000", true),
    ("GPGSV,1,1,01,0100000000,40,083,46", true),
    ("GPGSV,1,1,01,01,40,083,46;", false),
    ("GPGSV,1,1,01,01,40,083,46 ", false),
    // NMEA 4.11's signal ID, the lone last field, is hexadecimal.
    ("GBGSV,1,1,01,01,40,083,46,B", true),
    ("GPGSV,1,1,01,01,40,083,46,10", true),
    ("GPGSV,1,1,01,01,40,083,46,G", false),
    ("GPGSV,1,1,01,01,40,083,46,b", true),
    ("GPGSV,1,1,01,01,40,083,46,1.5", false),
  ])
  func satellitesOffChecksGSVAsSatellitesOnDoes(body: String, good: Bool) {
    for reportSatellites in [false, true] {
      let result = decode(nmea(body), options: .init(reportSatellites: reportSatellites))
      #expect(result.statistics.malformed == (good ? 0 : 1), "\(body), on: \(reportSatellites)")
      #expect(result.statistics.sentences == (good ? 1 : 0), "\(body), on: \(reportSatellites)")
    }
  }

  @Test func gnsModes() throws {
    let log =
      nmea("GNGNS,014035.00,4332.69262,S,17235.48549,E,RR,13,0.9,25.63,11.24,,")
      + nmea(
        "GNRMC,014035.00,A,4332.69262,S,17235.48549,E,0.0,,010120,,,R")
    let fix = try #require(fixes(decode(log).outputs).first)
    #expect(fix.quality == .rtkFixed)
    #expect(fix.latitude < 0)
    #expect(abs((fix.ellipsoidalAltitude ?? 0) - 36.87) < 1e-9)
    #expect(fix.satellitesUsed == 13)
  }

  @Test func oldVTGandGLL() throws {
    let log =
      nmea("GPGLL,4916.45,N,12311.12,W,225444,A") + nmea("GPVTG,054.7,034.4,005.5,010.2")
      + nmea("GPRMC,225444,A,4916.45,N,12311.12,W,,,191194,020.3,E")
    let fix = try #require(fixes(decode(log).outputs).first)
    #expect(fix.course == 54.7)
    #expect(abs(fix.speed - 5.5 * 1852 / 3600) < 1e-12)
    #expect(fix.longitude < 0)
  }

  @Test func twoDigitYears() throws {
    let late = try #require(
      fixes(decode(nmea("GPRMC,000000,A,4807.038,N,01131.000,E,,,010180,,")).outputs).first)
    #expect(late.time == NMEADate(year: 1980, month: 1, day: 1).secondsSinceEpoch)
    let early = try #require(
      fixes(decode(nmea("GPRMC,000000,A,4807.038,N,01131.000,E,,,010179,,")).outputs).first)
    #expect(early.time == NMEADate(year: 2079, month: 1, day: 1).secondsSinceEpoch)
  }

  @Test func chunkingDoesNotMatter() throws {
    var log = nmea(Self.gga) + nmea(Self.rmc) + nmea("HEHDT,274.07,T")
    log += nmea("GPGSV,1,1,02,01,40,083,46,02,17,308,41")
    log += nmea("GPGGA,123520.00,4807.040,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,")
    let bytes = Array(log.utf8)
    let whole = NMEADecoder.decodeLog(bytes)
    for size in [1, 2, 3, 7, 64] {
      var decoder = NMEADecoder()
      var outputs: [NMEAOutput] = []
      var start = 0
      while start < bytes.count {
        let end = min(start + size, bytes.count)
        outputs += bytes[start..<end].withUnsafeBytes { decoder.decode(bytes: $0) }
        start = end
      }
      outputs += decoder.finish()
      #expect(outputs == whole.outputs)
      #expect(decoder.statistics == whole.statistics)
    }
    var lines = NMEADecoder()
    var outputs: [NMEAOutput] = []
    for line in log.split(separator: "\n") {
      outputs += Array(line.utf8).withUnsafeBytes { lines.decode(line: $0) }
    }
    outputs += lines.finish()
    #expect(outputs == whole.outputs)
  }

  @Test func overlongLinesAreDropped() {
    let noise = String(repeating: "A", count: NMEADecoder.maximumLineLength + 10)
    let result = decode(noise + "\n" + nmea(Self.gga))
    #expect(result.statistics.overlongLines == 1)
    #expect(result.statistics.firstBadLine == 1)
    #expect(result.statistics.count(of: .gga) == 1)
  }

  @Test func dates() {
    #expect(NMEADate(year: 1970, month: 1, day: 1).daysSinceEpoch == 0)
    #expect(NMEADate(year: 2000, month: 3, day: 1).daysSinceEpoch == 11_017)
    #expect(NMEADate(year: 1969, month: 12, day: 31).daysSinceEpoch == -1)
    #expect(NMEADate(year: 2024, month: 2, day: 29).isValid)
    #expect(!NMEADate(year: 2023, month: 2, day: 29).isValid)
    #expect(!NMEADate(year: 2023, month: 13, day: 1).isValid)
  }

  /// Inputs kept in Tests/Fixtures/nmea (edge cases and anything the fuzzer ever found) decode
  /// without a crash, and every fix they give is valid.
  @Test func fixtureRegressions() throws {
    let folder = Paths.fixtureFolder("nmea")
    let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
    #expect(!names.isEmpty)
    for name in names {
      let bytes = try [UInt8](Data(contentsOf: folder.appendingPathComponent(name)))
      let result = NMEADecoder.decodeLog(bytes)
      for case .fix(let fix) in result.outputs {
        #expect(fix.hasValidCoordinate, "\(name)")
        #expect(fix.time.isFinite && fix.horizontalAccuracy.isFinite, "\(name)")
      }
      #expect(result.statistics.lines > 0, "\(name)")
    }
  }

  /// A real receiver's BeiDou sky view, whose GSV sentences end in the signal ID `B` (ST's Teseo
  /// LIV4F, from gpsd's regression captures): every sentence counts and the view is whole.
  @Test func beidouSignalIDFromARealReceiver() throws {
    let file = Paths.fixtureFolder("gpsd-regress").appendingPathComponent("st-teseo-liv4f.log")
    let log = String(decoding: try Data(contentsOf: file), as: UTF8.self)
    let sentences = log.split(separator: "\n").filter { $0.contains("BDGSV") && $0.contains(",B*") }
    try #require(sentences.count == 2)
    // The capture writes each sentence after a `$` of its own (`$$BDGSV...`): one is kept.
    let result = decode(
      sentences.map { "$" + $0.drop { $0 == "$" } + "\n" }.joined(),
      options: .init(reportSatellites: true))
    #expect(result.statistics.malformed == 0)
    let view = try #require(skyViews(in: result.outputs).first { $0.talker == "BD" })
    #expect(view.satellites.map(\.id) == [44, 34, 25, 23, 38, 43])
    #expect(view.satellites[0] == NMEASatellite(id: 44, elevation: 61, azimuth: 62, snr: 10))
  }
}

extension NMEADate {
  var secondsSinceEpoch: Double { Double(daysSinceEpoch) * 86_400 }
}
