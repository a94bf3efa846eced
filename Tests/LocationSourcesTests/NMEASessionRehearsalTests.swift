import LocationFormats
import LocationModel
import TestSupport
import Testing

@testable import LocationSources

/// The wake-up before an epoch decodes the last epoch again on a copy of the decoder
/// (`NMEASession.rehearse`, `EpochLead`; issue 19): nothing comes of it, and the session reads on
/// as if it had not happened.
@Suite struct NMEASessionRehearsalTests {
  static let now = EngineInstant(monotonic: 0, wall: 1_534_758_457)

  static func epoch(_ time: String) -> String {
    HeadingSourcesTests.sentence(
      "GPRMC,\(time),A,5200.00000,N,00500.00000,E,19.438,90.00,200818,,,A") + "\r\n"
      + HeadingSourcesTests.sentence(
        "GPGGA,\(time),5200.00000,N,00500.00000,E,1,10,0.90,12.0,M,47.0,M,,") + "\r\n"
  }

  static func receive(_ session: NMEASession, _ text: String) -> StreamEvents {
    Array(text.utf8).withUnsafeBytes { session.received($0, now: now) }
  }

  @Test func aRehearsalLeavesTheSessionAsItWas() {
    let rehearsing = NMEASession(source: "nmea:///dev/ttyUSB0")
    let plain = NMEASession(source: "nmea:///dev/ttyUSB0")
    // Nothing to rehearse yet.
    #expect(
      rehearsing.rehearse(UnsafeRawBufferPointer(start: nil, count: 0), now: Self.now).isEmpty)
    // Three epochs, the decoder learning which sentence ends one; then the fourth, and the
    // fifth's first bytes with it: the decoder holds a partial line.
    let epochs = ["091407.00", "091407.10", "091407.20", "091407.30"].map { Self.epoch($0) }
    let next = Self.epoch("091407.40")
    let split = next.index(next.startIndex, offsetBy: 20)
    var expectedLast: Fix?
    for session in [rehearsing, plain] {
      var fixes = 0
      for epoch in epochs.dropLast() { fixes += Self.receive(session, epoch).fixes.count }
      let last = Self.receive(session, epochs[3] + next[..<split]).fixes
      fixes += last.count
      #expect(fixes >= 3)
      expectedLast = last.last
    }
    #expect(expectedLast != nil)
    // The last read's bytes, twice, as two wake-ups would rehearse them.
    let lastRead = Array((epochs[3] + next[..<split]).utf8)
    // Each gives the last whole epoch's fix again (as new: the decoder itself would ignore its
    // sentences as late ones), for the hub's rehearsal.
    for _ in 0..<2 {
      let fixes = lastRead.withUnsafeBytes { rehearsing.rehearse($0, now: Self.now) }
      #expect(fixes.count == 1)
      #expect(fixes.first?.time == expectedLast?.time)
    }
    let rest = String(next[split...])
    let rehearsed = Self.receive(rehearsing, rest)
    let expected = Self.receive(plain, rest)
    #expect(!rehearsed.fixes.isEmpty)
    #expect(rehearsed.fixes == expected.fixes)
    #expect(rehearsing.statistics == plain.statistics)
  }

  /// A stream's read that finds nothing rehearses its last read (the wake-up before an epoch):
  /// the context is handed the last epoch's fix as a rehearsal, and nothing is emitted.
  @Test func aStreamsReadOfNothingHandsTheLastFixToTheContextsRehearsal() async throws {
    let times = ["091407.00", "091407.10", "091407.20", "091407.30"]
    let payload = Array(times.map { Self.epoch($0) }.joined().utf8)
    let expected = NMEASession(source: "")
    let count = payload.withUnsafeBytes { expected.received($0, now: Self.now) }.fixes.count
    #expect(count >= 3)
    let server = try PayloadServer(payload: payload, closeAfterPayload: false)
    defer { server.stop() }
    let context = RecordingContext(clock: .dispatch)
    let source = NMEAStreamSource(host: "127.0.0.1", port: server.port)
    source.start(context: context)
    defer { source.stop() }
    let received = await eventually(timeout: 30) { context.fixes.count == count }
    try #require(received, "fixes \(context.fixes.count) of \(count)")
    #expect(context.state.withLock { $0.rehearsals }.isEmpty)
    let stream = try #require(source.stream)
    #expect(!stream.readNow())
    let rehearsals = context.state.withLock { $0.rehearsals }
    #expect(rehearsals.count == 1)
    #expect(rehearsals.first?.latitude == context.fixes.last?.latitude)
    #expect(rehearsals.first?.time == context.fixes.last?.time)
    #expect(context.fixes.count == count)
  }
}
