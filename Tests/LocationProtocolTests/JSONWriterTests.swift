import Foundation
import TestSupport
import Testing

@testable import LocationProtocol

/// The writer's numbers and strings, written straight into its bytes, are the text Swift's own
/// conversions give: integers as `String(value)`, whole doubles up to 2^53 as integers, others in
/// their shortest round-trip form, strings quoted with `"`, `\` and control characters escaped.
@Suite struct JSONWriterTests {
  static func text(_ write: (inout [UInt8]) -> Void) -> String {
    var bytes: [UInt8] = []
    write(&bytes)
    return String(decoding: bytes, as: UTF8.self)
  }

  @Test func integersAreWrittenAsSwiftWritesThem() {
    var generator = SplitMix64(seed: 41)
    var values: [Int64] = [0, 1, -1, 9, 10, -10, 99, 100, .max, .min, .max - 1, .min + 1]
    for _ in 0..<2_000 {
      let value = Int64(bitPattern: generator.next())
      values += [value, value >> (generator.next() % 64)]
    }
    for value in values {
      #expect(Self.text { JSONWriter.appendInteger(value, to: &$0) } == String(value))
    }
    var writer = JSONWriter()
    writer.int(Int.min)
    #expect(String(decoding: writer.bytes, as: UTF8.self) == String(Int.min))
  }

  @Test func doublesAreWholeNumbersOrTheirShortestForm() {
    var generator = SplitMix64(seed: 43)
    var values: [Double] = [
      0, -0.0, 1, -1, 0.1, 47.376_598_1, 9_007_199_254_740_991, 1e300,
      -Double.leastNonzeroMagnitude,
    ]
    for _ in 0..<2_000 {
      values.append(Double(bitPattern: generator.next()))
      values.append(Double(Int64(bitPattern: generator.next()) >> 12) / 1000)
    }
    for value in values where value.isFinite {
      let expected =
        value == value.rounded() && abs(value) < 9_007_199_254_740_992
        ? String(Int64(value)) : value.description
      #expect(Self.text { JSONWriter.appendDouble(value, to: &$0) } == expected)
    }
    #expect(Self.text { JSONWriter.appendDouble(.nan, to: &$0) } == #""NaN""#)
    #expect(Self.text { JSONWriter.appendDouble(-.infinity, to: &$0) } == #""-Infinity""#)
  }

  @Test(arguments: [
    ("", #""""#),
    ("nmea:///dev/ttyUSB0", #""nmea:///dev/ttyUSB0""#),
    ("Zürich 🚲", #""Zürich 🚲""#),
    ("a\"b", #""a\"b""#),
    ("a\\b", #""a\\b""#),
    ("line\nnext\r\ttab", #""line\nnext\r\ttab""#),
    ("\u{1}\u{1F}x", #""\u0001\u001fx""#),
  ])
  func stringsAreQuotedAndEscaped(value: String, expected: String) {
    #expect(Self.text { JSONWriter.appendString(value, to: &$0) } == expected)
    // A string made from a slice of a larger one.
    let bridged = String(("[" + value + "]").dropFirst().dropLast())
    #expect(Self.text { JSONWriter.appendString(bridged, to: &$0) } == expected)
  }
}
