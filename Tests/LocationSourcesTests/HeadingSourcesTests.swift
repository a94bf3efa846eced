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
    #expect(track.headings.count >= 1450)
    #expect(track.headings.map(\.time) == track.headings.map(\.time).sorted())
    #expect(ReplaySource(path: path, options: .init()).descriptor.producesHeading)
  }
}
