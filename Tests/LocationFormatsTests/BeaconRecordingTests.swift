import LocationModel
import TestSupport
import Testing

@testable import LocationFormats

/// `BeaconRecording`: good lines, each kind of bad line (reported with file and line, skipped,
/// never stopping the lines after it), comments, the writer and the round trip, the synthetic
/// office fixture, and seeded random input.
@Suite struct BeaconRecordingTests {
  /// The line of the format's documentation: the published AirLocate example frame.
  static let exampleLine =
    #"{"time": 1764662400.125, "address": "F0:0D:12:34:56:78", "rssi": -67, "#
    + #""manufacturer": {"76": "0215e2c56db5dffb48d2b060d0f5a71096e000010002c5"}}"#

  /// A good line at `time` from a beacon of minor `minor`.
  static func line(time: Double, minor: Int = 2, rssi: Int = -67) -> String {
    let minorHex = String(minor, radix: 16)
    let padded = String(repeating: "0", count: 4 - minorHex.count) + minorHex
    return #"{"time": \#(time), "address": "F0:0D:12:34:56:78", "rssi": \#(rssi), "#
      + #""manufacturer": {"76": "0215e2c56db5dffb48d2b060d0f5a71096e00001\#(padded)c5"}}"#
  }

  @Test func decodesTheDocumentedLine() throws {
    let recording = BeaconRecording.decode(Self.exampleLine + "\n", file: "office.jsonl")
    #expect(recording.problems.isEmpty)
    #expect(recording.problemCount == 0)
    let record = try #require(recording.records.first)
    #expect(record.time == 1_764_662_400.125)
    #expect(record.address == "F0:0D:12:34:56:78")
    #expect(record.rssi == -67)
    #expect(record.manufacturer.keys.sorted() == [0x004C])
    let advertisement = try #require(recording.advertisements.first)
    #expect(advertisement.uuid == BeaconUUID(string: "e2c56db5-dffb-48d2-b060-d0f5a71096e0"))
    #expect(advertisement.major == 1)
    #expect(advertisement.minor == 2)
    #expect(advertisement.measuredPower == -59)
    #expect(advertisement.rssi == -67)
    #expect(advertisement.address == "F0:0D:12:34:56:78")
    #expect(advertisement.time == 1_764_662_400.125)
  }

  @Test func commentsBlankLinesCRLFAndAByteOrderMark() {
    let text =
      "\u{FEFF}# recorded with bluetoothctl\r\n\r\n   \n  # indented comment\n"
      + Self.line(time: 10) + "\r\n\t\n#\n" + Self.line(time: 11)  // no final line feed
    let recording = BeaconRecording.decode(text)
    #expect(recording.problems.isEmpty)
    #expect(recording.comments == ["recorded with bluetoothctl", "indented comment", ""])
    #expect(recording.records.map(\.time) == [10, 11])
    #expect(recording.advertisements.count == 2)
  }

  @Test func otherCompaniesAndApplesOtherTypesAreRecordsWithoutAdvertisements() {
    let lines = [
      #"{"time": 1, "address": "2B:7F:93:10:C8:E2", "rssi": -80, "manufacturer": {"6": "0109"}}"#,
      #"{"time": 2, "address": "5E:21:9B:6C:44:0D", "rssi": -60, "manufacturer": {"76": "10050"#
        + #"11c52b22e"}}"#,
      #"{"time": 3, "address": "11:22:33:44:55:66", "rssi": -90, "manufacturer": {}}"#,
      #"{"time": 4, "address": "F0:0D:12:34:56:78", "rssi": -67, "manufacturer": {"89": "aa", "#
        + #""76": "0215E2C56DB5DFFB48D2B060D0F5A71096E000010002C5"}, "name": "beacon", "x": [1]}"#,
    ]
    let recording = BeaconRecording.decode(lines.joined(separator: "\n"))
    #expect(recording.problems.isEmpty)
    #expect(recording.records.count == 4)
    #expect(recording.records[0].manufacturer == [6: [0x01, 0x09]])
    #expect(recording.records[2].manufacturer.isEmpty)
    #expect(recording.records[3].manufacturer[89] == [0xAA])
    #expect(recording.advertisements.map(\.time) == [4], "upper-case hex is read too")
  }

  @Test func theRSSIBoundsAreAccepted() {
    let text = Self.line(time: 1, rssi: -127) + "\n" + Self.line(time: 2, rssi: 20)
    let recording = BeaconRecording.decode(text)
    #expect(recording.problems.isEmpty)
    #expect(recording.records.map(\.rssi) == [-127, 20])
  }

  /// Bad lines and the kind of problem each one is.
  static let badLines: [(String, FormatError.Code)] = [
    (#"{"time": 1, "address": "A", "rssi": -50, "manufacturer": {}"#, .malformed),
    ("not json at all", .malformed),
    (#"[1, 2, 3]"#, .malformed),
    (#""a string""#, .malformed),
    (#"{"time": 1, "address": "A", "rssi": -50, "manufacturer": {}} trailing"#, .malformed),
    (#"{"time": 1, "time": 2, "address": "A", "rssi": -50, "manufacturer": {}}"#, .malformed),
    (#"{"address": "A", "rssi": -50, "manufacturer": {}}"#, .missingField),
    (#"{"time": 1, "rssi": -50, "manufacturer": {}}"#, .missingField),
    (#"{"time": 1, "address": "A", "manufacturer": {}}"#, .missingField),
    (#"{"time": 1, "address": "A", "rssi": -50}"#, .missingField),
    (#"{"time": "1", "address": "A", "rssi": -50, "manufacturer": {}}"#, .invalidValue),
    (#"{"time": 1e999, "address": "A", "rssi": -50, "manufacturer": {}}"#, .invalidValue),
    (#"{"time": -1e400, "address": "A", "rssi": -50, "manufacturer": {}}"#, .invalidValue),
    (#"{"time": null, "address": "A", "rssi": -50, "manufacturer": {}}"#, .invalidValue),
    (#"{"time": 1, "address": "", "rssi": -50, "manufacturer": {}}"#, .invalidValue),
    (#"{"time": 1, "address": 7, "rssi": -50, "manufacturer": {}}"#, .invalidValue),
    (#"{"time": 1, "address": "A", "rssi": -128, "manufacturer": {}}"#, .invalidValue),
    (#"{"time": 1, "address": "A", "rssi": 21, "manufacturer": {}}"#, .invalidValue),
    (#"{"time": 1, "address": "A", "rssi": -50.5, "manufacturer": {}}"#, .invalidValue),
    (#"{"time": 1, "address": "A", "rssi": 1e300, "manufacturer": {}}"#, .invalidValue),
    (#"{"time": 1, "address": "A", "rssi": "-50", "manufacturer": {}}"#, .invalidValue),
    (#"{"time": 1, "address": "A", "rssi": -50, "manufacturer": []}"#, .invalidValue),
    (#"{"time": 1, "address": "A", "rssi": -50, "manufacturer": {"76": "021"}}"#, .invalidValue),
    (#"{"time": 1, "address": "A", "rssi": -50, "manufacturer": {"76": "zz"}}"#, .invalidValue),
    (#"{"time": 1, "address": "A", "rssi": -50, "manufacturer": {"76": "0x10"}}"#, .invalidValue),
    (#"{"time": 1, "address": "A", "rssi": -50, "manufacturer": {"76": 16}}"#, .invalidValue),
    (#"{"time": 1, "address": "A", "rssi": -50, "manufacturer": {"0x4c": "10"}}"#, .invalidValue),
    (#"{"time": 1, "address": "A", "rssi": -50, "manufacturer": {"-1": "10"}}"#, .invalidValue),
    (#"{"time": 1, "address": "A", "rssi": -50, "manufacturer": {"65536": "10"}}"#, .invalidValue),
    (#"{"time": 1, "address": "A", "rssi": -50, "manufacturer": {"": "10"}}"#, .invalidValue),
    (
      #"{"time": 1, "address": "A", "rssi": -50, "manufacturer": {"76": "10", "076": "10"}}"#,
      .invalidValue
    ),
  ]

  @Test(
    "a bad line is reported with file and line, and skipped", arguments: badLines.indices)
  func badLineIsReportedAndSkipped(_ index: Int) throws {
    let (bad, code) = Self.badLines[index]
    let text = "# header\n" + Self.line(time: 1) + "\n" + bad + "\n" + Self.line(time: 2) + "\n"
    let recording = BeaconRecording.decode(text, file: "bad.jsonl")
    #expect(recording.problemCount == 1, "\(bad)")
    let problem = try #require(recording.problems.first)
    #expect(problem.code == code, "\(bad): \(problem)")
    #expect(problem.file == "bad.jsonl")
    #expect(problem.line == 3)
    #expect(problem.description.hasPrefix("bad.jsonl:3: "))
    #expect(recording.records.map(\.time) == [1, 2], "the next line is still read")
    #expect(recording.advertisements.count == 2)
  }

  @Test func aLineTooLongIsSkipped() {
    let padding = String(repeating: " ", count: BeaconRecording.maximumLineLength)
    let long = #"{"time": 1, "address": "A", "rssi": -50, "manufacturer": {}"# + padding + "}"
    let recording = BeaconRecording.decode(long + "\n" + Self.line(time: 5))
    #expect(recording.problems.map(\.code) == [.malformed])
    #expect(recording.problems.first?.line == 1)
    #expect(recording.records.map(\.time) == [5])
  }

  @Test func invalidUTF8InAStringIsAProblem() {
    var bytes = Array(#"{"time": 1, "address": "A"#.utf8) + [0xC3, 0x28]
    bytes += Array(#"", "rssi": -50, "manufacturer": {}}"#.utf8) + [0x0A]
    bytes += Array(Self.line(time: 2).utf8)
    let recording = BeaconRecording.decode(bytes, file: "utf8.jsonl")
    #expect(recording.problems.map(\.code) == [.malformed])
    #expect(recording.records.map(\.time) == [2])
  }

  @Test func timeGoingBackBeyondTheToleranceIsSkipped() {
    let times = [100, 99.5, 98, 101, 100.2, 99.9]
    let text = times.map { Self.line(time: $0) }.joined(separator: "\n")
    let lenient = BeaconRecording.decode(text, file: "t.jsonl")
    #expect(lenient.records.map(\.time) == [100, 99.5, 101, 100.2])
    #expect(lenient.problems.map(\.line) == [3, 6], "checked against the latest time so far")
    #expect(lenient.problems.allSatisfy { $0.code == .invalidValue })
    let strict = BeaconRecording.decode(text, backwardsTolerance: 0)
    #expect(strict.records.map(\.time) == [100, 101])
    #expect(strict.problemCount == 4)
    let loose = BeaconRecording.decode(text, backwardsTolerance: 5)
    #expect(loose.records.count == 6)
  }

  @Test func aMalformedIBeaconFrameIsCountedButItsRecordKept() throws {
    let text =
      #"{"time": 1, "address": "A", "rssi": -50, "manufacturer": {"76": "0215e2c56db5"}}"#
      + "\n" + #"{"time": 2, "address": "A", "rssi": -50, "manufacturer": {"76": "0214"}}"#
      + "\n" + Self.line(time: 3)
    let recording = BeaconRecording.decode(text, file: "frames.jsonl")
    #expect(recording.records.count == 3)
    #expect(recording.advertisements.map(\.time) == [3])
    #expect(recording.problemCount == 2)
    #expect(recording.problems.map(\.line) == [1, 2])
    #expect(recording.problems.allSatisfy { $0.code == .malformed && $0.file == "frames.jsonl" })
  }

  @Test func problemsAreAllCountedButOnlyTheFirstKept() {
    let count = BeaconRecording.maximumKeptProblems + 50
    let text = Array(repeating: "oops", count: count).joined(separator: "\n")
    let recording = BeaconRecording.decode(text)
    #expect(recording.problemCount == count)
    #expect(recording.problems.count == BeaconRecording.maximumKeptProblems)
    #expect(recording.problems.last?.line == BeaconRecording.maximumKeptProblems)
    #expect(recording.records.isEmpty)
  }

  @Test func emptyTextHasNothing() {
    for text in ["", "\n\n", "# only a header\n", "\u{FEFF}"] {
      let recording = BeaconRecording.decode(text)
      #expect(recording.records.isEmpty)
      #expect(recording.problemCount == 0)
    }
  }

  @Test func theWriterWritesTheDocumentedLine() throws {
    let record = try #require(BeaconRecording.decode(Self.exampleLine).records.first)
    #expect(BeaconRecording.line(record) == Self.exampleLine)
    let advertisement = try #require(try record.advertisement())
    #expect(BeaconRecording.line(BeaconRecord(advertisement)) == Self.exampleLine)
  }

  @Test func theWriterOrdersCompaniesAndEscapesTheAddress() {
    let record = BeaconRecord(
      time: 5, address: "odd \"name\" \\ \u{1}\ttab caf\u{E9}", rssi: -3,
      manufacturer: [0x004C: [0x10, 0xAB], 6: [], 0xFFFF: [0x00]])
    let line = BeaconRecording.line(record)
    #expect(
      line
        == #"{"time": 5.0, "address": "odd \"name\" \\ \u0001\ttab caf\#u{E9}", "rssi": -3, "#
        + #""manufacturer": {"6": "", "76": "10ab", "65535": "00"}}"#)
    #expect(BeaconRecording.decode(line).records == [record])
  }

  @Test func aNonFiniteTimeIsWrittenAsNullAndRefusedOnReading() {
    let record = BeaconRecord(time: .nan, address: "A", rssi: -50, manufacturer: [:])
    let line = BeaconRecording.line(record)
    #expect(line.hasPrefix(#"{"time": null,"#))
    #expect(BeaconRecording.decode(line).problems.map(\.code) == [.invalidValue])
  }

  @Test func advertisementsRoundTripThroughTheWriter() throws {
    let uuid = try #require(BeaconUUID(string: "b9407f30-f5f8-466e-aff9-25556b57fe6d"))
    let times = [1_764_662_400.125, 1_764_662_400.1, 1_764_662_401 + 1.0 / 3, 1_764_662_402]
    let advertisements = times.enumerated().map { index, time in
      BeaconAdvertisement(
        uuid: uuid, major: UInt16(index * 1000), minor: UInt16(65535 - index),
        measuredPower: -128 + index * 60, rssi: -127 + index * 40,
        address: "AA:BB:CC:DD:EE:0\(index)",
        time: time)
    }
    let header = ["made by a test", "second line\nthird line"]
    let text = BeaconRecording.encode(advertisements: advertisements, header: header)
    #expect(text.hasPrefix("# made by a test\n# second line\n# third line\n{"))
    #expect(text.hasSuffix("}}\n"))
    let recording = BeaconRecording.decode(text)
    #expect(recording.problems.isEmpty)
    #expect(recording.comments == ["made by a test", "second line", "third line"])
    #expect(recording.advertisements == advertisements)
    #expect(BeaconRecording.encode(recording.records, header: recording.comments) == text)
  }

  @Test func theOfficeFixtureDecodesCleanlyAndIsWhatTheWriterWrites() throws {
    let text = try Paths.fixtureText("beacons", "office.beacons.jsonl")
    let recording = BeaconRecording.decode(text, file: "office.beacons.jsonl")
    #expect(recording.problemCount == 0)
    #expect(recording.comments.first?.hasPrefix("Synthetic beacon recording") == true)
    #expect(recording.comments.contains { $0.contains("scripts/make-beacon-fixture.py") })
    #expect(recording.records.count == 507)
    #expect(recording.advertisements.count == 402)
    let identities = Set(recording.advertisements.map { "\($0.major).\($0.minor)" })
    #expect(identities == ["1.1", "1.2", "2.7"])
    #expect(recording.advertisements.allSatisfy { $0.measuredPower == -59 })
    #expect(
      Set(recording.advertisements.map(\.uuid))
        == [BeaconUUID(string: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")])
    let start = try #require(recording.records.first?.time)
    let fading = recording.advertisements.filter { $0.minor == 7 }
    #expect(fading.allSatisfy { $0.time < start + 30.5 }, "the third beacon falls silent")
    #expect(recording.records.last.map { $0.time - start }.map { $0 > 59 && $0 < 60.5 } == true)
    let companies = Set(recording.records.flatMap(\.manufacturer.keys))
    #expect(companies == [6, 76])
    #expect(BeaconRecording.encode(recording.records, header: recording.comments) == text)
  }

  /// A seeded generator of nasty bytes: JSON punctuation, digits, hex, the field names, line feeds
  /// and any byte at all.
  static func randomBytes(_ random: inout SplitMix64) -> [UInt8] {
    let pieces = [
      "{", "}", "[", "]", "\"", ":", ",", "-", ".", "e", "0", "7", "6", "f", "\\", "#", " ", "\r",
      "\n", "\"time\": ", "\"address\": ", "\"rssi\": ", "\"manufacturer\": ", "\"76\": ",
      "\"0215e2c56db5dffb48d2b060d0f5a71096e000010002c5\"", "1764662400.5", "null", "1e999",
    ].map { Array($0.utf8) }
    var bytes: [UInt8] = []
    for _ in 0..<Int.random(in: 0...400, using: &random) {
      if Int.random(in: 0..<8, using: &random) == 0 {
        bytes.append(UInt8.random(in: 0...255, using: &random))
      } else {
        bytes += pieces[Int.random(in: 0..<pieces.count, using: &random)]
      }
    }
    return bytes
  }

  @Test func randomBytesNeverCrashAndEveryLineIsAccountedFor() {
    var random = SplitMix64(seed: 0xBEAC_0001)
    for _ in 0..<2000 {
      let bytes = Self.randomBytes(&random)
      let recording = BeaconRecording.decode(bytes, file: "fuzz")
      let lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false).filter { line in
        let content = line.filter { $0 != 0x20 && $0 != 0x09 && $0 != 0x0D }
        return !content.isEmpty && content.first != UInt8(ascii: "#")
      }
      #expect(recording.records.count <= lines.count)
      #expect(recording.records.count + recording.problemCount >= lines.count)
      #expect(recording.problems.allSatisfy { $0.file == "fuzz" && ($0.line ?? 0) >= 1 })
    }
  }

  @Test func damagedFixtureLinesNeverCrashAndIntactOnesAreKept() throws {
    let text = try Paths.fixtureText("beacons", "office.beacons.jsonl")
    let lines = text.split(separator: "\n").map { Array($0.utf8) }
    var random = SplitMix64(seed: 0xBEAC_0002)
    for _ in 0..<20 {
      var bytes: [UInt8] = []
      var damaged = 0
      for line in lines {
        var copy = line
        if Int.random(in: 0..<5, using: &random) == 0, copy.count > 1 {
          damaged += 1
          let index = Int.random(in: 1..<copy.count, using: &random)
          switch Int.random(in: 0..<3, using: &random) {
          case 0: copy[index] = UInt8.random(in: 0...255, using: &random)
          case 1: copy.remove(at: index)
          default: copy.removeSubrange(index...)
          }
        }
        bytes += copy + [0x0A]
      }
      let recording = BeaconRecording.decode(bytes, backwardsTolerance: .infinity)
      #expect(recording.records.count >= lines.count - 5 - damaged)
      #expect(recording.records.count + recording.problemCount >= lines.count - 5)
    }
  }
}
