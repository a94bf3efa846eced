import CLibXML2
import Foundation
import Geodesy

/// A streaming GPX 1.0/1.1 decoder on libxml2's SAX2 parser.
///
/// Feed it the file in chunks of any size (``feed(_:)-(UnsafeRawBufferPointer)``), take the points
/// decoded so far (``takePoints()``), and call ``finish()`` at the end: memory stays bounded by
/// the chunk size and the points not yet taken, so a 1 GB recording never sits in memory.
/// ``decode(data:file:)`` and ``decode(path:)`` do all of it for a whole file.
///
/// What is read: `<trkpt>`, `<rtept>` and `<wpt>` with their `lat`/`lon` attributes; the
/// children `<ele>`, `<time>`, `<hdop>`, `<vdop>`, `<pdop>`, `<sat>`, `<fix>`; `<speed>` (m/s)
/// and `<course>` (degrees) either as children of the point (GPX 1.0) or anywhere inside its
/// `<extensions>` with any namespace prefix (Garmin TrackPointExtension v2, OsmAnd). Everything
/// else is skipped. Every kind of point is decoded, in document order; which of them make the path
/// a replay plays (the tracks, else the routes, else the waypoints) is ``GPXPath``'s rule.
///
/// Rules of our own:
/// - Horizontal accuracy (68 %) is `hdop` times ``userEquivalentRangeError``; without `hdop`,
///   `pdop` times it; without either, ``defaultHorizontalAccuracy``. Vertical accuracy is the same
///   with `vdop`, then `pdop`, then ``defaultVerticalAccuracy``, and -1 when there is no `<ele>`.
/// - Speed and course are -1 when the file has none; the decoder does not derive them from
///   neighbouring points. A course outside 0..<360 is wrapped into it.
/// - A point without `<time>` has `time` nil and `fix.time` NaN.
/// - `<fix>` maps `none` to `.none`, `2d`/`3d` to `.autonomous`, `dgps` to `.differential`, `pps`
///   to `.precise`; without `<fix>` the quality is `.autonomous`. `isSimulated` stays false.
/// - A point whose `lat` or `lon` is missing, not a decimal number (`NaN` included) or out of
///   range is skipped with a warning; a child value that does not parse is ignored with a warning.
///   The rest of the file is still used.
/// - XML that is not well-formed stops decoding with `.malformed` naming libxml2's line. Points
///   decoded before the error remain available from ``takePoints()``.
///
/// Safety: external entities and DTDs are never loaded and nothing touches the network. The SAX
/// handler has no entity, DTD or resolver callbacks (so entities declared in a DOCTYPE are never
/// recorded, and a reference to one is an error, which also defeats "billion laughs"), and the
/// parser runs with `XML_PARSE_NONET` and without `XML_PARSE_NOENT`. libxml2 prints nothing:
/// its diagnostics arrive through the structured error callback and become errors or warnings.
///
/// A decoder is not thread-safe; use it from one task or thread at a time.
package final class GPXDecoder {
  /// The user equivalent range error (one sigma) that multiplies a dilution of precision, in
  /// metres: 5 m, a typical figure for single-frequency civil GPS (satellite clock and ephemeris,
  /// ionosphere, troposphere, multipath and receiver noise combined).
  package static let userEquivalentRangeError = 5.0
  /// The horizontal accuracy given to a point that has neither `hdop` nor `pdop`: 5 m, a
  /// consumer receiver with a clear view of the sky.
  package static let defaultHorizontalAccuracy = 5.0
  /// The vertical accuracy given to a point with `<ele>` but neither `vdop` nor `pdop`: 10 m
  /// (GNSS heights are typically about twice as uncertain as horizontal positions).
  package static let defaultVerticalAccuracy = 10.0
  /// The most warnings a decoder keeps; further ones are counted in one last warning.
  package static let maximumWarnings = 1000
  /// The largest piece handed to libxml2 in one call (its length parameter is a C `int`).
  static let maximumPiece = 1 << 20

  /// The file name used in errors and in each fix's `source`, if any.
  package let file: String?
  private let state: UnsafeMutablePointer<GPXParseState>
  private let context: xmlParserCtxtPtr?
  private var finished = false
  private var bytesFed = 0

  /// Creates a decoder.
  ///
  /// - Parameter file: the path or URL named in errors and used as each fix's `source`.
  package convenience init(file: String? = nil) {
    self.init(file: file, wholeDocument: nil)
  }

  /// Creates a decoder: a push parser fed by ``feed(_:)-(UnsafeRawBufferPointer)``, or, given a
  /// whole document, a pull parser over a copy of it for ``parseWholeDocument()`` (no look-ahead
  /// for construct ends and no buffer shifting, which makes it faster).
  private init(file: String?, wholeDocument: UnsafeRawBufferPointer?) {
    self.file = file
    GPXDecoder.initializeLibXML
    state = UnsafeMutablePointer<GPXParseState>.allocate(capacity: 1)
    state.initialize(to: GPXParseState(file: file))
    var handler = GPXDecoder.makeHandler()
    let userData = UnsafeMutableRawPointer(state)
    var created: xmlParserCtxtPtr?
    if let wholeDocument, let base = wholeDocument.baseAddress {
      created = xmlCreateMemoryParserCtxt(
        base.assumingMemoryBound(to: CChar.self), Int32(wholeDocument.count))
      if let created, let sax = created.pointee.sax {
        // The context owns a full-size handler (SAX2 defaults); ours replaces it in place.
        sax.pointee = handler
        created.pointee.userData = userData
      }
      bytesFed = wholeDocument.count
      finished = true
    } else {
      created = xmlCreatePushParserCtxt(&handler, userData, nil, 0, nil)
    }
    context = created
    if let created {
      let options =
        XML_PARSE_NONET.rawValue | XML_PARSE_NOERROR.rawValue
        | XML_PARSE_NOWARNING.rawValue
      xmlCtxtUseOptions(created, Int32(options))
      state.pointee.context = created
    }
  }

  /// Parses the whole document given at creation, in one pass.
  private func parseWholeDocument() throws(FormatError) {
    if let fatal = state.pointee.fatal { throw fatal }
    guard let context else {
      throw FormatError(.unreadable, "libxml2 could not create a parser", file: file)
    }
    let previous = clx_silence_begin()
    xmlParseDocument(context)
    clx_silence_end(previous)
    if let fatal = state.pointee.fatal { throw fatal }
  }

  deinit {
    if let context { xmlFreeParserCtxt(context) }
    state.pointee.deallocate()
    state.deinitialize(count: 1)
    state.deallocate()
  }

  /// libxml2's one-time global initialisation, run before the first parser is made (its
  /// documentation asks for this in programs that may parse from several threads).
  private static let initializeLibXML: Void = { xmlInitParser() }()

  /// The SAX2 handler: element start and end, text, and structured errors; nothing else.
  private static func makeHandler() -> xmlSAXHandler {
    var handler = xmlSAXHandler()
    handler.initialized = clx_sax2_magic()
    handler.startElementNs = { userData, localName, _, _, _, _, attributeCount, _, attributes in
      guard let userData, let localName else { return }
      userData.assumingMemoryBound(to: GPXParseState.self).pointee.startElement(
        localName, attributeCount: Int(attributeCount), attributes: attributes)
    }
    handler.endElementNs = { userData, _, _, _ in
      guard let userData else { return }
      userData.assumingMemoryBound(to: GPXParseState.self).pointee.endElement()
    }
    handler.characters = { userData, bytes, count in
      guard let userData, let bytes else { return }
      userData.assumingMemoryBound(to: GPXParseState.self).pointee.characters(bytes, Int(count))
    }
    handler.cdataBlock = handler.characters
    // Whitespace between elements goes to the same callback; libxml2 then skips its "are these
    // blanks ignorable?" test, which needs a tree this decoder does not build.
    handler.ignorableWhitespace = handler.characters
    handler.serror = { userData, error in
      guard let userData, let error else { return }
      userData.assumingMemoryBound(to: GPXParseState.self).pointee.libxmlError(error.pointee)
    }
    return handler
  }

  /// Decodes the next chunk of the file. Chunks may split the XML anywhere.
  ///
  /// - Parameter bytes: the next bytes of the file.
  /// - Throws: `.malformed` (with libxml2's line) when the XML is not well-formed; every later
  ///   call throws the same error.
  package func feed(_ bytes: UnsafeRawBufferPointer) throws(FormatError) {
    try checkUsable()
    guard let context, let base = bytes.baseAddress else { return }
    var offset = 0
    while offset < bytes.count {
      let count = min(bytes.count - offset, GPXDecoder.maximumPiece)
      let piece = base.advanced(by: offset).assumingMemoryBound(to: CChar.self)
      let previous = clx_silence_begin()
      xmlParseChunk(context, piece, Int32(count), 0)
      clx_silence_end(previous)
      offset += count
      bytesFed += count
      if let fatal = state.pointee.fatal { throw fatal }
    }
  }

  /// Decodes the next chunk of the file. Chunks may split the XML anywhere.
  ///
  /// - Parameter bytes: the next bytes of the file.
  /// - Throws: `.malformed` (with libxml2's line) when the XML is not well-formed.
  package func feed(_ bytes: [UInt8]) throws(FormatError) {
    let result = bytes.withUnsafeBytes { buffer in
      Result { () throws(FormatError) in try feed(buffer) }
    }
    try result.get()
  }

  /// Tells the decoder that the file ended, and decodes what was held back.
  ///
  /// - Throws: `.malformed` when the XML is not well-formed or ends early (a truncated file);
  ///   `.empty` when no bytes were fed at all.
  package func finish() throws(FormatError) {
    try checkUsable()
    finished = true
    if bytesFed == 0 {
      let error = FormatError(.empty, "the file is empty", file: file)
      state.pointee.fatal = error
      throw error
    }
    guard let context else { return }
    let previous = clx_silence_begin()
    xmlParseChunk(context, nil, 0, 1)
    clx_silence_end(previous)
    if let fatal = state.pointee.fatal { throw fatal }
  }

  private func checkUsable() throws(FormatError) {
    if let fatal = state.pointee.fatal { throw fatal }
    if context == nil {
      let error = FormatError(.unreadable, "libxml2 could not create a parser", file: file)
      state.pointee.fatal = error
      throw error
    }
    if finished {
      throw FormatError(.unreadable, "the decoder was already finished", file: file)
    }
  }

  /// Returns the points decoded since the last call, in document order, and forgets them.
  package func takePoints() -> [GPXPoint] {
    let points = state.pointee.points
    state.pointee.points = []
    // The next chunk likely holds about as many points: room for them up front, and an eighth
    // more, so that the array does not grow (copying itself) during the chunk. Exactly as many
    // made every chunk with one point more than the last copy the whole array once.
    if !finished { state.pointee.points.reserveCapacity(points.count + points.count / 8 + 16) }
    return points
  }

  /// The number of valid points decoded so far (taken or not).
  package var pointCount: Int { state.pointee.pointCount }

  /// Warnings so far: skipped points, ignored values and libxml2's non-fatal diagnostics. When
  /// more than ``maximumWarnings`` occurred, a last warning says how many were not kept.
  package var warnings: [FormatError] {
    var warnings = state.pointee.warnings
    let dropped = state.pointee.droppedWarnings
    if dropped > 0 {
      warnings.append(FormatError(.invalidValue, "\(dropped) more warnings not kept", file: file))
    }
    return warnings
  }

  /// The `version` attribute of the root `<gpx>` element, once it has been read.
  package var version: String? { state.pointee.version }
  /// The `creator` attribute of the root `<gpx>` element, once it has been read.
  package var creator: String? { state.pointee.creator }

  /// The error that stopped decoding, if any.
  package var error: FormatError? { state.pointee.fatal }

  /// Fails with `.empty` when the finished document held no valid point.
  func checkNotEmpty() throws(FormatError) {
    guard state.pointee.pointCount == 0 else { return }
    var message = "no trkpt, rtept or wpt with valid coordinates"
    if let root = state.pointee.rootElement, root != "gpx" {
      message += " (the root element is <\(root)>, not <gpx>)"
    } else if !state.pointee.warnings.isEmpty {
      message += " (\(state.pointee.warnings.count + state.pointee.droppedWarnings) skipped)"
    }
    throw FormatError(.empty, message, file: file)
  }

  /// Decodes a whole GPX file held in memory.
  ///
  /// - Parameters:
  ///   - data: the file's bytes.
  ///   - file: the path or URL named in errors and used as each fix's `source`.
  /// - Returns: the points in document order, the warnings, and the root's version and creator.
  /// - Throws: `.malformed` for XML that is not well-formed (including a truncated file);
  ///   `.empty` for an empty file or one without a single valid point.
  package static func decode(data: [UInt8], file: String? = nil) throws(FormatError)
    -> GPXDocument
  {
    if data.isEmpty { throw FormatError(.empty, "the file is empty", file: file) }
    let decoder: GPXDecoder
    if data.count <= Int(Int32.max) {
      decoder = data.withUnsafeBytes { GPXDecoder(file: file, wholeDocument: $0) }
      // Room up front for as many points as a file of typical density holds (a track point with
      // <ele> and <time> takes 100 to 200 bytes), so that a large file's array does not grow,
      // copying itself, a dozen times. Pages never written are never made resident.
      decoder.state.pointee.points.reserveCapacity(data.count / 128)
      try decoder.parseWholeDocument()
    } else {
      decoder = GPXDecoder(file: file)
      try decoder.feed(data)
      try decoder.finish()
    }
    try decoder.checkNotEmpty()
    return GPXDocument(
      points: decoder.takePoints(), warnings: decoder.warnings, version: decoder.version,
      creator: decoder.creator)
  }

  /// Decodes a GPX file from disk, reading it in chunks (the file is never held in memory whole;
  /// the points are).
  ///
  /// - Parameter path: the file's path, also named in errors and used as each fix's `source`.
  /// - Returns: the points in document order, the warnings, and the root's version and creator.
  /// - Throws: `.unreadable` when the file cannot be opened or read; otherwise as
  ///   ``decode(data:file:)``.
  package static func decode(path: String) throws(FormatError) -> GPXDocument {
    let reader = try GPXFileReader(path: path)
    var points: [GPXPoint] = []
    while let point = try reader.next() { points.append(point) }
    return GPXDocument(
      points: points, warnings: reader.warnings, version: reader.version, creator: reader.creator)
  }

  /// Counts the valid points of a GPX file by kind, reading it in chunks and keeping none of them
  /// (for a program that tells its user what a replay of the file leaves out).
  ///
  /// - Parameter path: the file's path, also named in errors.
  /// - Returns: how many valid track points, route points and waypoints the file holds.
  /// - Throws: as ``decode(path:)``.
  package static func countPoints(path: String) throws(FormatError) -> GPXPointCounts {
    let reader = try GPXFileReader(path: path)
    var counts = GPXPointCounts()
    while let point = try reader.next() { counts[point.kind] += 1 }
    return counts
  }
}

extension GPXParseState {
  /// Receives a libxml2 diagnostic: fatal errors stop decoding, the rest become warnings.
  mutating func libxmlError(_ error: xmlError) {
    var message = error.message.map { String(cString: $0) } ?? "unknown XML error"
    while message.last?.isWhitespace == true { message.removeLast() }
    let line = error.line > 0 ? Int(error.line) : nil
    if error.level == XML_ERR_FATAL {
      if fatal == nil {
        fatal = FormatError(.malformed, "not well-formed XML: \(message)", file: file, line: line)
      }
    } else {
      warn(FormatError(.malformed, "XML: \(message)", file: file, line: line))
    }
  }
}
