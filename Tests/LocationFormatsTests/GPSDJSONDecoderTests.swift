import Foundation
import Geodesy
import LocationModel
import TestSupport
import Testing

@testable import LocationFormats

/// The gpsd JSON decoder on gpsd's own output (the `.chk` files of its regression suite and a
/// session recorded from gpsd 3.22) and on malformed lines.
@Suite struct GPSDJSONDecoderTests {
  static var captureFolder: URL { Paths.fixtureFolder("gpsd-regress") }

  static func chkFiles() -> [String] {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: captureFolder.path)) ?? []
    return names.filter { $0.hasSuffix(".chk") }.sorted()
  }

  static func message(_ line: String) throws -> GPSDMessage {
    try GPSDDecoder.message(line: line)
  }

  static func tpv(_ line: String) throws -> GPSDTPV {
    guard case .tpv(let tpv) = try message(line) else {
      throw FormatError(.malformed, "not a TPV: \(line)")
    }
    return tpv
  }

  // MARK: gpsd's own output

  @Test("every JSON line of every .chk file decodes; classes counted as written")
  func regressionChecks() throws {
    let files = Self.chkFiles()
    try #require(files.count >= 70, "the gpsd-regress captures are missing")
    var totals = GPSDStatistics()
    for name in files {
      let text = try String(
        contentsOf: Self.captureFolder.appendingPathComponent(name), encoding: .utf8)
      let jsonLines = text.split(whereSeparator: \.isNewline).filter { $0.hasPrefix("{") }
      var decoder = GPSDDecoder()
      let messages =
        decoder.decode(Array(jsonLines.joined(separator: "\n").utf8)) + decoder.finish()
      #expect(messages.count == jsonLines.count, "\(name)")
      #expect(decoder.statistics.garbageLines == 0, "\(name): \(decoder.statistics)")
      // The CAT MS352 sends a magnetic variation of 999.9 in its RMC; gpsd passes it on as
      // magvar, and magtrack = track + 999.9: out of range, so left out (2 per TPV with a time).
      let invalid = name == "cat-ms352.log.chk" ? 80 : 0
      #expect(decoder.statistics.invalidFields == invalid, "\(name): \(decoder.statistics)")
      let tpvLines = jsonLines.filter { $0.hasPrefix(#"{"class":"TPV""#) }.count
      #expect(decoder.statistics.tpv == tpvLines, "\(name)")
      totals.tpv += decoder.statistics.tpv
      totals.sky += decoder.statistics.sky
      totals.attitude += decoder.statistics.attitude
      totals.otherClasses += decoder.statistics.otherClasses
    }
    // Counted with grep over the 72 files: 5839 TPV, 6744 SKY, 239 ATT, 1928 AIS, 236 GST, 16 OSC.
    #expect(totals.tpv == 5839)
    #expect(totals.sky == 6744)
    #expect(totals.attitude == 239)
    #expect(totals.otherClasses == 1928 + 236 + 16)
  }

  @Test("a TPV of nmea-rtk.log.chk, member by member, and its fix")
  func tpvMembers() throws {
    let line =
      #"{"class":"TPV","status":2,"mode":3,"time":"2020-03-18T13:28:19.800Z","ept":0.005,"#
      + #""lat":41.574953528,"lon":-93.750575438,"altHAE":248.4420,"altMSL":279.8840,"#
      + #""alt":279.8840,"track":126.9650,"magtrack":138.5635,"magvar":11.6,"speed":0.264,"#
      + #""climb":17.230,"geoidSep":-31.442,"eph":5.700,"dgpsAge":6.8,"dgpsSta":133}"#
    let tpv = try Self.tpv(line)
    #expect(tpv.mode == 3)
    #expect(tpv.status == 2)
    #expect(tpv.time == 1_584_538_099.8)
    #expect(tpv.latitude == 41.574953528)
    #expect(tpv.longitude == -93.750575438)
    #expect(tpv.altitudeHAE == 248.442)
    #expect(tpv.altitudeMSL == 279.884)
    #expect(tpv.altitude == 279.884)
    #expect(tpv.track == 126.965)
    #expect(tpv.magneticTrack == 138.5635)
    #expect(tpv.magneticVariation == 11.6)
    #expect(tpv.speed == 0.264)
    #expect(tpv.climb == 17.23)
    #expect(tpv.geoidSeparation == -31.442)
    #expect(tpv.eph == 5.7)
    #expect(tpv.ept == 0.005)
    #expect(tpv.invalidFields.isEmpty)

    let fix = try #require(tpv.fix(receivedAt: 0, source: "gpsd://x"))
    #expect(fix.latitude == 41.574953528)
    #expect(fix.longitude == -93.750575438)
    #expect(fix.altitude == 279.884)
    #expect(fix.ellipsoidalAltitude == 248.442)
    #expect(abs(fix.horizontalAccuracy - 5.7 * 0.617) < 1e-12)
    #expect(fix.verticalAccuracy == -1, "no epv")
    #expect(fix.speed == 0.264)
    #expect(fix.speedAccuracy == -1)
    #expect(fix.course == 126.965)
    #expect(fix.courseAccuracy == -1)
    #expect(fix.time == 1_584_538_099.8)
    #expect(fix.quality == .differential)
    #expect(fix.source == "gpsd://x")
  }

  @Test("the accuracy factors come from the normal distribution")
  func accuracyFactors() {
    // Rayleigh radius ratio for 68 % and 95 % (2-D), and 1 / 1.96 (1-D).
    let ratio = (-2 * log(0.32)).squareRoot() / (-2 * log(0.05)).squareRoot()
    #expect(abs(GPSDTPV.horizontal95To68 - ratio) < 0.001)
    #expect(abs(GPSDTPV.oneDimensional95To68 - 1 / 1.96) < 0.0001)
  }

  @Test("vertical, speed and course accuracies are the 1-D 95 % figures over 1.96")
  func oneDimensionalAccuracies() throws {
    let tpv = try Self.tpv(
      #"{"class":"TPV","mode":3,"status":3,"time":"2024-01-01T00:00:00Z","lat":1,"lon":2,"#
        + #""altHAE":50,"epv":9.8,"speed":3,"eps":1.96,"track":360,"epd":19.6,"eph":1}"#)
    let fix = try #require(tpv.fix(receivedAt: 0))
    #expect(abs(fix.verticalAccuracy - 5.0) < 1e-3)
    #expect(abs(fix.speedAccuracy - 1.0) < 1e-3)
    #expect(fix.course == 0)
    #expect(abs(fix.courseAccuracy - 10.0) < 1e-3)
    #expect(fix.altitude == nil)
    #expect(fix.ellipsoidalAltitude == 50)
    #expect(fix.quality == .rtkFixed)
  }

  @Test(
    "without eph the horizontal accuracy is the default of the status",
    arguments: [
      (nil, FixQuality.autonomous, 30.0), (1, .autonomous, 30), (2, .differential, 10),
      (3, .rtkFixed, 0.5), (4, .rtkFloat, 2), (5, .estimated, 100), (8, .simulated, 30),
    ] as [(Int?, FixQuality, Double)])
  func defaultAccuracy(status: Int?, quality: FixQuality, accuracy: Double) throws {
    let statusMember = status.map { #","status":\#($0)"# } ?? ""
    let tpv = try Self.tpv(
      #"{"class":"TPV","mode":2"# + statusMember + #","lat":1,"lon":2,"altMSL":5}"#)
    let fix = try #require(tpv.fix(receivedAt: 42))
    #expect(fix.horizontalAccuracy == accuracy)
    #expect(fix.quality == quality)
    #expect(fix.isSimulated == (quality == .simulated))
    #expect(fix.altitude == nil, "a 2-D fix has no altitude")
    #expect(fix.time == 42, "no time: stamped when received")
  }

  @Test(
    "no fix: mode 0 or 1, no mode, no coordinate",
    arguments: [
      #"{"class":"TPV","mode":1,"lat":1,"lon":2,"time":"2024-01-01T00:00:00Z"}"#,
      #"{"class":"TPV","mode":0,"lat":1,"lon":2}"#,
      #"{"class":"TPV","lat":1,"lon":2}"#,
      #"{"class":"TPV","mode":3,"lon":2}"#,
      #"{"class":"TPV","mode":3,"lat":1}"#,
      #"{"class":"TPV","mode":3,"lat":"1","lon":2}"#,
      #"{"class":"TPV","mode":3,"lat":91,"lon":2}"#,
      #"{"class":"TPV","mode":3,"lat":1,"lon":-180.5}"#,
      #"{"class":"TPV","mode":"3","lat":1,"lon":2}"#,
      #"{"class":"TPV","mode":3.5,"lat":1,"lon":2}"#,
      #"{"class":"TPV","mode":3,"lat":1e999,"lon":2}"#,
      #"{"class":"TPV","mode":3,"lat":"NaN","lon":2}"#,
      #"{"class":"TPV","mode":3,"lat":null,"lon":2}"#,
    ])
  func noFix(line: String) throws {
    #expect(try Self.tpv(line).fix(receivedAt: 0) == nil)
  }

  @Test("unusable members are named and left out; the rest is kept")
  func invalidMembers() throws {
    let tpv = try Self.tpv(
      #"{"class":"TPV","mode":3,"lat":1,"lon":2,"time":"yesterday","eph":-1,"speed":"fast","#
        + #""track":400,"altHAE":1e400,"epv":[1],"device":7}"#)
    #expect(
      Set(tpv.invalidFields) == ["time", "eph", "speed", "track", "altHAE", "epv", "device"])
    let fix = try #require(tpv.fix(receivedAt: 7))
    #expect(fix.time == 7)
    #expect(fix.horizontalAccuracy == 30)
    #expect(fix.speed == -1)
    #expect(fix.course == -1)
    #expect(fix.ellipsoidalAltitude == nil)
  }

  @Test("ATT objects from the regression captures keep every member")
  func attitude() throws {
    guard
      case .attitude(let compass) = try Self.message(
        #"{"class":"ATT","heading":4.000,"rot":0.000}"#)
    else {
      Issue.record("not ATT")
      return
    }
    #expect(compass.heading == 4)
    #expect(compass.rateOfTurn == 0)
    guard
      case .attitude(let imu) = try Self.message(
        #"{"class":"ATT","time":"2024-06-09T00:06:53.100Z","acc_x":-3.35814,"acc_y":-8.12093,"#
          + #""acc_z":4.42758,"gyro_x":0.00496,"gyro_y":-0.00151,"gyro_z":0.00539}"#)
    else {
      Issue.record("not ATT")
      return
    }
    #expect(imu.time == 1_717_891_613.1)
    #expect(imu.accelerationX == -3.35814)
    #expect(imu.accelerationZ == 4.42758)
    #expect(imu.gyroY == -0.00151)
    guard
      case .attitude(let magnetometer) = try Self.message(
        #"{"class":"ATT","device":"/dev/ttyUSB0","heading":181.2,"mag_st":"N","pitch":1.5,"#
          + #""pitch_st":"N","roll":-0.5,"roll_st":"N","dip":66.1,"mag_len":48.0,"#
          + #""mag_x":12.5,"mag_y":-3.25,"mag_z":44.0,"mheading":178.9,"temp":21.5}"#)
    else {
      Issue.record("not ATT")
      return
    }
    #expect(magnetometer.heading == 181.2)
    #expect(magnetometer.magneticHeading == 178.9)
    #expect(magnetometer.magneticStatus == "N")
    #expect(magnetometer.pitch == 1.5)
    #expect(magnetometer.roll == -0.5)
    #expect(magnetometer.rollStatus == "N")
    #expect(magnetometer.dip == 66.1)
    #expect(magnetometer.magneticLength == 48)
    #expect(magnetometer.magneticX == 12.5)
    #expect(magnetometer.magneticY == -3.25)
    #expect(magnetometer.magneticZ == 44)
    #expect(magnetometer.temperature == 21.5)
    #expect(magnetometer.invalidFields.isEmpty)
  }

  @Test("SKY: dilutions and satellite counts, from members or from the list")
  func sky() throws {
    guard
      case .sky(let counted) = try Self.message(
        #"{"class":"SKY","hdop":0.54,"pdop":0.99,"vdop":0.83,"uSat":12,"nSat":20}"#)
    else {
      Issue.record("not SKY")
      return
    }
    #expect(counted.hdop == 0.54)
    #expect(counted.satellitesUsed == 12)
    #expect(counted.satellitesVisible == 20)
    guard
      case .sky(let listed) = try Self.message(
        #"{"class":"SKY","satellites":[{"PRN":1,"used":true},{"PRN":2,"used":false},{"PRN":3}]}"#)
    else {
      Issue.record("not SKY")
      return
    }
    #expect(listed.satellitesVisible == 3)
    #expect(listed.satellitesUsed == 1)
  }

  @Test("a session recorded from gpsd 3.22: VERSION, DEVICES, WATCH, DEVICE, then the fixes")
  func recordedSession() throws {
    let url = Paths.fixtureFolder("gpsd").appendingPathComponent("nmea-rtk.gpsd-3.22.jsonl")
    var decoder = GPSDDecoder()
    let messages = decoder.decode(try [UInt8](Data(contentsOf: url))) + decoder.finish()
    #expect(decoder.statistics.otherLines == 3, "the header")
    #expect(decoder.statistics.garbageLines == 0)
    guard case .version(let version) = messages.first else {
      Issue.record("no VERSION first")
      return
    }
    #expect(
      version == GPSDVersion(release: "3.22", revision: "3.22", protocolMajor: 3, protocolMinor: 14)
    )
    #expect(
      Array(messages.dropFirst().prefix(3)) == [
        .other("DEVICES"), .other("WATCH"), .other("DEVICE"),
      ])
    let fixes = messages.compactMap { message -> Fix? in
      if case .tpv(let tpv) = message { return tpv.fix(receivedAt: -1) }
      return nil
    }
    #expect(fixes.count == 123)
    #expect(fixes.first?.time == -1, "gpsd's first TPV has no time")
    // The capture's gpsd run (.chk) reported the same fixes.
    let chk = try String(
      contentsOf: Self.captureFolder.appendingPathComponent("nmea-rtk.log.chk"), encoding: .utf8)
    var reference = GPSDDecoder()
    let expected = reference.decode(Array(chk.utf8)).compactMap { message -> Fix? in
      if case .tpv(let tpv) = message { return tpv.fix(receivedAt: -1) }
      return nil
    }
    #expect(fixes == expected)
  }

  // MARK: Malformed input

  @Test(
    "malformed lines are garbage, counted, never a crash",
    arguments: [
      #"{"class":"TPV","mode":3,"lat":41.5"#,
      #"{"class":"TPV","mode":3,"lat":NaN,"lon":2}"#,
      #"{"class":"TPV","mode":3,"lat":Infinity,"lon":2}"#,
      #"{"class":"TPV","mode":3,"lat":01,"lon":2}"#,
      #"{"class":"TPV","mode":3,"lat":1.,"lon":2}"#,
      #"{"class":"TPV","mode":3,"lat":-,"lon":2}"#,
      #"{"class":"TPV","mode":3,"lat":1,"lon":2,}"#,
      #"{"class":"TPV" "mode":3}"#,
      #"{"class":"TPV","mode":3}}"#,
      #"{"class":"TPV","device":"/dev/\u12"}"#,
      #"{"class":"TPV","device":"/dev/\q"}"#,
      #"{'class':'TPV'}"#,
      #"{"class":TPV}"#,
      #"{"class":3}"#,
      #"{"mode":3,"lat":1,"lon":2}"#,
      #"[{"class":"TPV"}]"#,
      #""TPV""#,
      "{",
      "}",
      "tru",
      "$GPGGA,123519,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,*47",
      String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000),
      String(repeating: #"{"a":"#, count: 40) + "1" + String(repeating: "}", count: 40),
    ])
  func garbage(line: String) {
    var decoder = GPSDDecoder()
    let messages = decoder.decode(Array((line + "\n").utf8))
    #expect(messages.isEmpty)
    #expect(
      decoder.statistics.garbageLines + decoder.statistics.overlongLines == 1,
      "\(decoder.statistics)")
    #expect(decoder.statistics.firstBadLine == 1)
    #expect(throws: FormatError.self) { try GPSDDecoder.message(line: line) }
  }

  @Test("escapes, surrogate pairs and control characters in strings")
  func strings() throws {
    guard
      case .tpv(let tpv) = try Self.message(
        #"{"class":"TPV","device":"\/dev\/tty\u00e9\ud83d\udef0\ud800x\"\\\t"}"#)
    else {
      Issue.record("not TPV")
      return
    }
    #expect(tpv.device == "/dev/tty\u{e9}\u{1F6F0}\u{FFFD}x\"\\\t")
    #expect(throws: FormatError.self) { try Self.message("{\"class\":\"T\u{01}PV\"}") }
  }

  @Test("unknown classes and ERROR are reported by name")
  func otherClasses() throws {
    #expect(try Self.message(#"{"class":"PPS","real_sec":1}"#) == .other("PPS"))
    #expect(
      try Self.message(#"{"class":"ERROR","message":"Unrecognized request 'x'"}"#)
        == .error("Unrecognized request 'x'"))
  }

  // MARK: Streams

  @Test("any chunking gives the same messages as the whole stream", arguments: [1, 2, 7, 64, 4096])
  func chunking(size: Int) throws {
    let url = Self.captureFolder.appendingPathComponent("saab-r4.log.chk")
    let bytes = try [UInt8](Data(contentsOf: url))
    var whole = GPSDDecoder()
    let expected = whole.decode(bytes) + whole.finish()
    var chunked = GPSDDecoder()
    var messages: [GPSDMessage] = []
    var start = 0
    while start < bytes.count {
      let end = min(start + size, bytes.count)
      messages += chunked.decode(Array(bytes[start..<end]))
      start = end
    }
    messages += chunked.finish()
    #expect(messages == expected)
    #expect(chunked.statistics == whole.statistics)
    #expect(whole.statistics.tpv > 0 && whole.statistics.attitude > 0)
  }

  @Test("an oversized line is dropped up to its line feed; the next line is read")
  func oversizedLine() {
    let good = #"{"class":"TPV","mode":3,"lat":1,"lon":2}"#
    var decoder = GPSDDecoder()
    var messages = decoder.decode(Array((good + "\n").utf8))
    // 200 KiB of one line, in 1 KiB pieces, then a good line in the same chunk as its end.
    let piece = [UInt8](repeating: UInt8(ascii: "{"), count: 1024)
    for _ in 0..<200 { messages += decoder.decode(piece) }
    messages += decoder.decode(Array(("}\r\n" + good + "\r\n").utf8))
    // A blank line (spaces only) counts as an other line.
    messages += decoder.decode([UInt8](repeating: UInt8(ascii: " "), count: 10) + [0x0A])
    #expect(messages.count == 2)
    #expect(decoder.statistics.overlongLines == 1)
    #expect(decoder.statistics.lines == 4)
    #expect(decoder.statistics.otherLines == 1)
    #expect(decoder.statistics.firstBadLine == 2)
  }

  @Test("a last line without a line feed is decoded by finish(); reset() forgets it")
  func partialLines() {
    let good = #"{"class":"TPV","mode":3,"lat":1,"lon":2}"#
    var decoder = GPSDDecoder()
    #expect(decoder.decode(Array(good.utf8)).isEmpty)
    #expect(decoder.finish().count == 1)
    #expect(decoder.decode(Array(good.prefix(20).utf8)).isEmpty)
    decoder.reset()
    #expect(decoder.decode(Array((good + "\n").utf8)).count == 1)
    #expect(decoder.statistics.garbageLines == 0)
  }

  // MARK: Times

  @Test(
    "ISO 8601 times",
    arguments: [
      ("2020-03-18T13:28:19.600Z", 1_584_538_099.6),
      ("2020-03-18T13:28:19Z", 1_584_538_099),
      ("2020-03-18t13:28:19z", 1_584_538_099),
      ("2020-03-18T15:28:19+02:00", 1_584_538_099),
      ("2020-03-18T11:58:19.5-01:30", 1_584_538_099.5),
      ("1970-01-01T00:00:00Z", 0),
      ("2016-12-31T23:59:60Z", 1_483_228_800),
      ("2024-02-29T00:00:00.000000001Z", 1_709_164_800.000000001),
    ] as [(String, Double)])
  func times(text: String, expected: Double) {
    #expect(GPSDTime.parse(text) == expected)
  }

  @Test(
    "malformed times",
    arguments: [
      "", "2020-03-18", "2020-03-18T13:28:19", "2020-03-18T13:28:19.Z", "2023-02-29T00:00:00Z",
      "2020-13-01T00:00:00Z", "2020-03-18T24:00:00Z", "2020-03-18T13:60:00Z",
      "2020-03-18T13:28:61Z", "2020-03-18T13:28:19Zjunk", "2020-03-18T13:28:19+0200",
      "20-03-18T13:28:19Z", "2020-03-18T13:28:19.6.1Z", "０２０-03-18T13:28:19Z",
    ])
  func badTimes(text: String) {
    #expect(GPSDTime.parse(text) == nil)
  }
}
