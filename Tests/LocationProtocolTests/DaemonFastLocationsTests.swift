import LocationModel
import TestSupport
import Testing

@testable import LocationProtocol

/// The fast reader of `locations` lines gives what the general one gives, or leaves the line to
/// it.
@Suite struct DaemonFastLocationsTests {
  static func randomFix(_ generator: inout SplitMix64) -> Fix {
    func unit() -> Double { Double(generator.next() >> 11) / Double(1 << 53) }
    func maybe<T>(_ value: T) -> T? { generator.next() % 3 == 0 ? nil : value }
    let qualities = FixQuality.allCases
    let sources = ["nmea:///dev/ttyUSB0", "gpsd://127.0.0.1:2947", "", "replay:///a b.gpx"]
    return Fix(
      latitude: unit() * 180 - 90, longitude: unit() * 360 - 180,
      altitude: maybe((unit() * 9000 - 500).rounded() / 10),
      ellipsoidalAltitude: maybe(unit() * 1000), horizontalAccuracy: unit() * 100,
      verticalAccuracy: generator.next() % 2 == 0 ? -1 : unit() * 50,
      speed: generator.next() % 2 == 0 ? -1 : unit() * 40, speedAccuracy: -1,
      course: unit() * 360, courseAccuracy: -1, time: 1_767_225_600 + unit() * 1e6,
      quality: qualities[Int(generator.next() % UInt64(qualities.count))],
      satellitesUsed: maybe(Int(generator.next() % 40)),
      floor: maybe(Int(generator.next() % 9) - 3),
      isSimulated: generator.next() % 2 == 0,
      source: sources[Int(generator.next() % UInt64(sources.count))])
  }

  static func line(client: Int, _ fixes: [Fix]) -> [UInt8] {
    Array(
      DaemonProtocol.encodeLocations(client: client, fixesJSON: DaemonProtocol.encodeFixes(fixes))
        .dropLast())
  }

  static func fast(_ bytes: [UInt8]) -> DaemonMessage? {
    bytes.withUnsafeBufferPointer { DaemonProtocol.fastLocations($0) }
  }

  /// Lines as the daemon writes them: the fast reader takes every one, and gives the fixes that
  /// were written and what the general reader gives.
  @Test func takesWhatTheDaemonWritesAsTheGeneralReaderDoes() throws {
    var generator = SplitMix64(seed: 23)
    for round in 0..<2_000 {
      let fixes = (0..<(round % 4)).map { _ in Self.randomFix(&generator) }
      let client = Int(generator.next() % 100_000)
      let bytes = Self.line(client: client, fixes)
      let fast = try #require(Self.fast(bytes), "\(String(decoding: bytes, as: UTF8.self))")
      #expect(fast == .locations(client: client, fixes))
      let pair = try #require(DaemonProtocol.decodeLocationsLine(bytes))
      #expect(pair.client == client && pair.fixes == fixes)
      #expect(try DaemonProtocol.decodeGenerally(bytes) == fast)
      #expect(try DaemonProtocol.decode(line: bytes + [10]) == fast)
    }
  }

  /// The direct encoding of fixes is the generic coder's, byte for byte: random fixes, and fixes
  /// with what JSON cannot carry as numbers, negative zero, large integers and strings to escape.
  @Test func encodesFixesAsTheGenericCoder() {
    var generator = SplitMix64(seed: 29)
    var cases = (0..<2_000).map { _ in [Self.randomFix(&generator)] }
    var odd = Self.randomFix(&generator)
    odd.latitude = -0.0
    odd.speed = .nan
    odd.course = .infinity
    odd.time = -.infinity
    odd.altitude = 1e300
    odd.satellitesUsed = Int.max
    odd.floor = Int.min
    odd.source = "a\"b\\c\n\u{1}Zürich"
    cases += [[], [odd], [odd, Self.randomFix(&generator), odd]]
    for fixes in cases {
      var writer = JSONWriter()
      fixes.wireEncode(into: &writer)
      #expect(DaemonProtocol.encodeFixesDirectly(fixes) == writer.bytes)
    }
  }

  /// Numbers in every shape RFC 8259 allows convert to the same `Double` both ways (the fast
  /// reader without a string per number): exponents, negative zero, more digits than a `Double`
  /// holds, halfway cases, and values past its range.
  @Test(arguments: [
    "-0", "0.0", "1e-7", "4.75E1", "4.75e+1", "47.50000000000000000001", "0.1", "-90",
    "9007199254740993", "0.30000000000000004", "2.2250738585072014e-308", "1e400", "123456789.125",
    "-179.99999999999997",
  ])
  func numbersConvertAsTheGeneralReader(number: String) throws {
    let fix = Fix(
      latitude: 47.5, longitude: 8.5, altitude: 400, horizontalAccuracy: 5, speed: 3.5,
      time: 1_767_225_600, quality: .autonomous, satellitesUsed: 9, source: "nmea:///dev/ttyUSB0")
    let text = String(decoding: Self.line(client: 7, [fix]), as: UTF8.self)
    let bytes = Array(
      text.replacingOccurrences(of: #""altitude":400"#, with: "\"altitude\":\(number)").utf8)
    let fast = try #require(Self.fast(bytes))
    #expect(try DaemonProtocol.decodeGenerally(bytes) == fast)
    guard case .locations(_, let fixes) = fast, let altitude = fixes.first?.altitude else {
      Issue.record("no altitude")
      return
    }
    #expect(altitude.bitPattern == Double(number)?.bitPattern)
  }

  /// Shapes the fast reader leaves to the general one, which reads them (or refuses them) as
  /// before.
  @Test(arguments: [
    (#""source":"nmea:///dev/ttyUSB0""#, #""source":"nmea:\/\/\/dev\/ttyUSB0""#),
    (#""source":"nmea:///dev/ttyUSB0""#, #""source":"Zürich""#),
    (#""speed":3.5"#, #""speed":"NaN""#),
    (#""quality":"autonomous""#, #""quality":"psychic""#),
    (#""quality":"autonomous""#, #""quality":"autonomou""#),
    (#""quality":"autonomous""#, #""quality":"autonomousX""#),
    (#""quality":"autonomous""#, #""quality":"auto\u006eomous""#),
    (#""satellitesUsed":9"#, #""satellitesUsed":9.5"#),
    (#""latitude":47.5"#, #""latitude": 47.5"#),
    (#""latitude":47.5"#, #""latitude":047.5"#),
    (#""latitude":47.5"#, #""latitude":+47.5"#),
    (#""isSimulated":false"#, #""isSimulated":0"#),
    (#"{"type":"locations","client":7"#, #"{"client":7,"type":"locations""#),
    (#""source":"nmea:///dev/ttyUSB0"}"#, #""source":"nmea:///dev/ttyUSB0","extra":1}"#),
  ])
  func leavesOtherShapesToTheGeneralReader(original: String, replacement: String) throws {
    let fix = Fix(
      latitude: 47.5, longitude: 8.5, altitude: 400, horizontalAccuracy: 5, speed: 3.5,
      time: 1_767_225_600, quality: .autonomous, satellitesUsed: 9, source: "nmea:///dev/ttyUSB0")
    let text = String(decoding: Self.line(client: 7, [fix]), as: UTF8.self)
    #expect(text.contains(original))
    let bytes = Array(text.replacingOccurrences(of: original, with: replacement).utf8)
    #expect(Self.fast(bytes) == nil)
    #expect(DaemonProtocol.decodeLocationsLine(bytes) == nil)
    // Described, not compared: a fix with a NaN is not equal to itself.
    let general = String(describing: try? DaemonProtocol.decodeGenerally(bytes))
    #expect(String(describing: try? DaemonProtocol.decode(line: bytes)) == general)
  }

  /// Damaged lines: whatever the fast reader takes, the general reader reads the same.
  @Test func damagedLinesReadAlikeOrFallBack() {
    var generator = SplitMix64(seed: 29)
    let alphabet = Array(#"0123456789-.eE,:{}[]"nultrfase \"#.utf8)
    var taken = 0
    for _ in 0..<20_000 {
      let fixes = (0..<(1 + Int(generator.next() % 2))).map { _ in Self.randomFix(&generator) }
      var bytes = Self.line(client: Int(generator.next() % 50), fixes)
      for _ in 0..<(1 + Int(generator.next() % 3)) {
        let at = Int(generator.next() % UInt64(bytes.count))
        switch generator.next() % 3 {
        case 0: bytes[at] = alphabet[Int(generator.next() % UInt64(alphabet.count))]
        case 1: bytes.remove(at: at)
        default: bytes.insert(alphabet[Int(generator.next() % UInt64(alphabet.count))], at: at)
        }
      }
      guard let fast = Self.fast(bytes) else { continue }
      taken += 1
      #expect(
        (try? DaemonProtocol.decodeGenerally(bytes)) == fast,
        "\(String(decoding: bytes, as: UTF8.self))")
    }
    // Some damage leaves a valid line (a digit for a digit): those are compared.
    #expect(taken > 0)
  }
}
