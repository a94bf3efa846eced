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

  @Test func replayedLogCarriesItsHeadings() throws {
    let path = Paths.root
      .appendingPathComponent("Tests/Fixtures/gpsd-regress/bundg_zeus_9.log").path
    let track = try ReplayTrack.load(path: path)
    #expect(track.headings.count >= 1450)
    #expect(track.headings.map(\.time) == track.headings.map(\.time).sorted())
    #expect(ReplaySource(path: path, options: .init()).descriptor.producesHeading)
  }
}
