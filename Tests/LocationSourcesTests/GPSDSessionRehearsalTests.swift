import LocationModel
import Testing

@testable import LocationSources

/// The wake-up before an epoch, when its read finds nothing on a gpsd stream, decodes the last
/// read again on a copy of the decoder (`GPSDSession.rehearse`; issue 19): it gives that read's
/// fixes for the context's rehearsal, and the session reads on as if it had not happened (its
/// statistics, its partial line and its duplicate filter untouched).
@Suite struct GPSDSessionRehearsalTests {
  static let now = EngineInstant(monotonic: 0, wall: 1_714_557_600)

  static func tpv(_ second: Int, _ latitude: Double) -> String {
    #"{"class":"TPV","mode":3,"time":"2024-05-01T10:00:0\#(second).000Z","lat":\#(latitude),"#
      + #""lon":13.4,"eph":10}"# + "\n"
  }

  static func receive(_ session: GPSDSession, _ text: String) -> [Fix] {
    Array(text.utf8).withUnsafeBytes { session.received($0, now: now) }.fixes
  }

  @Test func aRehearsalGivesTheLastReadsFixesAndLeavesTheSessionAsItWas() {
    let rehearsing = GPSDSession(name: "gpsd", source: "gpsd://127.0.0.1:2947")
    let plain = GPSDSession(name: "gpsd", source: "gpsd://127.0.0.1:2947")
    let next = Self.tpv(2, 52.50002)
    let split = next.index(next.startIndex, offsetBy: 30)
    // The last read: one TPV and the next one's first bytes (a partial line).
    let lastRead = Self.tpv(1, 52.50001) + next[..<split]
    for session in [rehearsing, plain] {
      #expect(Self.receive(session, Self.tpv(0, 52.5)).count == 1)
      #expect(Self.receive(session, lastRead).map(\.latitude) == [52.50001])
    }
    for _ in 0..<2 {
      let fixes = Array(lastRead.utf8).withUnsafeBytes { rehearsing.rehearse($0, now: Self.now) }
      #expect(fixes.map(\.latitude) == [52.50001])
    }
    // The partial line completes as before, and a repeat of the last fix is still a duplicate.
    let rest = String(next[split...]) + Self.tpv(2, 52.50002)
    #expect(Self.receive(rehearsing, rest).map(\.latitude) == [52.50002])
    #expect(Self.receive(plain, rest).map(\.latitude) == [52.50002])
    #expect(rehearsing.statistics == plain.statistics)
  }
}
