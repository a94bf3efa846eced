import LocationModel
import Testing

@testable import LocationFormats

/// Seeded damage to OwnTracks messages and seeded random messages: the decoder never crashes,
/// every payload is a message or a `FormatError`, and whatever decodes encodes and decodes back
/// to itself.
@Suite struct OwnTracksFuzzTests {
  /// Valid messages to damage: documented shapes (the booklet's examples, see
  /// `OwnTracksCodecTests`) and ours.
  static let seeds: [String] = [
    #"{"_type":"location","SSID":"mywifi","alt":154,"batt":53,"conn":"w","created_at":1706856299,"lat":48.856826,"lon":2.292713,"tid":"j1","tst":1706856298,"vel":0}"#,
    #"{"batt":-1,"lon":2.29513,"lat":48.85833,"t":"u","tst":1441984413,"_type":"location","tid":"JJ"}"#,
    #"{"_type":"transition","acc":65,"desc":"Main@WestWing","event":"enter","lat":2.2222,"lon":1.1111,"tid":"jp","tst":1433342520,"wtst":1432817332}"#,
    #"{"_type":"waypoint","desc":"coffee","lat":48.87069,"lon":2.34916,"rad":"50","tst":"1385997757","rid":"f7676c"}"#,
    #"{"_type":"waypoints","waypoints":[{"_type":"waypoint","tst":1708625557,"rid":"r1","desc":"home","rad":100,"lat":30.0,"lon":40.0}]}"#,
    #"{"_type":"lwt","tst":1706856000}"#,
    #"{"_type":"location","acc":5,"alt":0,"cog":0,"lat":52.6171,"lon":5.2461,"t":"p","tid":"cl","tst":1706856298,"vac":8,"vel":18}"#,
  ]

  /// Flips, deletes, inserts or duplicates bytes, or cuts the message short.
  static func damage(_ message: [UInt8], _ random: inout SplitMix64) -> [UInt8] {
    var bytes = message
    let junk: [UInt8] = Array(#"{}[]",:.-+eE0123456789"\ truefalsnul_typelocation"#.utf8)
    for _ in 0..<Int.random(in: 1...4, using: &random) where !bytes.isEmpty {
      let index = Int.random(in: 0..<bytes.count, using: &random)
      switch Int.random(in: 0..<6, using: &random) {
      case 0: bytes[index] = UInt8.random(in: 0...255, using: &random)
      case 1: bytes.remove(at: index)
      case 2: bytes.insert(junk[Int.random(in: 0..<junk.count, using: &random)], at: index)
      case 3: bytes.insert(contentsOf: bytes[index...].prefix(12), at: index)
      case 4: bytes[index] = junk[Int.random(in: 0..<junk.count, using: &random)]
      default: bytes.removeSubrange(index...)
      }
    }
    return bytes
  }

  /// Decodes, and when a message comes out that can be encoded, checks the round trip.
  static func check(_ payload: [UInt8]) -> (decoded: Bool, other: Bool) {
    let message: OwnTracksMessage
    do {
      message = try OwnTracksMessage.decode(payload)
    } catch {
      #expect(!error.message.isEmpty)
      return (false, false)
    }
    if case .other = message { return (true, true) }
    do {
      let again = try OwnTracksMessage.decode(try message.encoded())
      #expect(again == message, "\(String(decoding: payload, as: UTF8.self))")
    } catch {
      Issue.record("decoded but did not round trip: \(error)")
    }
    return (true, false)
  }

  @Test func damagedMessages() {
    var random = SplitMix64(seed: 0x0_77AC_F022)
    var decoded = 0
    var failed = 0
    for _ in 0..<20_000 {
      let seed = Self.seeds[Int.random(in: 0..<Self.seeds.count, using: &random)]
      let result = Self.check(Self.damage(Array(seed.utf8), &random))
      if result.decoded { decoded += 1 } else { failed += 1 }
    }
    // Both outcomes are exercised, not only one.
    #expect(decoded > 1000 && failed > 1000, "decoded \(decoded), failed \(failed)")
  }

  @Test func randomBytes() {
    var random = SplitMix64(seed: 42)
    for _ in 0..<2000 {
      let bytes = (0..<Int.random(in: 0...300, using: &random)).map { _ in
        UInt8.random(in: 0...255, using: &random)
      }
      _ = Self.check(bytes)
    }
  }

  /// Random objects with OwnTracks' member names and values of every JSON kind.
  @Test func randomObjects() {
    var random = SplitMix64(seed: 0xBADC_0FFE)
    let names = [
      "_type", "lat", "lon", "acc", "alt", "vac", "vel", "cog", "tst", "tid", "t", "event", "desc",
      "wtst", "rid", "rad", "waypoints", "_creator",
    ]
    let types = ["location", "transition", "waypoint", "waypoints", "lwt", "card", ""]
    let values = [
      "0", "-1", "1.5", "90", "-180", "181", "360", "1e308", "-0", "1706856298", "\"12\"", "\"x\"",
      "\"enter\"", "\"leave\"", "null", "true", "[]", "{}", "[{\"desc\":\"a\",\"tst\":1}]",
      "\"NaN\"", "9007199254740993",
    ]
    var decoded = 0
    for _ in 0..<20_000 {
      var members = ["\"_type\":\"\(types[Int.random(in: 0..<types.count, using: &random)])\""]
      for _ in 0..<Int.random(in: 0...10, using: &random) {
        let name = names[Int.random(in: 0..<names.count, using: &random)]
        let value = values[Int.random(in: 0..<values.count, using: &random)]
        members.append("\"\(name)\":\(value)")
      }
      let payload = "{" + members.joined(separator: ",") + "}"
      if Self.check(Array(payload.utf8)).decoded { decoded += 1 }
    }
    #expect(decoded > 0)
  }
}
