import Geodesy
import LocationFormats
import LocationModel
import TestSupport
import Testing

@testable import LocationSources

/// Heading sentences from NMEA streams and replayed logs become heading samples (issue 6).
@Suite struct HeadingSourcesTests {
  static let now = EngineInstant(monotonic: 0, wall: 1_534_758_457)

  func samples(_ lines: [String]) -> [HeadingSample] {
    let session = NMEASession(source: "nmea+tcp://127.0.0.1:10110")
    let text = lines.joined(separator: "\r\n") + "\r\n"
    let events = Array(text.utf8).withUnsafeBytes { session.received($0, now: Self.now) }
    return events.headings
  }

  @Test func streamHeadingSentences() throws {
    let headings = samples([
      "$HEHDT,4.0,T*2B",  // true
      "$SDHDG,229.8,,,1.3,E*36",  // magnetic (sensor 229.8, no deviation); variation not used
    ])
    #expect(headings.count == 2)
    #expect(headings[0].trueHeading == 4.0 && headings[0].magneticHeading == nil)
    #expect(headings[1].magneticHeading == 229.8 && headings[1].trueHeading == nil)
    #expect(headings.allSatisfy { $0.accuracy < 0 && $0.source == "nmea+tcp://127.0.0.1:10110" })
  }

  @Test func invalidTHSGivesNothing() {
    #expect(samples(["$GPTHS,77.52,V*27"]).isEmpty)
  }

  /// A sentence with its checksum (NMEA 0183: XOR of the bytes between `$` and `*`).
  static func sentence(_ body: String) -> String {
    let sum = body.utf8.reduce(UInt8(0)) { $0 ^ $1 }
    let hex = String(sum, radix: 16, uppercase: true)
    return "$" + body + "*" + (hex.count == 1 ? "0" + hex : hex)
  }

  /// HDG: magnetic heading = sensor heading + deviation (east positive), wrapped to 0..<360.
  @Test(
    arguments: [
      ("229.8,,,1.3,E", 229.8), ("229.8,1.5,E,,", 231.3), ("10,12.5,W,,", 357.5),
      ("359,2,E,,", 1), ("0,,,,", 0),
    ] as [(String, Double)])
  func hdgIsSensorPlusDeviation(fields: String, magnetic: Double) throws {
    let sample = try #require(samples([Self.sentence("HCHDG," + fields)]).first)
    let heading = try #require(sample.magneticHeading)
    #expect(abs(heading - magnetic) < 1e-9)
    #expect(sample.trueHeading == nil)
    #expect(sample.accuracy == -1)
  }

  @Test func sentencesWithoutAHeadingGiveNothing() {
    #expect(samples([Self.sentence("HCHDG,,1,E,,")]).isEmpty)
    #expect(samples([Self.sentence("HCHDM,,M")]).isEmpty)
    #expect(samples([Self.sentence("HEHDT,,T")]).isEmpty)
  }

  @Test func hdmIsMagneticAndHdtIsTrue() throws {
    let both = samples([Self.sentence("HCHDM,120.5,M"), Self.sentence("HEHDT,12.5,T")])
    #expect(both.count == 2)
    #expect(both.first?.magneticHeading == 120.5 && both.first?.trueHeading == nil)
    #expect(both.last?.trueHeading == 12.5 && both.last?.magneticHeading == nil)
  }

  /// THS: mode `V` gives nothing, `S` marks the sample simulated, the others (and none) count.
  @Test(arguments: [("A", true, false), ("E", true, false), ("M", true, false), ("S", true, true)])
  func thsModes(mode: String, gives: Bool, simulated: Bool) {
    let found = samples([Self.sentence("GPTHS,45.0," + mode)])
    #expect(found.count == (gives ? 1 : 0))
    #expect(found.first?.trueHeading == 45)
    #expect(found.first?.isSimulated == simulated)
  }

  @Test func replayedLogCarriesItsHeadings() throws {
    let path = Paths.root
      .appendingPathComponent("Tests/Fixtures/gpsd-regress/bundg_zeus_9.log").path
    let track = try ReplayTrack.load(path: path)
    #expect(track.headings.count == 1457)  // every HDG, also those before the first RMC
    #expect(track.headings.map(\.time) == track.headings.map(\.time).sorted())
    #expect(ReplaySource(path: path, options: .init()).descriptor.producesHeading)
  }

  /// The B&G capture's heading lines alone: a compass-only log, with no time and no fix.
  func compassOnlyLog(in directory: String) throws -> String {
    let capture = try Paths.fixtureText("gpsd-regress", "bundg_zeus_9.log")
    let lines = capture.split(whereSeparator: \.isNewline).filter { $0.hasPrefix("$SDHDG") }
    #expect(lines.count == 1457)
    return try write(lines.joined(separator: "\r\n") + "\r\n", to: "compass.nmea", in: directory)
  }

  /// Issue 15: a compass-only log replayed no headings at all (each was dropped for want of a dated
  /// fix before it). It is paced one second per cycle, as an untimed GPX path is.
  @Test func compassOnlyLogPlaysItsHeadingsOneCyclePerSecond() throws {
    try withTemporaryDirectory { directory in
      let path = try compassOnlyLog(in: directory)
      let track = try ReplayTrack.load(path: path)
      #expect(track.fixes.isEmpty && !track.hasTimes)
      #expect(track.headings.count == 1457)
      #expect(track.headings.first?.magneticHeading == 229.8)
      #expect(track.headings.map(\.time) == (0..<1457).map(Double.init))

      let source = ReplaySource(path: path, options: .init(speed: 2))
      #expect(source.descriptor.producesHeading)
      let context = TestContext(wall: 1_767_225_600)
      source.start(context: context)
      #expect(context.headings.count == 1)  // the first at once
      context.advance(by: 10)  // 20 cycles at twice the speed
      let played = context.headings
      #expect(played.count == 21)
      #expect(played.map(\.at) == (0...20).map { Double($0) / 2 })
      // Stamped when played, like an untimed GPX path.
      #expect(played.map(\.sample.time) == played.map { 1_767_225_600 + $0.at })
      #expect(played.allSatisfy { $0.sample.isSimulated && $0.sample.magneticHeading != nil })
      context.advance(by: 1_000)
      #expect(context.headings.count == 1457)
      #expect(context.ends == 1 && context.failures.isEmpty)
      source.stop()
    }
  }

  /// An autopilot's HDM lines, several to a cycle from two talkers: a cycle ends when a talker and
  /// kind come again.
  @Test func autopilotCyclesByRepeatedSentence() throws {
    try withTemporaryDirectory { directory in
      let lines = [
        "APHDM,10.0,M", "HCHDM,11.0,M", "APHDM,12.0,M", "HCHDM,13.0,M", "APHDM,14.0,M",
      ].map(Self.sentence)
      let path = try write(lines.joined(separator: "\r\n") + "\r\n", to: "ap.nmea", in: directory)
      let track = try ReplayTrack.load(path: path)
      #expect(track.headings.map(\.time) == [0, 0, 1, 1, 2])
      #expect(track.headings.map(\.magneticHeading) == [10, 11, 12, 13, 14])
    }
  }

  /// Headings before a log's first dated fix are kept, one second per cycle before it; those
  /// after it take its time.
  @Test func headingsBeforeTheFirstFixAreKept() throws {
    try withTemporaryDirectory { directory in
      let lines = [
        "HEHDT,1.0,T", "HEHDT,2.0,T",
        "GPRMC,120000.00,A,5230.0000,N,00500.0000,E,0.0,0.0,200818,,,A", "HEHDT,3.0,T",
      ].map(Self.sentence)
      let path = try write(lines.joined(separator: "\r\n") + "\r\n", to: "log.nmea", in: directory)
      let track = try ReplayTrack.load(path: path)
      let fix = try #require(track.fixes.first?.time)
      #expect(track.headings.map(\.trueHeading) == [1, 2, 3])
      #expect(track.headings.map(\.time) == [fix - 2, fix - 1, fix])
    }
  }
}
