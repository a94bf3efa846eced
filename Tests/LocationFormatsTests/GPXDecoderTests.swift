import Foundation
import Geodesy
import LocationModel
import TestSupport
import Testing

@testable import LocationFormats

@Suite struct GPXDecoderTests {
  static let wellFormed =
    [
      "garmin_trackpointextension_v2.gpx", "garmin_connect_v1.gpx", "gpx10_speed_course.gpx",
      "routes_waypoints.gpx", "bad_points.gpx",
    ] + GPXFixtures.otherTools

  /// Each fixture decodes to the points in `NAME.gpx.chk` (set `GPX_WRITE_CHK=1` to rewrite them
  /// after a reviewed change of behaviour).
  @Test(arguments: wellFormed)
  func matchesExpectation(name: String) throws {
    let document = try GPXDecoder.decode(data: try Paths.fixtureBytes("gpx", name), file: name)
    let rendered = GPXFixtures.render(document.points)
    let chk = Paths.fixture("gpx", name + ".chk")
    if ProcessInfo.processInfo.environment["GPX_WRITE_CHK"] == "1" {
      try rendered.write(toFile: chk, atomically: true, encoding: .utf8)
    }
    let expected = try String(contentsOfFile: chk, encoding: .utf8)
    #expect(rendered == expected)
  }

  /// libxml2's SAX2 interface, without entity substitution (kept off against external
  /// entities), hands an attribute's `&amp;` (and `&#38;`) over as the text `&#38;`; the root's
  /// `creator` and `version` are what the file says.
  @Test func escapedCharactersInTheRootsAttributesAreDecoded() throws {
    let xml = """
      <?xml version="1.0"?>
      <gpx version="1.1" creator="Tom &amp; Jerry &lt;3 &#38; &quot;GPS&quot; &#x41;&#66;">
      <wpt lat="1" lon="2"/></gpx>
      """
    let document = try GPXDecoder.decode(data: Array(xml.utf8))
    #expect(document.creator == "Tom & Jerry <3 & \"GPS\" AB")
    #expect(document.version == "1.1" && document.points.count == 1)
  }

  @Test func garminTrackPointExtensionV2() throws {
    let name = "garmin_trackpointextension_v2.gpx"
    let document = try GPXDecoder.decode(data: try Paths.fixtureBytes("gpx", name), file: name)
    #expect(document.version == "1.1")
    #expect(document.creator == "eTrex 32x")
    #expect(document.warnings.isEmpty)
    let points = document.points
    try #require(points.count == 4)
    #expect(points.map(\.segment) == [0, 0, 0, 1])
    #expect(points.allSatisfy { $0.kind == .track && $0.track == 0 })
    #expect(points[0].fix.latitude == 53.5438214)
    #expect(points[0].fix.longitude == 9.9664281)
    #expect(points[0].fix.altitude == 4.21)
    #expect(points[0].time == 1_717_228_800)  // 2024-06-01T08:00:00Z
    #expect(points[0].fix.speed == 1.32)
    #expect(points[0].fix.course == 87.5)
    #expect(points[2].fix.speed == -1)
    #expect(points[2].fix.course == -1)
    #expect(points[3].fix.speed == 0)
    #expect(points[3].fix.course == 0)  // 360 wraps to 0
    #expect(points[0].fix.horizontalAccuracy == GPXDecoder.defaultHorizontalAccuracy)
    #expect(points[0].fix.verticalAccuracy == GPXDecoder.defaultVerticalAccuracy)
    #expect(points[0].fix.isSimulated == false)
    #expect(points[0].fix.source == name)
    #expect(points.map(\.line) == [20, 31, 41, 47])
  }

  @Test func garminConnectV1HasNoSpeed() throws {
    let name = "garmin_connect_v1.gpx"
    let document = try GPXDecoder.decode(data: try Paths.fixtureBytes("gpx", name))
    let points = document.points
    try #require(points.count == 2)
    #expect(points.allSatisfy { $0.fix.speed == -1 && $0.fix.course == -1 })
    #expect(points[0].fix.latitude == 47.37659810297191143)
    #expect(points[0].fix.altitude == 408.399999999999977262632)
    #expect(points[1].time == 1_697_265_073)  // 2023-10-14T06:31:13Z
  }

  @Test func gpx10SpeedCourseAndDilution() throws {
    let name = "gpx10_speed_course.gpx"
    let document = try GPXDecoder.decode(data: try Paths.fixtureBytes("gpx", name))
    #expect(document.version == "1.0")
    let points = document.points
    try #require(points.count == 4)
    let first = points[0].fix
    #expect(first.speed == 12.346)
    #expect(first.course == 45.200001)
    #expect(first.satellitesUsed == 9)
    #expect(first.quality == .autonomous)
    #expect(points[0].hdop == 0.9)
    #expect(first.horizontalAccuracy == 0.9 * GPXDecoder.userEquivalentRangeError)
    #expect(first.verticalAccuracy == 1.4 * GPXDecoder.userEquivalentRangeError)
    // 2019-03-09T14:02:11Z; the others are the next seconds written with zone offsets.
    #expect(points[0].time == 1_552_140_131)
    #expect(points[1].time == 1_552_140_132.5)
    #expect(points[2].time == 1_552_140_133)
    #expect(points[1].fix.quality == .differential)
    #expect(points[2].fix.quality == .autonomous)
    #expect(points[2].fix.horizontalAccuracy == 3.1 * GPXDecoder.userEquivalentRangeError)
    #expect(points[2].fix.verticalAccuracy == -1)  // no <ele>
    #expect(points[3].fix.quality == FixQuality.none)
  }

  /// A point with every child value, then points with none: nothing of the first carries over
  /// into the next (the decoder fills one point in place and resets it at each start).
  @Test func aPointKeepsNothingOfThePointBefore() throws {
    let text = """
      <gpx version="1.1" creator="test"><trk><trkseg>
      <trkpt lat="52.5" lon="5.5"><ele>12.5</ele><time>2024-06-01T08:00:00Z</time>
      <speed>3.5</speed><course>90</course><sat>9</sat><hdop>0.8</hdop><vdop>1.2</vdop>
      <pdop>1.5</pdop><fix>dgps</fix></trkpt>
      <trkpt lat="52.6" lon="5.6"/>
      </trkseg></trk><rte><rtept lat="52.7" lon="5.7"/></rte></gpx>
      """
    let points = try GPXDecoder.decode(data: Array(text.utf8)).points
    try #require(points.count == 3)
    let full = points[0]
    #expect(full.fix.altitude == 12.5 && full.fix.speed == 3.5 && full.fix.course == 90)
    #expect(full.fix.satellitesUsed == 9 && full.fix.quality == .differential)
    #expect(full.hdop == 0.8 && full.vdop == 1.2 && full.pdop == 1.5)
    #expect(full.time == 1_717_228_800 && full.fix.time == 1_717_228_800)
    for bare in points[1...] {
      #expect(bare.fix.altitude == nil)
      #expect(bare.time == nil)
      #expect(bare.fix.time.isNaN)
      #expect(bare.fix.speed == -1 && bare.fix.course == -1)
      #expect(bare.hdop == nil && bare.vdop == nil && bare.pdop == nil)
      #expect(bare.fix.satellitesUsed == nil)
      #expect(bare.fix.quality == .autonomous)
      #expect(bare.fix.horizontalAccuracy == GPXDecoder.defaultHorizontalAccuracy)
      #expect(bare.fix.verticalAccuracy == -1)
    }
    #expect(points.map(\.kind) == [.track, .track, .route])
    #expect(points.map(\.fix.latitude) == [52.5, 52.6, 52.7])
  }

  @Test func routesAndWaypoints() throws {
    let name = "routes_waypoints.gpx"
    let document = try GPXDecoder.decode(data: try Paths.fixtureBytes("gpx", name))
    let points = document.points
    #expect(
      points.map(\.kind) == [
        .waypoint, .waypoint, .route, .route, .route, .route, .track, .track,
      ])
    #expect(points.map(\.track) == [0, 0, 0, 0, 0, 1, 0, 0])
    #expect(points[0].time == nil)
    #expect(points[0].fix.time.isNaN)
    #expect(points[0].fix.altitude == 35)
    #expect(points[1].fix.altitude == nil)
    #expect(points[1].fix.verticalAccuracy == -1)
    #expect(points[6].fix.speed == 1.1)  // <osmand:speed> in extensions
    #expect(points[6].fix.horizontalAccuracy == 3.5 * GPXDecoder.userEquivalentRangeError)
    #expect(points[7].fix.speed == 1.3)  // unprefixed <speed> in extensions
    #expect(document.trackPoints.count == 2)
  }

  @Test func badPointsAreSkippedWithWarnings() throws {
    let name = "bad_points.gpx"
    let document = try GPXDecoder.decode(data: try Paths.fixtureBytes("gpx", name), file: name)
    #expect(document.points.map(\.line) == [7, 11, 12])
    let bad = document.points[1]
    #expect(bad.fix.altitude == nil)
    #expect(bad.time == nil)
    #expect(document.points[2].time == 1_660_989_605.25)
    let warnings = document.warnings
    #expect(warnings.map(\.line) == [8, 9, 10, 11, 11])
    #expect(
      warnings.map(\.code) == [
        .invalidValue, .invalidValue, .missingField, .invalidValue, .invalidValue,
      ])
    #expect(warnings.allSatisfy { $0.file == name })
    #expect(
      warnings[0].description == "bad_points.gpx:8: track point skipped: latitude out of range")
    // Coordinates stay out of messages.
    #expect(
      warnings.allSatisfy { !$0.description.contains("91") && !$0.description.contains("0.12") })
  }

  @Test func truncatedFileIsMalformedAfterItsCompletePoints() throws {
    let name = "truncated.gpx"
    let bytes = try Paths.fixtureBytes("gpx", name)
    let error = #expect(throws: FormatError.self) {
      _ = try GPXDecoder.decode(data: bytes, file: name)
    }
    #expect(error?.code == .malformed)
    #expect(error?.file == name)
    #expect(error?.line == 8)  // the last line, where the file stops
    // Streaming: the two complete points come out before the error.
    let decoder = GPXDecoder(file: name)
    try decoder.feed(bytes)
    #expect(throws: FormatError.self) { try decoder.finish() }
    #expect(decoder.takePoints().count == 2)
    // The file reader returns them too, then throws.
    let reader = try GPXFileReader(path: Paths.fixture("gpx", name))
    #expect(try reader.next() != nil)
    #expect(try reader.next() != nil)
    #expect(throws: FormatError.self) { _ = try reader.next() }
  }

  @Test func nonXMLIsMalformed() throws {
    let name = "not_xml.gpx"
    let error = #expect(throws: FormatError.self) {
      _ = try GPXDecoder.decode(data: try Paths.fixtureBytes("gpx", name), file: name)
    }
    #expect(error?.code == .malformed)
    #expect(error?.line == 1)
    #expect(error?.description.hasPrefix("not_xml.gpx:1: not well-formed XML") == true)
  }

  @Test(arguments: ["xxe.gpx", "billion_laughs.gpx"])
  func entityAttacksAreRefused(name: String) throws {
    let bytes = try Paths.fixtureBytes("gpx", name)
    let error = #expect(throws: FormatError.self) {
      _ = try GPXDecoder.decode(data: bytes, file: name)
    }
    #expect(error?.code == .malformed)
    #expect(error?.description.contains("root:") == false)
    // Streaming: nothing from /etc/passwd reaches the decoder, and no point is produced.
    let decoder = GPXDecoder(file: name)
    #expect(throws: FormatError.self) {
      try decoder.feed(bytes)
      try decoder.finish()
    }
    #expect(decoder.creator?.contains("root") != true)
    #expect(decoder.takePoints().isEmpty)
  }

  @Test func documentsWithoutPointsAreEmpty() throws {
    let error = #expect(throws: FormatError.self) {
      _ = try GPXDecoder.decode(data: try Paths.fixtureBytes("gpx", "no_points.gpx"))
    }
    #expect(error?.code == .empty)
    let empty = #expect(throws: FormatError.self) { _ = try GPXDecoder.decode(data: []) }
    #expect(empty?.code == .empty)
    let kml = Array(
      "<kml xmlns=\"http://www.opengis.net/kml/2.2\"><Placemark/></kml>".utf8)
    let notGPX = #expect(throws: FormatError.self) { _ = try GPXDecoder.decode(data: kml) }
    #expect(notGPX?.code == .empty)
    #expect(notGPX?.message.contains("<kml>") == true)
  }

  /// Chunks may split the XML anywhere: one byte at a time, odd sizes, and whole all agree,
  /// line numbers included.
  @Test(arguments: [1, 7, 64, 4096])
  func chunkingDoesNotMatter(chunkSize: Int) throws {
    for name in Self.wellFormed {
      let bytes = try Paths.fixtureBytes("gpx", name)
      let whole = try GPXDecoder.decode(data: bytes, file: name)
      let decoder = GPXDecoder(file: name)
      var points: [GPXPoint] = []
      var start = 0
      while start < bytes.count {
        let end = min(start + chunkSize, bytes.count)
        try decoder.feed(Array(bytes[start..<end]))
        points += decoder.takePoints()
        start = end
      }
      try decoder.finish()
      points += decoder.takePoints()
      #expect(GPXFixtures.render(points) == GPXFixtures.render(whole.points), "\(name)")
      #expect(decoder.warnings == whole.warnings)
    }
  }

  @Test func decodingFromAPathMatchesDecodingBytes() throws {
    for name in Self.wellFormed {
      let path = Paths.fixture("gpx", name)
      let fromPath = try GPXDecoder.decode(path: path)
      let fromBytes = try GPXDecoder.decode(data: try Paths.fixtureBytes("gpx", name), file: path)
      #expect(GPXFixtures.render(fromPath.points) == GPXFixtures.render(fromBytes.points))
      #expect(fromPath.warnings == fromBytes.warnings)
      #expect(fromPath.creator == fromBytes.creator)
    }
    let missing = #expect(throws: FormatError.self) {
      _ = try GPXDecoder.decode(path: "/nonexistent/track.gpx")
    }
    #expect(missing?.code == .unreadable)
  }

  /// A long generated track read through the file reader in small chunks comes out whole, in
  /// order, with the right line numbers.
  @Test func fileReaderStreamsALongTrack() throws {
    var text =
      "<?xml version=\"1.0\"?>\n<gpx version=\"1.1\" xmlns=\"http://www.topografix.com/GPX/1/1\">\n"
    text += "<trk><trkseg>\n"
    let count = 20_000
    for index in 0..<count {
      text +=
        "<trkpt lat=\"\(Double(index) * 1e-5)\" lon=\"8.5\"><time>2024-01-01T00:00:00Z</time></trkpt>\n"
    }
    text += "</trkseg></trk></gpx>\n"
    let path = FileManager.default.temporaryDirectory
      .appendingPathComponent("gpx-reader-\(ProcessInfo.processInfo.processIdentifier).gpx").path
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    defer { try? FileManager.default.removeItem(atPath: path) }
    let reader = try GPXFileReader(path: path, chunkSize: 4096)
    var seen = 0
    while let point = try reader.next() {
      #expect(point.line == seen + 4)
      #expect(point.fix.latitude == Double(seen) * 1e-5)
      seen += 1
    }
    #expect(seen == count)
    #expect(try reader.next() == nil)
  }

  /// Seeded mutations of the fixtures (byte flips, cuts, insertions) never crash the decoder:
  /// each either decodes or throws a FormatError.
  @Test func mutatedFixturesNeverCrash() throws {
    var generator = SplitMix64(seed: 0x6770_7866_757A_7A21)
    let inserts: [[UInt8]] = [
      Array("<".utf8), Array("&".utf8), Array("]]>".utf8),
      Array("<trkpt lat=\"1e999\" lon=\"".utf8),
      [0xFF, 0xFE], [0], Array("<!DOCTYPE x [<!ENTITY a \"b\">]>".utf8),
    ]
    for name in Self.wellFormed {
      let original = try Paths.fixtureBytes("gpx", name)
      for _ in 0..<150 {
        var bytes = original
        for _ in 0..<(1 + Int(generator.next() % 4)) {
          let position = Int(generator.next() % UInt64(bytes.count))
          switch generator.next() % 3 {
          case 0: bytes[position] = UInt8(truncatingIfNeeded: generator.next())
          case 1:
            bytes.removeSubrange(
              position..<min(bytes.count, position + 1 + Int(generator.next() % 40)))
          default:
            bytes.insert(
              contentsOf: inserts[Int(generator.next() % UInt64(inserts.count))], at: position)
          }
          if bytes.isEmpty { bytes = [0x3C] }
        }
        do {
          let document = try GPXDecoder.decode(data: bytes, file: name)
          #expect(document.points.allSatisfy { $0.fix.hasValidCoordinate })
        } catch {
          #expect(!error.message.isEmpty)
        }
      }
    }
  }
}

@Suite struct GPXDecoderLimitsTests {
  /// A value far longer than any number is ignored with a warning, not buffered without bound.
  @Test func overlongValueIsIgnored() throws {
    let zeros = String(repeating: "0", count: 100_000)
    let text = """
      <gpx version="1.1" xmlns="http://www.topografix.com/GPX/1/1"><wpt lat="1" lon="2">\
      <ele>1.\(zeros)1</ele></wpt></gpx>
      """
    let document = try GPXDecoder.decode(data: Array(text.utf8))
    #expect(document.points.count == 1)
    #expect(document.points.first?.fix.altitude == nil)
    #expect(document.warnings.count == 1)
  }

  /// Warnings stop accumulating at the cap; one last warning counts the rest.
  @Test func warningsAreCapped() throws {
    var text = "<gpx version=\"1.1\"><wpt lat=\"1\" lon=\"2\"/>"
    for _ in 0..<(GPXDecoder.maximumWarnings + 10) { text += "<wpt lat=\"99\" lon=\"2\"/>" }
    text += "</gpx>"
    let document = try GPXDecoder.decode(data: Array(text.utf8))
    #expect(document.points.count == 1)
    #expect(document.warnings.count == GPXDecoder.maximumWarnings + 1)
    #expect(document.warnings.last?.message == "10 more warnings not kept")
  }
}

@Suite struct GPXDecoderEncodingTests {
  static let body =
    "<gpx version=\"1.1\" xmlns=\"http://www.topografix.com/GPX/1/1\">"
    + "<wpt lat=\"48.1\" lon=\"11.5\"><name>M\u{FC}nchen</name></wpt></gpx>"

  /// A Latin-1 file (as old Windows programs write) is converted by libxml2 and decodes.
  @Test func latin1Decodes() throws {
    var bytes = Array("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n".utf8)
    bytes += Self.body.unicodeScalars.map { UInt8(truncatingIfNeeded: $0.value) }
    let document = try GPXDecoder.decode(data: bytes)
    #expect(document.points.count == 1)
    #expect(document.points.first?.line == 2)
  }

  /// UTF-16 with a byte order mark decodes too.
  @Test func utf16Decodes() throws {
    var bytes: [UInt8] = [0xFF, 0xFE]
    for unit in ("<?xml version=\"1.0\" encoding=\"UTF-16\"?>" + Self.body).utf16 {
      bytes += [UInt8(unit & 0xFF), UInt8(unit >> 8)]
    }
    let document = try GPXDecoder.decode(data: bytes)
    #expect(document.points.first?.fix.longitude == 11.5)
  }

  /// Bytes that are not UTF-8, and an encoding libxml2 does not know, are malformed, not a crash.
  @Test(arguments: [
    Array("<gpx version=\"1.1\"><wpt lat=\"1\" lon=\"2\"><name>".utf8) + [0xC3, 0x28, 0xFF]
      + Array("</name></wpt></gpx>".utf8),
    Array("<?xml version=\"1.0\" encoding=\"X-NO-SUCH-CHARSET\"?><gpx/>".utf8),
  ])
  func badEncodingsAreMalformed(bytes: [UInt8]) {
    let error = #expect(throws: FormatError.self) { _ = try GPXDecoder.decode(data: bytes) }
    #expect(error?.code == .malformed)
  }
}
