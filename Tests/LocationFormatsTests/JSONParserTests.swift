import LocationFormats
import Testing

/// One JSON parser serves gpsd's lines (lenient) and the daemon's protocol (strict).
@Suite struct JSONParserTests {
  @Test(arguments: [
    (#"{"a":1,"a":2}"#, "appears twice"),
    (#"{"a":"\ud800"}"#, "lone surrogate"),
    (#"{"a":"\udc00x"}"#, "lone surrogate"),
  ])
  func strictRefusesWhatLenientRepairs(text: String, reason: String) throws {
    let bytes = Array(text.utf8)
    #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(bytes, strict: true) }
    do {
      _ = try JSONParser.parse(bytes, strict: true)
    } catch {
      #expect(error.reason.contains(reason))
    }
    guard case .object(let members) = try JSONParser.parse(bytes) else {
      Issue.record("not an object")
      return
    }
    #expect(members.count == 1)
  }

  @Test func invalidUTF8IsAnErrorOnlyWhenStrict() throws {
    let bytes: [UInt8] = Array(#"{"a":""#.utf8) + [0xFF, 0xFE] + Array(#""}"#.utf8)
    #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(bytes, strict: true) }
    #expect(try JSONParser.parse(bytes) == .object(["a": .string("\u{FFFD}\u{FFFD}")]))
  }

  @Test func bothModesAgreeOnGoodText() throws {
    let bytes = Array(#"{"n":-1.5e3,"s":"\u00e9\ud83d\ude00","l":[true,false,null],"o":{}}"#.utf8)
    let strict = try JSONParser.parse(bytes, strict: true)
    #expect(strict == (try JSONParser.parse(bytes)))
    #expect(
      strict
        == .object([
          "n": .number(-1500), "s": .string("é😀"), "l": .array([.bool(true), .bool(false), .null]),
          "o": .object([:]),
        ]))
  }
}
