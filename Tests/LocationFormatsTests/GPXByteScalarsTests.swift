import TestSupport
import Testing

@testable import LocationFormats

@Suite struct GPXByteScalarsTests {
  static func decimal(_ text: String) -> Double? {
    Array(text.utf8).withUnsafeBufferPointer { ByteScalars.decimal($0) }
  }

  static func time(_ text: String) -> Double? {
    Array(text.utf8).withUnsafeBufferPointer { ByteScalars.iso8601($0) }
  }

  @Test(arguments: [
    ("0", 0.0), ("-0", -0.0), ("12", 12), ("+3.5", 3.5), (".5", 0.5), ("5.", 5), ("  7.25\n", 7.25),
    ("-122.084823000", -122.084823), ("1e3", 1000), ("2.5E-2", 0.025),
    ("47.37659810297191143", 47.37659810297191143),
    ("408.399999999999977262632", 408.399999999999977262632),
    ("0.000000000000000000000000001", 1e-27),
    ("12345678901234567890123", 12345678901234567890123.0),
  ])
  func decimals(text: String, expected: Double) {
    let value = Self.decimal(text)
    #expect(value == expected)
    #expect(value?.sign == expected.sign)
  }

  @Test(arguments: [
    "", " ", "-", ".", "NaN", "nan", "inf", "INF", "0x1p3", "1e", "1.2.3", "1,5", "12a", "e5",
    "--1",
  ])
  func notDecimals(text: String) {
    #expect(Self.decimal(text) == nil)
  }

  /// The fast path agrees with the standard library's correctly rounded conversion.
  @Test func decimalsAgreeWithStandardLibrary() {
    var generator = SplitMix64(seed: 42)
    for _ in 0..<20_000 {
      let places = Int(generator.next() % 10)
      let whole = Int(generator.next() % 400) - 200
      var fraction = ""
      for _ in 0..<places { fraction += String(generator.next() % 10) }
      let text = places == 0 ? "\(whole)" : "\(whole).\(fraction)"
      #expect(Self.decimal(text) == Double(text), "\(text)")
    }
  }

  /// The number as `decimal(_:readable:)` reads it inside a larger buffer: the value followed by
  /// `after` (which the eight-byte loads may see but must not read as part of the value).
  static func decimal(_ text: String, followedBy after: String) -> Double? {
    let bytes = Array((text + after).utf8)
    let count = text.utf8.count
    return bytes.withUnsafeBufferPointer { buffer in
      ByteScalars.decimal(UnsafeBufferPointer(rebasing: buffer[..<count]), readable: buffer.count)
    }
  }

  /// Whatever follows a value in the buffer (a quote, digits of an older value, a point), the
  /// eight-byte reader gives what the byte loops give.
  @Test(arguments: ["\"        ", "12345678", ".5555555", "        ", "e5      "])
  func decimalsReadWideAgreeWhateverFollows(after: String) {
    var generator = SplitMix64(seed: 7)
    let fixed = [
      "0", "-0", "5.", ".5", "-.5", "1234567", "12345678", "1.1234567", "1.12345678", "-", ".", "",
      "+3", " 4", "4 ", "1e3", "7.5e1", "0007.50", "-122.084823", "47.3765981",
    ]
    var texts = fixed
    for _ in 0..<5_000 {
      let places = Int(generator.next() % 10)
      let whole = Int(generator.next() % 2_000_000) - 1_000_000
      var fraction = ""
      for _ in 0..<places { fraction += String(generator.next() % 10) }
      texts.append(places == 0 ? "\(whole)" : "\(whole).\(fraction)")
    }
    for text in texts {
      let wide = Self.decimal(text, followedBy: after)
      let narrow = Self.decimal(text)
      #expect(wide == narrow && wide?.sign == narrow?.sign, "\(text) followed by \(after)")
    }
  }

  /// The usual UTC shape (`YYYY-MM-DDThh:mm:ss[.f]Z`, read by its own fast path) agrees with the
  /// same time written with an explicit zero offset (read by the general one).
  @Test func usualUTCTimesAgreeWithTheGeneralReader() {
    var generator = SplitMix64(seed: 11)
    for _ in 0..<5_000 {
      let year = 1900 + Int(generator.next() % 200)
      let month = 1 + Int(generator.next() % 12)
      let day = 1 + Int(generator.next() % 31)
      let second = Int(generator.next() % 61)
      let places = Int(generator.next() % 11)
      var fraction = ""
      for _ in 0..<places { fraction += String(generator.next() % 10) }
      func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
      let stamp =
        "\(year)-\(two(month))-\(two(day))T\(two(Int(generator.next() % 24))):"
        + "\(two(Int(generator.next() % 60))):\(two(second))" + (places > 0 ? "." + fraction : "")
      #expect(Self.time(stamp + "Z") == Self.time(stamp + "+00:00"), "\(stamp)")
    }
  }

  @Test(arguments: [
    ("1970-01-01T00:00:00Z", 0.0),
    ("2024-06-01T08:00:00Z", 1_717_228_800),
    ("2024-06-01T08:00:00.250Z", 1_717_228_800.25),
    ("2024-06-01T10:00:00+02:00", 1_717_228_800),
    ("2024-06-01T03:30:00-0430", 1_717_228_800),
    ("2024-06-01T09:00:00+01", 1_717_228_800),
    ("2024-06-01T08:00:00", 1_717_228_800),
    ("2024-06-01 08:00:00z", 1_717_228_800),
    ("2000-02-29T00:00:00Z", 951_782_400),
    ("1969-12-31T23:59:59Z", -1),
    ("2016-12-31T23:59:60Z", 1_483_228_800),
    (" 2024-06-01T08:00:00.123456789123Z \n", 1_717_228_800.123456789),
  ])
  func times(text: String, expected: Double) {
    #expect(Self.time(text) == expected)
  }

  @Test(arguments: [
    "", "2024-06-01", "2024-06-01T08:00Z", "2024-13-01T00:00:00Z", "2023-02-29T00:00:00Z",
    "2024-06-01T24:00:00Z", "2024-06-01T08:60:00Z", "2024-06-01T08:00:00.Z",
    "2024-06-01T08:00:00+2",
    "2024-06-01T08:00:00Zjunk", "yesterday", "2024-06-01T08:00:00+25:00",
  ])
  func notTimes(text: String) {
    #expect(Self.time(text) == nil)
  }
}
