import Geodesy
import LocationFormats
import LocationModel
import Testing

/// `Options.reportsAtCycleEnd`: a live stream's epoch is reported at its last sentence (learned
/// from the stream) instead of a fix interval later, at the next epoch's first sentence.
@Suite struct NMEACycleEndTests {
  /// One epoch: RMC, GGA, GSA (GSA has no time), at `second` past 12:00:00 on 2026-11-29.
  static func epoch(_ second: Int, latitude minutes: Double) -> [String] {
    let time = String(format: "1200%02d.00", second)
    let latitude = String(format: "52%07.4f", minutes)
    return [
      nmea("GPRMC,\(time),A,\(latitude),N,00500.0000,E,0.0,0.0,291126,,,A"),
      nmea("GPGGA,\(time),\(latitude),N,00500.0000,E,1,08,0.9,10.0,M,46.0,M,,"),
      nmea("GPGSA,A,3,01,02,03,04,05,06,07,08,,,,,1.5,0.9,1.2"),
    ]
  }

  static func fixes(_ outputs: [NMEAOutput]) -> [Fix] {
    outputs.compactMap { if case .fix(let fix) = $0 { fix } else { nil } }
  }

  static func feed(_ decoder: inout NMEADecoder, _ line: String) -> [Fix] {
    let bytes = Array((line + "\r\n").utf8)
    return fixes(bytes.withUnsafeBytes { decoder.decode(bytes: $0) })
  }

  @Test func theLastSentenceOfACycleReportsTheEpoch() {
    var decoder = NMEADecoder(options: .init(reportsAtCycleEnd: true))
    var reportedAfter: [(epoch: Int, line: Int)] = []
    for second in 0..<4 {
      for (index, line) in Self.epoch(second, latitude: Double(second)).enumerated() {
        for fix in Self.feed(&decoder, line) {
          reportedAfter.append((Int(fix.time.truncatingRemainder(dividingBy: 60)), index))
        }
      }
    }
    // Epoch 0 is reported when epoch 1 begins (nothing learned yet); from then on, GSA (the
    // learned last sentence) reports each epoch at once.
    #expect(reportedAfter.map(\.epoch) == [0, 1, 2, 3])
    #expect(reportedAfter.map(\.line) == [0, 2, 2, 2])
    #expect(Self.fixes(decoder.finish()).isEmpty, "nothing reported twice")
  }

  @Test func withoutTheOptionEpochsCloseOnTheChangeOfTime() {
    var decoder = NMEADecoder()
    var reported = 0
    for second in 0..<4 {
      for line in Self.epoch(second, latitude: Double(second)) {
        reported += Self.feed(&decoder, line).count
      }
    }
    #expect(reported == 3)
    #expect(Self.fixes(decoder.finish()).count == 1)
  }

  /// A stream whose order changes: late sentences of a reported epoch are ignored, and the new
  /// last sentence is learned at the next change of time.
  @Test func aLateSentenceIsIgnoredAndTheCycleEndRelearned() {
    var decoder = NMEADecoder(options: .init(reportsAtCycleEnd: true))
    var fixes: [Fix] = []
    for second in 0..<3 {
      for line in Self.epoch(second, latitude: Double(second)) {
        fixes += Self.feed(&decoder, line)
      }
    }
    // Epoch 3 sends VTG after GSA: ignored once GSA has reported the epoch.
    for line in Self.epoch(3, latitude: 3) { fixes += Self.feed(&decoder, line) }
    fixes += Self.feed(&decoder, nmea("GPVTG,0.0,T,,M,0.0,N,0.0,K,A"))
    #expect(fixes.count == 4)
    // Epoch 4 ends with VTG, learned at the change of time to epoch 4... then reported at VTG.
    for line in Self.epoch(4, latitude: 4) + [nmea("GPVTG,0.0,T,,M,0.0,N,0.0,K,A")] {
      fixes += Self.feed(&decoder, line)
    }
    for line in Self.epoch(5, latitude: 5) + [nmea("GPVTG,0.0,T,,M,0.0,N,0.0,K,A")] {
      fixes += Self.feed(&decoder, line)
    }
    fixes += Self.fixes(decoder.finish())
    #expect(fixes.map { Int($0.time.truncatingRemainder(dividingBy: 60)) } == [0, 1, 2, 3, 4, 5])
  }
}
