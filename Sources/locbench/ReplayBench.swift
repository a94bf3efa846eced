// Replay benchmark: GPX decoding throughput, and (later) the engine pipeline fed by a replay.
//
//   swift run -c release locbench replay
//
// The track is generated in memory: 1,000,000 `<trkpt>` with `<ele>` and `<time>` (fractional
// seconds), every tenth with a Garmin TrackPointExtension v2 block (speed, course, heart rate),
// segments of 10,000 points, laid out as a Garmin device writes them. Baselines measured in the same
// run: a plain scan counting '<' (the memory-bandwidth floor) and libxml2's SAX2 push parser with
// empty callbacks and the decoder's options (the cost of XML itself). For scale, Python's gpxpy
// decodes about 6 MB/s on such a file and ElementTree's iterparse about 29 MB/s (figures from the
// brief, not measured here).
//
// `locbench replay feed` only decodes the track five times with `feed` (for `perf record`), and
// `locbench replay engine` runs only the engine half.
import CLibXML2
import Foundation
import LocationFormats

enum ReplayBench {
  static let pointCount = 1_000_000
  static let chunkSize = 1 << 20
  static let rounds = 5

  /// One measured variant: its name, the unit it counts, and the best times seen.
  final class Variant {
    let name: String
    let unit: String
    let body: () -> Int
    var wall = Double.infinity
    var cpu = Double.infinity
    var count = 0
    init(_ name: String, _ unit: String, _ body: @escaping () -> Int) {
      self.name = name
      self.unit = unit
      self.body = body
    }
  }

  static func run() {
    // `locbench replay engine` only runs the engine half.
    if CommandLine.arguments.count > 2 && CommandLine.arguments[2] == "engine" {
      enginePipeline()
      return
    }
    let generationStart = ContinuousClock.now
    let track = makeTrack(points: pointCount)
    let megabytes = Double(track.count) / 1_000_000
    print(
      "GPX track: \(pointCount) points, \(String(format: "%.1f", megabytes)) MB "
        + "(generated in \(String(format: "%.1f", seconds(ContinuousClock.now - generationStart))) s)"
    )
    if CommandLine.arguments.count > 2 && CommandLine.arguments[2] == "feed" {
      var points = 0
      for _ in 0..<5 { points += streamingDecode(track) }
      print("feed: \(points) points")
      return
    }

    let scan = Variant("baseline: byte scan counting '<'", "tags") { countOpenBrackets(track) }
    let emptyPush = Variant("baseline: libxml2 SAX2 push, empty callbacks", "elements") {
      emptySAXParse(track, whole: false)
    }
    let emptyWhole = Variant("baseline: libxml2 SAX2 whole, empty callbacks", "elements") {
      emptySAXParse(track, whole: true)
    }
    let streaming = Variant("GPXDecoder feed(1 MB chunks) + takePoints", "points") {
      streamingDecode(track)
    }
    let whole = Variant("GPXDecoder.decode(data:)", "points") { wholeDecode(track) }
    let variants = [scan, emptyPush, emptyWhole, streaming, whole]
    // Rounds interleave the variants so that a burst of load from other processes on a shared
    // machine hurts all of them alike; each keeps its best wall-clock and its best thread CPU time.
    for _ in 0..<rounds {
      for variant in variants { measure(variant) }
    }
    print("  best of \(rounds) interleaved rounds; MB/s by wall clock (by this thread's CPU time)")
    for variant in variants {
      print(
        "  \(variant.name.padding(toLength: 46, withPad: " ", startingAt: 0))"
          + "\(String(format: "%7.1f", megabytes / variant.wall)) "
          + "(\(String(format: "%7.1f", megabytes / variant.cpu))) MB/s  "
          + "\(String(format: "%10.0f", Double(variant.count) / variant.wall)) \(variant.unit)/s")
    }
    func ratio(_ numerator: Variant, _ denominator: Variant) -> String {
      String(
        format: "%.2f (%.2f)", numerator.wall / denominator.wall, numerator.cpu / denominator.cpu)
    }
    let decodeRate = megabytes / streaming.wall
    print("  ratios, wall (CPU):")
    print("    feed decoder vs empty SAX2 push: \(ratio(emptyPush, streaming))")
    print("    decode(data:) vs empty SAX2 whole: \(ratio(emptyWhole, whole))")
    print("    feed decoder vs byte scan: \(ratio(scan, streaming))")
    print(
      "    feed decoder vs gpxpy (about 6 MB/s): \(String(format: "%.1f", decodeRate / 6))x,"
        + " vs ElementTree iterparse (about 29 MB/s): \(String(format: "%.1f", decodeRate / 29))x"
        + " (Python figures from the brief, not measured here)")
    if streaming.count != pointCount || whole.count != pointCount {
      print("  ERROR: decoded \(streaming.count) / \(whole.count) points, expected \(pointCount)")
    }
    enginePipeline()
  }

  /// The engine half of the replay benchmark (EnginePipelineBench.swift).
  static func enginePipeline() {
    EnginePipelineBench.run()
  }

  // MARK: Measurements

  /// Runs a variant once, keeping its best wall-clock and thread CPU times.
  static func measure(_ variant: Variant) {
    let cpuStart = threadCPUSeconds()
    let start = ContinuousClock.now
    variant.count = variant.body()
    variant.wall = min(variant.wall, seconds(ContinuousClock.now - start))
    variant.cpu = min(variant.cpu, threadCPUSeconds() - cpuStart)
  }

  /// CPU time consumed by the calling thread, in seconds.
  static func threadCPUSeconds() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) * 1e-9
  }

  static func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
  }

  static func countOpenBrackets(_ bytes: [UInt8]) -> Int {
    var count = 0
    bytes.withUnsafeBufferPointer { buffer in
      for byte in buffer where byte == UInt8(ascii: "<") { count += 1 }
    }
    return count
  }

  static func streamingDecode(_ bytes: [UInt8]) -> Int {
    let decoder = GPXDecoder(file: "bench.gpx")
    var points = 0
    var failure: FormatError?
    bytes.withUnsafeBytes { buffer in
      var offset = 0
      while offset < buffer.count && failure == nil {
        let end = min(offset + chunkSize, buffer.count)
        do throws(FormatError) {
          try decoder.feed(UnsafeRawBufferPointer(rebasing: buffer[offset..<end]))
        } catch {
          failure = error
        }
        points += decoder.takePoints().count
        offset = end
      }
    }
    do {
      if let failure { throw failure }
      try decoder.finish()
    } catch {
      print("  decode failed: \(error)")
    }
    points += decoder.takePoints().count
    return points
  }

  static func wholeDecode(_ bytes: [UInt8]) -> Int {
    do {
      return try GPXDecoder.decode(data: bytes, file: "bench.gpx").points.count
    } catch {
      print("  decode failed: \(error)")
      return 0
    }
  }

  /// libxml2's SAX2 parser with callbacks that only count elements: the same options as the
  /// decoder, none of its work. `whole`: one pass over the whole buffer (as
  /// `GPXDecoder.decode(data:)`); otherwise the push parser fed 1 MB chunks (as `feed`).
  static func emptySAXParse(_ bytes: [UInt8], whole: Bool) -> Int {
    var handler = xmlSAXHandler()
    handler.initialized = clx_sax2_magic()
    handler.startElementNs = { userData, _, _, _, _, _, _, _, _ in
      userData?.assumingMemoryBound(to: Int.self).pointee += 1
    }
    handler.endElementNs = { _, _, _, _ in }
    handler.characters = { _, _, _ in }
    handler.ignorableWhitespace = handler.characters  // as the decoder does
    handler.serror = { _, _ in }
    let counter = UnsafeMutablePointer<Int>.allocate(capacity: 1)
    counter.initialize(to: 0)
    defer { counter.deallocate() }
    let options =
      XML_PARSE_NONET.rawValue | XML_PARSE_NOERROR.rawValue | XML_PARSE_NOWARNING.rawValue
    bytes.withUnsafeBytes { buffer in
      guard let base = buffer.baseAddress?.assumingMemoryBound(to: CChar.self) else { return }
      if whole {
        guard let context = xmlCreateMemoryParserCtxt(base, Int32(buffer.count)),
          let sax = context.pointee.sax
        else { return }
        defer { xmlFreeParserCtxt(context) }
        sax.pointee = handler
        context.pointee.userData = UnsafeMutableRawPointer(counter)
        xmlCtxtUseOptions(context, Int32(options))
        xmlParseDocument(context)
        return
      }
      guard let context = xmlCreatePushParserCtxt(&handler, counter, nil, 0, nil) else { return }
      defer { xmlFreeParserCtxt(context) }
      xmlCtxtUseOptions(context, Int32(options))
      var offset = 0
      while offset < buffer.count {
        let count = min(chunkSize, buffer.count - offset)
        xmlParseChunk(context, base + offset, Int32(count), 0)
        offset += count
      }
      xmlParseChunk(context, nil, 0, 1)
    }
    return counter.pointee
  }

  // MARK: The track

  /// A Garmin-shaped GPX 1.1 track of `points` points walking north-east from Zürich at about
  /// 3 m/s, one point a second.
  static func makeTrack(points: Int) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(points * 260)
    func append(_ text: String) { out.append(contentsOf: text.utf8) }
    append(
      """
      <?xml version="1.0" encoding="UTF-8" standalone="no" ?>
      <gpx xmlns="http://www.topografix.com/GPX/1/1" \
      xmlns:gpxtpx="http://www.garmin.com/xmlschemas/TrackPointExtension/v2" \
      creator="locbench" version="1.1">
        <metadata><time>2024-06-01T08:00:00Z</time></metadata>
        <trk>
          <name>generated</name>

      """)
    let start = 1_717_228_800  // 2024-06-01T00:00:00Z
    var latitude = 47.376_598
    var longitude = 8.541_175
    for index in 0..<points {
      if index % 10_000 == 0 {
        if index > 0 { append("    </trkseg>\n") }
        append("    <trkseg>\n")
      }
      latitude += 0.000_019
      longitude += 0.000_027
      let time = start + index
      let (day, secondOfDay) = (time / 86_400, time % 86_400)
      let (year, month, dayOfMonth) = civil(fromDays: day)
      let stamp =
        "\(year)-\(two(month))-\(two(dayOfMonth))T\(two(secondOfDay / 3600)):"
        + "\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60)).\(three(index % 1000))Z"
      append(
        "      <trkpt lat=\"\(decimal(latitude, 7))\" lon=\"\(decimal(longitude, 7))\">\n"
          + "        <ele>\(decimal(408 + Double(index % 700) * 0.1, 1))</ele>\n"
          + "        <time>\(stamp)</time>\n")
      if index % 10 == 0 {
        append(
          "        <extensions>\n          <gpxtpx:TrackPointExtension>\n"
            + "            <gpxtpx:hr>\(100 + index % 60)</gpxtpx:hr>\n"
            + "            <gpxtpx:speed>\(decimal(2.5 + Double(index % 20) * 0.05, 2))</gpxtpx:speed>\n"
            + "            <gpxtpx:course>\(decimal(Double(index % 3600) * 0.1, 1))</gpxtpx:course>\n"
            + "          </gpxtpx:TrackPointExtension>\n        </extensions>\n")
      }
      append("      </trkpt>\n")
    }
    append("    </trkseg>\n  </trk>\n</gpx>\n")
    return out
  }

  static func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
  static func three(_ value: Int) -> String {
    value < 10 ? "00\(value)" : value < 100 ? "0\(value)" : "\(value)"
  }
  /// `value` with `places` decimals (rounded half up), without Foundation's slow `String(format:)`.
  static func decimal(_ value: Double, _ places: Int) -> String {
    var scale = 1
    for _ in 0..<places { scale *= 10 }
    let scaled = Int((abs(value) * Double(scale)).rounded())
    var fraction = String(scaled % scale)
    while fraction.count < places { fraction = "0" + fraction }
    return (value < 0 ? "-" : "") + "\(scaled / scale)" + (places > 0 ? "." + fraction : "")
  }

  /// Civil date from days since 1970-01-01 (H. Hinnant, "chrono-Compatible Low-Level Date
  /// Algorithms", civil_from_days).
  static func civil(fromDays days: Int) -> (Int, Int, Int) {
    let shifted = days + 719_468
    let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
    let dayOfEra = shifted - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let monthFromMarch = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
    let month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
    return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
  }
}
