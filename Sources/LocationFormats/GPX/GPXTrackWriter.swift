import Foundation
import Geodesy
import LocationModel

/// Writes fixes to a GPX 1.1 file as one track of one segment, point by point, so that the file on
/// disk is a complete, valid GPX document after every point.
///
/// The trick: after each point the closing tags (`</trkseg></trk></gpx>`) are written too, and the
/// next point is written over them, point and closing tags in one `pwrite(2)` at the offset where
/// the closing tags began. The file only grows, and it never holds half a document: a process
/// killed between two points (even `kill -9`) leaves a file that ends with its last point and the
/// closing tags. With `durable`, each point is also on the disk (`fdatasync(2)`) before
/// ``append(_:)`` returns, so a power cut loses nothing written; without it a power cut may lose
/// the last seconds the kernel had not written back (``close()`` always syncs).
///
/// Each `<trkpt lat lon>` has `<ele>` (the fix's altitude above mean sea level) and `<time>` (UTC,
/// ISO 8601, with milliseconds when the time has a fraction) when the fix knows them, and the
/// speed (m/s) and course (degrees) it knows in Garmin's TrackPointExtension v2
/// (`<gpxtpx:speed>`, `<gpxtpx:course>`), which our `GPXDecoder` and other tools read back.
/// Numbers are written as decimals without an exponent (`xsd:decimal`).
///
/// A writer is not thread-safe; use it from one thread at a time.
package final class GPXTrackWriter {
  /// The file's path.
  package let path: String
  /// Whether every point is synced to the disk before ``append(_:)`` returns.
  package let durable: Bool
  /// How many points are written.
  package private(set) var pointCount = 0
  private var descriptor: Int32
  /// Where the closing tags begin: the next point is written here.
  private var bodyEnd: Int

  /// The closing tags written after every point.
  package static let tail = Array("  </trkseg>\n </trk>\n</gpx>\n".utf8)

  /// Creates (or truncates) the file and writes an empty track: a valid GPX file already.
  ///
  /// - Parameters:
  ///   - path: the file to write.
  ///   - creator: the `creator` attribute of `<gpx>` (the program).
  ///   - name: the track's `<name>`, if any.
  ///   - durable: sync each point to the disk (see the type's documentation).
  /// - Throws: `.unreadable` with the system's reason when the file cannot be created or written.
  package init(path: String, creator: String, name: String? = nil, durable: Bool = false)
    throws(FormatError)
  {
    self.path = path
    self.durable = durable
    let opened = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
    guard opened >= 0 else {
      throw FormatError(.unreadable, "cannot create the file: \(Self.reason(errno))", file: path)
    }
    descriptor = opened
    let bytes = Array(Self.header(creator: creator, name: name).utf8)
    bodyEnd = 0
    do {
      try write(bytes + Self.tail, at: 0)
      if durable { try sync() }
    } catch {
      Glibc.close(opened)
      descriptor = -1
      throw error
    }
    bodyEnd = bytes.count
  }

  /// The document up to the first point: the XML declaration, `<gpx>` (GPX 1.1 with the Garmin
  /// TrackPointExtension v2 namespace), `<trk>` with its `<name>` if any, and `<trkseg>`. Points
  /// (``trackPoint(_:)``) and ``tail`` follow; a program that writes a stream it cannot seek in
  /// (`locationctl export` to standard output) writes the three in order.
  /// - Parameters:
  ///   - creator: The `creator` attribute of `<gpx>` (the program).
  ///   - name: The track's `<name>`, if any.
  /// - Returns: The text.
  package static func header(creator: String, name: String?) -> String {
    var header = """
      <?xml version="1.0" encoding="UTF-8"?>
      <gpx version="1.1" creator="\(Self.escaped(creator))" \
      xmlns="http://www.topografix.com/GPX/1/1" \
      xmlns:gpxtpx="http://www.garmin.com/xmlschemas/TrackPointExtension/v2" \
      xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" \
      xsi:schemaLocation="http://www.topografix.com/GPX/1/1 \
      http://www.topografix.com/GPX/1/1/gpx.xsd">
       <trk>

      """
    if let name { header += "  <name>\(Self.escaped(name))</name>\n" }
    header += "  <trkseg>\n"
    return header
  }

  deinit {
    if descriptor >= 0 { Glibc.close(descriptor) }
  }

  /// Appends one point; the file is a valid GPX document with it when this returns.
  ///
  /// - Parameter fix: the point; its coordinate must be valid (`hasValidCoordinate`).
  /// - Throws: `.invalidValue` for a fix without a valid coordinate (nothing is written);
  ///   `.unreadable` when writing fails or the writer is closed.
  package func append(_ fix: Fix) throws(FormatError) {
    guard fix.hasValidCoordinate else {
      throw FormatError(.invalidValue, "a point without a valid coordinate", file: path)
    }
    // The point and the closing tags in one buffer: one allocation, one `pwrite(2)`.
    var bytes = Array(Self.trackPoint(fix).utf8)
    let pointLength = bytes.count
    bytes += Self.tail
    try write(bytes, at: bodyEnd)
    if durable { try sync() }
    bodyEnd += pointLength
    pointCount += 1
  }

  /// Syncs the file to the disk and closes it. The file is complete whether or not this is
  /// called; later appends fail.
  package func close() throws(FormatError) {
    guard descriptor >= 0 else { return }
    defer {
      Glibc.close(descriptor)
      descriptor = -1
    }
    try sync()
  }

  /// One `<trkpt>` element with its line feed; the fix's coordinate must be valid.
  package static func trackPoint(_ fix: Fix) -> String {
    // GPX's longitudeType is -180 <= lon < 180: the antimeridian is written as -180.
    let longitude = fix.longitude == 180 ? -180 : fix.longitude
    var text = "   <trkpt lat=\"\(decimal(fix.latitude))\" lon=\"\(decimal(longitude))\">"
    if let altitude = fix.altitude, altitude.isFinite { text += "<ele>\(decimal(altitude))</ele>" }
    if let time = isoTime(fix.time) { text += "<time>\(time)</time>" }
    let speed = fix.speed >= 0 && fix.speed.isFinite
    let course = fix.course >= 0 && fix.course.isFinite
    if speed || course {
      text += "<extensions><gpxtpx:TrackPointExtension>"
      if speed { text += "<gpxtpx:speed>\(decimal(fix.speed))</gpxtpx:speed>" }
      if course { text += "<gpxtpx:course>\(decimal(fix.course))</gpxtpx:course>" }
      text += "</gpxtpx:TrackPointExtension></extensions>"
    }
    return text + "</trkpt>\n"
  }

  /// A finite number as an `xsd:decimal`: Swift's shortest round-trip form when it has no
  /// exponent (`52.6171`), else nine decimals without trailing zeros (`0.000000012`).
  static func decimal(_ value: Double) -> String {
    let shortest = String(value)
    guard shortest.contains("e") else {
      return shortest.hasSuffix(".0") ? String(shortest.dropLast(2)) : shortest
    }
    var fixed = String(format: "%.9f", value)
    while fixed.hasSuffix("0") { fixed.removeLast() }
    if fixed.hasSuffix(".") { fixed.removeLast() }
    return fixed == "-0" ? "0" : fixed
  }

  /// `2024-02-02T07:15:49Z`, or `2024-02-02T07:15:49.250Z` when the time has a fraction (to the
  /// nearest millisecond); nil for a time that is not finite or not in years 0001-9999.
  static func isoTime(_ time: Double) -> String? {
    guard time.isFinite, time >= -62_135_596_800, time < 253_402_300_800 else { return nil }
    let milliseconds = Int64((time * 1000).rounded())
    let seconds = milliseconds.floorDivided(by: 1000)
    let fraction = milliseconds - seconds * 1000
    let days = seconds.floorDivided(by: 86_400)
    let ofDay = seconds - days * 86_400
    let (year, month, day) = CivilDate.date(fromDays: Int(days))
    var text = String(
      format: "%04ld-%02ld-%02ldT%02lld:%02lld:%02lld", year, month, day, ofDay / 3600,
      ofDay / 60 % 60, ofDay % 60)
    if fraction != 0 { text += String(format: ".%03lld", fraction) }
    return text + "Z"
  }

  /// Text for XML character data and attribute values.
  static func escaped(_ text: String) -> String {
    var result = ""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "&": result += "&amp;"
      case "<": result += "&lt;"
      case ">": result += "&gt;"
      case "\"": result += "&quot;"
      case "'": result += "&apos;"
      // XML 1.0 has no form for other control characters: a space stands in for them.
      case _ where scalar.value < 0x20 && scalar != "\n" && scalar != "\t": result += " "
      case "\u{FFFE}", "\u{FFFF}": result += " "
      default: result.unicodeScalars.append(scalar)
      }
    }
    return result
  }

  private func write(_ bytes: [UInt8], at offset: Int) throws(FormatError) {
    guard descriptor >= 0 else { throw FormatError(.unreadable, "the file is closed", file: path) }
    var done = 0
    while done < bytes.count {
      let written = bytes.withUnsafeBytes { buffer -> Int in
        guard let base = buffer.baseAddress else { return 0 }
        return pwrite(descriptor, base + done, buffer.count - done, off_t(offset + done))
      }
      if written < 0 {
        if errno == EINTR { continue }
        throw FormatError(.unreadable, "cannot write: \(Self.reason(errno))", file: path)
      }
      done += written
    }
  }

  private func sync() throws(FormatError) {
    guard descriptor >= 0 else { return }
    if fdatasync(descriptor) != 0, errno != EINVAL {
      throw FormatError(.unreadable, "cannot sync: \(Self.reason(errno))", file: path)
    }
  }

  private static func reason(_ code: Int32) -> String { String(cString: strerror(code)) }
}

extension Int64 {
  /// The quotient rounded toward negative infinity.
  fileprivate func floorDivided(by divisor: Int64) -> Int64 {
    let quotient = self / divisor
    return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
  }
}
