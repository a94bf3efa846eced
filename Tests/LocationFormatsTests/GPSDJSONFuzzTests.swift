import Foundation
import TestSupport
import Testing

@testable import LocationFormats

/// Seeded random damage to real gpsd output: the decoder never crashes, accounts for every line,
/// and keeps every message of the lines left intact.
@Suite struct GPSDJSONFuzzTests {
  static func jsonLines(_ capture: String) throws -> [[UInt8]] {
    let url = GPSDJSONDecoderTests.captureFolder.appendingPathComponent(capture + ".log.chk")
    let text = try String(contentsOf: url, encoding: .utf8)
    return text.split(whereSeparator: \.isNewline).filter { $0.hasPrefix("{") }.map {
      Array($0.utf8)
    }
  }

  /// Damages a line: flips, deletes, inserts or duplicates bytes, or cuts it short.
  static func damage(_ line: [UInt8], _ random: inout SplitMix64) -> [UInt8] {
    var bytes = line
    for _ in 0..<Int.random(in: 1...4, using: &random) where !bytes.isEmpty {
      let index = Int.random(in: 0..<bytes.count, using: &random)
      switch Int.random(in: 0..<5, using: &random) {
      case 0: bytes[index] = UInt8.random(in: 0...255, using: &random)
      case 1: bytes.remove(at: index)
      case 2:
        let junk: [UInt8] = Array(#"{}[]",:.-+eE0129"\ntrufalsNa"#.utf8)
        bytes.insert(junk[Int.random(in: 0..<junk.count, using: &random)], at: index)
      case 3: bytes.insert(contentsOf: bytes[index...].prefix(8), at: index)
      default: bytes.removeSubrange(index...)
      }
    }
    return bytes.filter { $0 != 0x0A }
  }

  @Test("damaged lines of real captures", arguments: ["nmea-rtk", "saab-r4", "rst39"])
  func damagedCaptures(capture: String) throws {
    let lines = try Self.jsonLines(capture)
    try #require(!lines.isEmpty)
    var random = SplitMix64(seed: 0x5EED_0000 &+ UInt64(capture.utf8.count))
    for round in 0..<5 {
      var stream: [UInt8] = []
      var intact: [GPSDMessage] = []
      var damagedCount = 0
      for line in lines {
        if Int.random(in: 0..<4, using: &random) == 0 {
          stream += Self.damage(line, &random)
          damagedCount += 1
        } else {
          stream += line
          if let message = try? GPSDDecoder.message(line: String(decoding: line, as: UTF8.self)) {
            intact.append(message)
          }
        }
        stream.append(0x0A)
      }
      var decoder = GPSDDecoder()
      var messages: [GPSDMessage] = []
      var start = 0
      while start < stream.count {
        let end = min(stream.count, start + Int.random(in: 1...512, using: &random))
        messages += decoder.decode(Array(stream[start..<end]))
        start = end
      }
      messages += decoder.finish()
      let statistics = decoder.statistics
      #expect(statistics.lines == lines.count, "round \(round)")
      #expect(
        statistics.messages + statistics.garbageLines + statistics.overlongLines
          + statistics.otherLines == statistics.lines, "round \(round)")
      #expect(messages.count == statistics.messages)
      #expect(statistics.messages >= lines.count - damagedCount)
      // Every intact line's message is among the output, in order.
      var remaining = intact[...]
      for message in messages where remaining.first == message { remaining = remaining.dropFirst() }
      #expect(remaining.isEmpty, "round \(round): \(remaining.count) intact messages lost")
    }
  }

  @Test("random bytes")
  func randomBytes() {
    var random = SplitMix64(seed: 42)
    var decoder = GPSDDecoder()
    for _ in 0..<50 {
      let chunk = (0..<Int.random(in: 0...2048, using: &random)).map { _ in
        UInt8.random(in: 0...255, using: &random)
      }
      _ = decoder.decode(chunk)
    }
    _ = decoder.finish()
    let statistics = decoder.statistics
    #expect(
      statistics.messages + statistics.garbageLines + statistics.overlongLines
        + statistics.otherLines == statistics.lines)
  }
}
