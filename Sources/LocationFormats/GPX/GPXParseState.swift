import CLibXML2
import Geodesy
import LocationModel

/// The elements the decoder cares about, recognised from their local names (any prefix).
enum GPXElement {
  case gpx
  case trk
  case trkseg
  case rte
  case trkpt
  case rtept
  case wpt
  case ele
  case time
  case speed
  case course
  case hdop
  case vdop
  case pdop
  case sat
  case fix
  case extensions
  case other

  /// Whether a NUL-terminated name equals a literal, byte by byte.
  @inline(__always)
  private static func equal(_ name: UnsafePointer<UInt8>, _ literal: StaticString) -> Bool {
    let count = literal.utf8CodeUnitCount
    let bytes = literal.utf8Start
    for index in 0..<count where name[index] != bytes[index] { return false }
    return name[count] == 0
  }

  /// Classifies a NUL-terminated local name; dispatches on the first byte, then compares bytes.
  @inline(__always)
  static func classify(_ name: UnsafePointer<UInt8>) -> GPXElement {
    switch name[0] {
    case UInt8(ascii: "t"):
      if equal(name, "trkpt") { return .trkpt }
      if equal(name, "time") { return .time }
      if equal(name, "trkseg") { return .trkseg }
      if equal(name, "trk") { return .trk }
    case UInt8(ascii: "e"):
      if equal(name, "ele") { return .ele }
      if equal(name, "extensions") { return .extensions }
    case UInt8(ascii: "r"):
      if equal(name, "rtept") { return .rtept }
      if equal(name, "rte") { return .rte }
    case UInt8(ascii: "w"):
      if equal(name, "wpt") { return .wpt }
    case UInt8(ascii: "s"):
      if equal(name, "speed") { return .speed }
      if equal(name, "sat") { return .sat }
    case UInt8(ascii: "c"):
      if equal(name, "course") { return .course }
    case UInt8(ascii: "h"):
      if equal(name, "hdop") { return .hdop }
    case UInt8(ascii: "v"):
      if equal(name, "vdop") { return .vdop }
    case UInt8(ascii: "p"):
      if equal(name, "pdop") { return .pdop }
    case UInt8(ascii: "f"):
      if equal(name, "fix") { return .fix }
    case UInt8(ascii: "g"):
      if equal(name, "gpx") { return .gpx }
    default:
      break
    }
    return .other
  }
}

/// The decoder's state while libxml2 parses: reached from the C callbacks through the `userData`
/// pointer, as a raw pointer to this struct (not a class, so that the hot callbacks pay neither
/// reference counting nor dynamic exclusivity checks).
struct GPXParseState {
  /// The parser, for line numbers; set right after the context is created.
  var context: xmlParserCtxtPtr?
  /// The file name used in errors and warnings.
  let file: String?
  /// Points decoded and not yet taken.
  var points: [GPXPoint] = []
  /// Non-fatal problems, capped at `GPXDecoder.maximumWarnings`.
  var warnings: [FormatError] = []
  /// Warnings that did not fit under the cap.
  var droppedWarnings = 0
  /// The first fatal error, after which libxml2 calls nothing more.
  var fatal: FormatError?
  /// Root attributes.
  var version: String?
  var creator: String?
  /// Points emitted so far (valid ones).
  var pointCount = 0
  /// The local name of the document's root element, once seen.
  var rootElement: String?

  // Document structure.
  private var trackIndex = -1
  private var routeIndex = -1
  private var segmentIndex = -1

  // The point being read. `pointDepth` is 0 outside a point, 1 at the point element itself.
  private var pointDepth = 0
  private var skip = false
  /// The point itself: its values are written in place as they are read, and it is appended
  /// whole at its end (no `Fix`, then `GPXPoint`, built from a field for each value).
  private var point: GPXPoint
  private var extensionsDepth = 0

  // Text capture of one child element.
  private var capture = GPXElement.other
  private var captureDepth = 0
  /// Bytes of the value being captured: a fixed buffer (freed by `deallocate()`), so that text
  /// events cost a bounded byte copy and no array bookkeeping.
  private let textBuffer: UnsafeMutablePointer<UInt8>
  private var textCount = 0
  private var text: UnsafeBufferPointer<UInt8> {
    UnsafeBufferPointer(start: textBuffer, count: textCount)
  }

  init(file: String?) {
    self.file = file
    point = GPXPoint(
      kind: .track, track: 0, segment: 0,
      fix: Fix(latitude: 0, longitude: 0, horizontalAccuracy: 0, time: .nan, source: file ?? ""),
      time: nil, line: 0)
    textBuffer = UnsafeMutablePointer<UInt8>.allocate(capacity: Self.textCapacity)
    // Initialized whole: the number reader may load bytes past a value (`textCapacity`).
    textBuffer.initialize(repeating: 0, count: Self.textCapacity)
  }

  /// Frees the text buffer; called once, by the decoder's deinit.
  func deallocate() {
    textBuffer.deallocate()
  }

  private var currentLine: Int { Int(clx_current_line(context)) }

  mutating func warn(_ error: FormatError) {
    if warnings.count < GPXDecoder.maximumWarnings {
      warnings.append(error)
    } else {
      droppedWarnings += 1
    }
  }

  // MARK: SAX events

  @inline(__always)
  mutating func startElement(
    _ name: UnsafePointer<UInt8>, attributeCount: Int,
    attributes: UnsafeMutablePointer<UnsafePointer<UInt8>?>?
  ) {
    let element = GPXElement.classify(name)
    if pointDepth > 0 {
      pointDepth += 1
      if extensionsDepth > 0 { extensionsDepth += 1 }
      switch element {
      case .ele, .time, .hdop, .vdop, .pdop, .sat, .fix:
        if pointDepth == 2 { beginCapture(element) }
      case .speed, .course:
        // GPX 1.0 has them as children of the point; Garmin's TrackPointExtension v2 (and OsmAnd)
        // put them somewhere under <extensions>, with whatever prefix.
        if pointDepth == 2 || extensionsDepth > 0 { beginCapture(element) }
      case .extensions:
        if pointDepth == 2 { extensionsDepth = 1 }
      case .gpx, .trk, .trkseg, .rte, .trkpt, .rtept, .wpt, .other:
        break
      }
      return
    }
    if rootElement == nil { rootElement = String(cString: name) }
    switch element {
    case .trkpt: beginPoint(.track, attributeCount, attributes)
    case .rtept: beginPoint(.route, attributeCount, attributes)
    case .wpt: beginPoint(.waypoint, attributeCount, attributes)
    case .trk:
      trackIndex += 1
      segmentIndex = -1
    case .trkseg: segmentIndex += 1
    case .rte: routeIndex += 1
    case .gpx: readRootAttributes(attributeCount, attributes)
    case .ele, .time, .speed, .course, .hdop, .vdop, .pdop, .sat, .fix, .extensions, .other:
      break
    }
  }

  mutating func endElement() {
    guard pointDepth > 0 else { return }
    if capture != .other && captureDepth == pointDepth { endCapture() }
    if extensionsDepth > 0 { extensionsDepth -= 1 }
    pointDepth -= 1
    if pointDepth == 0 { endPoint() }
  }

  mutating func characters(_ bytes: UnsafePointer<UInt8>, _ count: Int) {
    guard capture != .other else { return }
    // A value longer than any number or time is kept short: it will fail to parse (and be
    // reported) without letting a hostile file grow the buffer without bound.
    let copied = min(count, Self.maximumValueLength + 1 - textCount)
    if copied > 0 {
      (textBuffer + textCount).update(from: bytes, count: copied)
      textCount += copied
    }
  }

  /// The longest child value accepted, in bytes; a longer one is ignored with a warning.
  static let maximumValueLength = 256
  /// The text buffer's size: a value that is too long, and one more byte, and eight bytes more
  /// for the number reader's eight-byte loads.
  static let textCapacity = maximumValueLength + 1 + 8

  // MARK: Points

  /// The bytes of attribute `index` (libxml2 passes five pointers per attribute: local name,
  /// prefix, URI, value start, value end).
  @inline(__always)
  private static func attribute(
    _ attributes: UnsafeMutablePointer<UnsafePointer<UInt8>?>, _ index: Int
  ) -> (
    name: UnsafePointer<UInt8>, prefix: UnsafePointer<UInt8>?, value: UnsafeBufferPointer<UInt8>
  )? {
    let base = attributes + 5 * index
    guard let name = base[0], let start = base[3], let end = base[4] else { return nil }
    return (name, base[1], UnsafeBufferPointer(start: start, count: end - start))
  }

  private mutating func beginPoint(
    _ kind: GPXPoint.Kind, _ attributeCount: Int,
    _ attributes: UnsafeMutablePointer<UnsafePointer<UInt8>?>?
  ) {
    pointDepth = 1
    extensionsDepth = 0
    point.kind = kind
    point.line = currentLine
    point.fix.altitude = nil
    point.time = nil
    point.fix.speed = -1
    point.fix.course = -1
    point.hdop = nil
    point.vdop = nil
    point.pdop = nil
    point.fix.satellitesUsed = nil
    point.fix.quality = .autonomous
    var lat: Double?
    var lon: Double?
    var latSeen = false
    var lonSeen = false
    if let attributes {
      for index in 0..<attributeCount {
        guard let attribute = Self.attribute(attributes, index), attribute.prefix == nil else {
          continue
        }
        let name = attribute.name
        if name[0] == UInt8(ascii: "l") && name[1] == UInt8(ascii: "a")
          && name[2] == UInt8(ascii: "t")
          && name[3] == 0
        {
          latSeen = true
          lat = ByteScalars.decimal(attribute.value, readable: readable(attribute.value))
        } else if name[0] == UInt8(ascii: "l") && name[1] == UInt8(ascii: "o")
          && name[2] == UInt8(ascii: "n") && name[3] == 0
        {
          lonSeen = true
          lon = ByteScalars.decimal(attribute.value, readable: readable(attribute.value))
        }
      }
    }
    skip = true
    // The usual case first, with nothing to say.
    if let lat, let lon, abs(lat) <= 90, abs(lon) <= 180 {
      point.fix.latitude = lat
      point.fix.longitude = lon
      skip = false
      return
    }
    let what = Self.describe(kind)
    if !latSeen || !lonSeen {
      let missing = latSeen ? "lon" : "lat"
      warn(
        FormatError(
          .missingField, "\(what) skipped: no \(missing) attribute", file: file, line: point.line))
    } else if let lat, lon != nil {
      let which = abs(lat) > 90 ? "latitude" : "longitude"
      warn(
        FormatError(
          .invalidValue, "\(what) skipped: \(which) out of range", file: file, line: point.line))
    } else {
      let which = lat == nil ? "latitude" : "longitude"
      warn(
        FormatError(
          .invalidValue, "\(what) skipped: \(which) is not a decimal number", file: file,
          line: point.line))
    }
  }

  /// How many bytes from an attribute value's start may be loaded (at least its count).
  @inline(__always)
  private func readable(_ value: UnsafeBufferPointer<UInt8>) -> Int {
    guard let start = value.baseAddress else { return 0 }
    return max(value.count, clx_readable_from(context, start))
  }

  private static func describe(_ kind: GPXPoint.Kind) -> String {
    switch kind {
    case .track: return "track point"
    case .route: return "route point"
    case .waypoint: return "waypoint"
    }
  }

  @inline(__always)
  private mutating func endPoint() {
    capture = .other
    extensionsDepth = 0
    guard !skip else { return }
    var horizontalAccuracy = GPXDecoder.defaultHorizontalAccuracy
    if let hdop = point.hdop {
      horizontalAccuracy = hdop * GPXDecoder.userEquivalentRangeError
    } else if let pdop = point.pdop {
      horizontalAccuracy = pdop * GPXDecoder.userEquivalentRangeError
    }
    var verticalAccuracy = -1.0
    if point.fix.altitude != nil {
      if let vdop = point.vdop {
        verticalAccuracy = vdop * GPXDecoder.userEquivalentRangeError
      } else if let pdop = point.pdop {
        verticalAccuracy = pdop * GPXDecoder.userEquivalentRangeError
      } else {
        verticalAccuracy = GPXDecoder.defaultVerticalAccuracy
      }
    }
    point.fix.horizontalAccuracy = horizontalAccuracy
    point.fix.verticalAccuracy = verticalAccuracy
    point.fix.time = point.time ?? .nan
    switch point.kind {
    case .track:
      point.track = max(trackIndex, 0)
      point.segment = max(segmentIndex, 0)
    case .route:
      point.track = max(routeIndex, 0)
      point.segment = 0
    case .waypoint:
      point.track = 0
      point.segment = 0
    }
    points.append(point)
    pointCount += 1
  }

  // MARK: Child values

  private mutating func beginCapture(_ element: GPXElement) {
    capture = element
    captureDepth = pointDepth
    textCount = 0
  }

  private mutating func endCapture() {
    let element = capture
    capture = .other
    guard !skip else { return }
    guard textCount <= Self.maximumValueLength else {
      warn(valueWarning("a value longer than \(Self.maximumValueLength) bytes"))
      return
    }
    switch element {
    case .time:
      let value = ByteScalars.iso8601(text)
      if let value {
        point.time = value
      } else {
        warn(valueWarning("time is not an ISO 8601 date and time"))
      }
    case .fix:
      point.fix.quality = fixQuality()
    case .sat:
      let value = ByteScalars.decimal(text)
      if let value, value >= 0, value <= 1000, value == value.rounded() {
        point.fix.satellitesUsed = Int(value)
      } else {
        warn(valueWarning("sat is not a satellite count"))
      }
    case .ele, .speed, .course, .hdop, .vdop, .pdop:
      let parsed = ByteScalars.decimal(text, readable: Self.textCapacity)
      guard let value = parsed, value.isFinite else {
        warn(valueWarning("\(Self.name(of: element)) is not a decimal number"))
        return
      }
      store(value, for: element)
    case .gpx, .trk, .trkseg, .rte, .trkpt, .rtept, .wpt, .extensions, .other:
      break
    }
  }

  private mutating func store(_ value: Double, for element: GPXElement) {
    switch element {
    case .ele: point.fix.altitude = value
    case .speed:
      if value >= 0 { point.fix.speed = value } else { warn(valueWarning("speed is negative")) }
    case .course:
      // Our rule: a course outside 0..<360 is brought into it (some loggers write 360 or -90).
      let wrapped = value.truncatingRemainder(dividingBy: 360)
      point.fix.course = wrapped < 0 ? wrapped + 360 : wrapped
    case .hdop, .vdop, .pdop:
      guard value >= 0 else {
        warn(valueWarning("\(Self.name(of: element)) is negative"))
        return
      }
      if element == .hdop {
        point.hdop = value
      } else if element == .vdop {
        point.vdop = value
      } else {
        point.pdop = value
      }
    case .gpx, .trk, .trkseg, .rte, .trkpt, .rtept, .wpt, .time, .sat, .fix, .extensions, .other:
      break
    }
  }

  private static func name(of element: GPXElement) -> String {
    switch element {
    case .ele: return "ele"
    case .speed: return "speed"
    case .course: return "course"
    case .hdop: return "hdop"
    case .vdop: return "vdop"
    case .pdop: return "pdop"
    case .gpx, .trk, .trkseg, .rte, .trkpt, .rtept, .wpt, .time, .sat, .fix, .extensions, .other:
      return "value"
    }
  }

  private func valueWarning(_ message: String) -> FormatError {
    FormatError(
      .invalidValue, "\(Self.describe(point.kind)): \(message); ignored", file: file,
      line: point.line)
  }

  /// GPX 1.1 `fixType`: none, 2d, 3d, dgps, pps.
  private mutating func fixQuality() -> FixQuality {
    let word = String(decoding: text, as: UTF8.self).trimmingXMLSpace()
    switch word {
    case "none": return .none
    case "2d", "3d": return .autonomous
    case "dgps": return .differential
    case "pps": return .precise
    default:
      warn(valueWarning("fix is not one of none, 2d, 3d, dgps, pps"))
      return .autonomous
    }
  }

  private mutating func readRootAttributes(
    _ attributeCount: Int, _ attributes: UnsafeMutablePointer<UnsafePointer<UInt8>?>?
  ) {
    guard let attributes else { return }
    for index in 0..<attributeCount {
      guard let attribute = Self.attribute(attributes, index), attribute.prefix == nil else {
        continue
      }
      let name = String(cString: attribute.name)
      let value = Self.attributeText(attribute.value)
      if name == "version" { version = value } else if name == "creator" { creator = value }
    }
  }

  /// An attribute's value as the file means it. Without entity substitution (off, against
  /// external entities), libxml2's SAX2 interface hands an `&` the file escaped (`&amp;`,
  /// `&#38;`) over as the five bytes `&#38;`, so that it stays apart from an entity reference it
  /// did not expand (`&name;`, kept as written); every other character reference is decoded.
  static func attributeText(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
    var text: [UInt8] = []
    text.reserveCapacity(bytes.count)
    var index = 0
    while index < bytes.count {
      if bytes[index] == UInt8(ascii: "&"), index + 4 < bytes.count,
        bytes[index + 1] == UInt8(ascii: "#"), bytes[index + 2] == UInt8(ascii: "3"),
        bytes[index + 3] == UInt8(ascii: "8"), bytes[index + 4] == UInt8(ascii: ";")
      {
        text.append(UInt8(ascii: "&"))
        index += 5
      } else {
        text.append(bytes[index])
        index += 1
      }
    }
    return String(decoding: text, as: UTF8.self)
  }
}

extension String {
  /// The string without leading and trailing whitespace.
  func trimmingXMLSpace() -> String {
    guard let first = firstIndex(where: { !$0.isWhitespace }),
      let last = lastIndex(where: { !$0.isWhitespace })
    else { return "" }
    return String(self[first...last])
  }
}
