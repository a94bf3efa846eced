import TestSupport
import Testing

@testable import LocationFormats

@Suite struct NMEAFieldCursorTests {
  /// Where `plainInteger` takes a field as plain (not `irregular`), `integer()` and `number()`
  /// give the same value and find it valid, and the cursor moves to the same place; on random
  /// fields of digits, commas and a few other bytes, of every length, ending anywhere in a line.
  @Test func plainFieldsReadAsIntegersAndNumbersDo() {
    var generator = SplitMix64(seed: 19)
    let alphabet = Array("0123456789012345678901234567890123456789,,,,,,,,,.-+x *".utf8)
    for _ in 0..<50_000 {
      let length = Int(generator.next() % 24)
      var line: [UInt8] = Array("$GPGSV,".utf8)
      let start = line.count
      for _ in 0..<length {
        line.append(alphabet[Int(generator.next() % UInt64(alphabet.count))])
      }
      let end = line.count
      // What follows the data part: the checksum and line end, or nothing (the line's end).
      let tails = ["*4F\r\n", "*4F", "", "12345678"]
      line.append(contentsOf: tails[Int(generator.next() % UInt64(tails.count))].utf8)
      line.withUnsafeBufferPointer { buffer in
        guard let base = buffer.baseAddress else { return }
        let cursor = NMEAFieldCursor(
          base: base, start: start, end: end, readable: buffer.count, hasFields: true)
        var plain = cursor
        var integers = cursor
        var numbers = cursor
        while !plain.exhausted {
          let value = plain.plainInteger()
          let integer = integers.integer()
          let number = numbers.number()
          if plain.irregular { break }
          let text = String(decoding: buffer[plain.fieldStart..<plain.fieldEnd], as: UTF8.self)
          #expect(integer == value && !integers.bad, "\(text)")
          #expect(number == value.map(Double.init) && !numbers.bad, "\(text)")
          #expect(integers.position == plain.position && numbers.position == plain.position)
        }
      }
    }
  }
}
