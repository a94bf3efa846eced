import Foundation
import LocationModel
import TestSupport
import Testing

@testable import LocationFormats

/// The streaming GPX writer: after every point the file on disk is a valid GPX 1.1 document that
/// our own decoder reads back to exactly the points written, closed or not.
@Suite struct GPXTrackWriterTests {
  /// Seeded fixes along a walk, with every optional measure sometimes unknown.
  static func fixes(_ count: Int, seed: UInt64) -> [Fix] {
    var random = SplitMix64(seed: seed)
    var latitude = random.uniform(-60...60)
    var longitude = random.uniform(-170...170)
    var time = random.uniform(0...2_000_000_000).rounded(.down)
    return (0..<count).map { _ in
      latitude += random.uniform(-0.0005...0.0005)
      longitude += random.uniform(-0.0005...0.0005)
      // Whole seconds, or a fraction of whole milliseconds (the writer's precision).
      time += random.chance(0.5) ? 1 : (random.uniform(1...999).rounded() / 1000)
      return Fix(
        latitude: latitude, longitude: longitude,
        altitude: random.chance(0.8) ? random.uniform(-400...4000) : nil,
        horizontalAccuracy: 5,
        speed: random.chance(0.7) ? random.uniform(0...60) : -1,
        course: random.chance(0.7) ? random.uniform(0...359.9) : -1,
        time: random.chance(0.95) ? time : .nan)
    }
  }

  /// What the decoder gives back for what was written: coordinates, altitude, time, speed and
  /// course exactly (the writer writes decimals that read back as the same numbers).
  static func expectSame(_ read: [GPXPoint], _ written: [Fix], _ context: String) {
    #expect(read.count == written.count, "\(context)")
    for (point, fix) in zip(read, written) {
      #expect(point.kind == .track && point.track == 0 && point.segment == 0, "\(context)")
      #expect(point.fix.latitude == fix.latitude && point.fix.longitude == fix.longitude)
      #expect(point.fix.altitude == fix.altitude, "\(context)")
      if fix.time.isNaN {
        #expect(point.time == nil, "\(context)")
      } else {
        #expect(point.time.map { abs($0 - fix.time) < 1e-6 } == true, "\(context)")
      }
      #expect(point.fix.speed == fix.speed && point.fix.course == fix.course, "\(context)")
    }
  }

  @Test func validAfterEveryPoint() throws {
    try withTemporaryDirectory { directory in
      let path = directory + "/track.gpx"
      let fixes = Self.fixes(60, seed: 0x6E0_7A11)
      let writer = try GPXTrackWriter(path: path, creator: "whereami", name: "test run")
      // An empty track is a valid document already (with no point: `.empty`, not `.malformed`).
      let empty = #expect(throws: FormatError.self) { try GPXDecoder.decode(path: path) }
      #expect(empty?.code == .empty)
      for (index, fix) in fixes.enumerated() {
        try writer.append(fix)
        let document = try GPXDecoder.decode(path: path)
        #expect(document.warnings.isEmpty, "\(document.warnings)")
        #expect(document.version == "1.1" && document.creator == "whereami")
        Self.expectSame(document.points, Array(fixes[...index]), "after point \(index)")
      }
      #expect(writer.pointCount == fixes.count)
      try writer.close()
      Self.expectSame(try GPXDecoder.decode(path: path).points, fixes, "closed")
      // Closed: appending fails with a clear error, and the file is unchanged.
      let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int
      let error = #expect(throws: FormatError.self) { try writer.append(fixes[0]) }
      #expect(error?.message.contains("closed") == true)
      #expect(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int == size)
    }
  }

  /// A writer that is never closed (its process killed between two points) leaves the points it
  /// wrote and a complete document; the replay reads it from start to end.
  @Test func neverClosedIsStillValid() throws {
    try withTemporaryDirectory { directory in
      let path = directory + "/killed.gpx"
      let fixes = Self.fixes(25, seed: 7)
      do {
        let writer = try GPXTrackWriter(path: path, creator: "whereami", durable: true)
        for fix in fixes { try writer.append(fix) }
        // No close(): the writer goes away as a killed process's would.
      }
      let reader = try GPXFileReader(path: path, chunkSize: 4096)
      var points: [GPXPoint] = []
      while let point = try reader.next() { points.append(point) }
      Self.expectSame(points, fixes, "never closed")
      let text = try String(contentsOfFile: path, encoding: .utf8)
      #expect(text.hasSuffix("  </trkseg>\n </trk>\n</gpx>\n"))
    }
  }

  @Test func pointFormat() {
    let fix = Fix(
      latitude: 52.6171, longitude: -5.0000001, altitude: -0.4, horizontalAccuracy: 5,
      speed: 2.5, course: 0, time: 1_706_858_149.25)
    #expect(
      GPXTrackWriter.trackPoint(fix)
        == "   <trkpt lat=\"52.6171\" lon=\"-5.0000001\"><ele>-0.4</ele>"
        + "<time>2024-02-02T07:15:49.250Z</time><extensions><gpxtpx:TrackPointExtension>"
        + "<gpxtpx:speed>2.5</gpxtpx:speed><gpxtpx:course>0</gpxtpx:course>"
        + "</gpxtpx:TrackPointExtension></extensions></trkpt>\n")
    let bare = Fix(latitude: 1e-7, longitude: 100, horizontalAccuracy: 5, time: .nan)
    #expect(GPXTrackWriter.trackPoint(bare) == "   <trkpt lat=\"0.0000001\" lon=\"100\"></trkpt>\n")
    // GPX's longitudes are -180 <= lon < 180.
    let antimeridian = Fix(latitude: -90, longitude: 180, horizontalAccuracy: 5, time: .nan)
    #expect(
      GPXTrackWriter.trackPoint(antimeridian) == "   <trkpt lat=\"-90\" lon=\"-180\"></trkpt>\n")
  }

  @Test(
    arguments: [
      (0.0, "1970-01-01T00:00:00Z"),
      (951_782_400, "2000-02-29T00:00:00Z"),
      (1_709_251_199.9994, "2024-02-29T23:59:59.999Z"),
      (1_709_251_199.9996, "2024-03-01T00:00:00Z"),
      (-1.5, "1969-12-31T23:59:58.500Z"),
      (-62_135_596_800, "0001-01-01T00:00:00Z"),
      (253_402_300_799, "9999-12-31T23:59:59Z"),
    ])
  func isoTimes(time: Double, text: String) {
    #expect(GPXTrackWriter.isoTime(time) == text)
    let parsed = Array(text.utf8).withUnsafeBufferPointer { ByteScalars.iso8601($0) }
    #expect(parsed.map { abs($0 - time) <= 0.0005 } == true)
  }

  @Test func timesWithoutAnISOFormAreLeftOut() {
    #expect(GPXTrackWriter.isoTime(.infinity) == nil)
    #expect(GPXTrackWriter.isoTime(253_402_300_800) == nil)
  }

  @Test func escapesText() throws {
    try withTemporaryDirectory { directory in
      let path = directory + "/escaped.gpx"
      let writer = try GPXTrackWriter(
        path: path, creator: "a \"b\" & <c>", name: "Zürich 'walk'\u{1}")
      try writer.append(Fix(latitude: 47.37, longitude: 8.54, horizontalAccuracy: 5, time: 0))
      try writer.close()
      let document = try GPXDecoder.decode(path: path)
      #expect(document.points.count == 1 && document.warnings.isEmpty)
      // (libxml2's SAX2 hands an attribute's `&amp;` over as `&#38;`: the decoder's creator
      // keeps it, so the text is checked here, not the decoded attribute.)
      let text = try String(contentsOfFile: path, encoding: .utf8)
      #expect(text.contains(#"creator="a &quot;b&quot; &amp; &lt;c&gt;""#))
      #expect(text.contains("<name>Zürich &apos;walk&apos; </name>"))
    }
  }

  @Test func refusesAPointWithoutACoordinate() throws {
    try withTemporaryDirectory { directory in
      let writer = try GPXTrackWriter(path: directory + "/t.gpx", creator: "test")
      let error = #expect(throws: FormatError.self) {
        try writer.append(Fix(latitude: .nan, longitude: 0, horizontalAccuracy: 5, time: 0))
      }
      #expect(error?.code == .invalidValue)
      #expect(writer.pointCount == 0)
    }
  }

  @Test func cannotCreateSaysWhy() {
    let error = #expect(throws: FormatError.self) {
      try GPXTrackWriter(path: "/nonexistent-directory/track.gpx", creator: "test")
    }
    #expect(error?.code == .unreadable)
    #expect(
      error?.description
        == "/nonexistent-directory/track.gpx: cannot create the file: No such file or directory")
  }

  /// An existing file is replaced, not appended to.
  @Test func truncatesAnExistingFile() throws {
    try withTemporaryDirectory { directory in
      let path = directory + "/old.gpx"
      try String(repeating: "x", count: 100_000).write(
        toFile: path, atomically: true, encoding: .utf8)
      let writer = try GPXTrackWriter(path: path, creator: "test")
      try writer.append(Fix(latitude: 1, longitude: 2, horizontalAccuracy: 5, time: 3))
      try writer.close()
      #expect(try GPXDecoder.decode(path: path).points.count == 1)
    }
  }
}
