/// Decodes gpsd's JSON protocol (gpsd_json(5)): one JSON object per line.
///
/// A pure parser: bytes in, `GPSDMessage` values out, no I/O and no clock.
///
/// Rules (ours):
/// - **Lines.** Lines end at LF; a CR before it, and spaces, tabs and NULs at either end, are
///   ignored. `decode(bytes:)` takes any chunking and keeps a partial line between calls. A line
///   longer than `maximumLineLength` bytes is discarded up to its line feed and counted.
/// - **Objects.** Each line must be one JSON object (RFC 8259, strict: no NaN, no trailing
///   commas, no comments) with a string `class` member; anything else is garbage, counted, and
///   never stops the stream. Blank lines and lines starting with `#` (comments in recorded logs)
///   are counted as other lines.
/// - **Members.** A member that is absent is nil; one that is present but unusable (wrong type,
///   not finite, out of range, an unparseable time) is nil too and named in the message's
///   `invalidFields`, and counted. The rest of the object is kept.
package struct GPSDDecoder: Sendable {
  /// Lines longer than this many bytes are discarded (gpsd's own longest reports, SKY with every
  /// satellite of four constellations, stay under 10 KiB).
  package static let maximumLineLength = 65_536

  /// What has been decoded and skipped so far.
  package private(set) var statistics = GPSDStatistics()

  private var partial: [UInt8] = []
  private var partialOverlong = false

  /// Creates a decoder.
  package init() {}

  /// Decodes a chunk of a stream. Lines may be split anywhere between chunks.
  /// - Parameter bytes: the next bytes of the stream.
  /// - Returns: the messages of the lines the chunk completed, in order.
  package mutating func decode(bytes: UnsafeRawBufferPointer) -> [GPSDMessage] {
    var out: [GPSDMessage] = []
    let buffer = bytes.bindMemory(to: UInt8.self)
    var start = 0
    while start < buffer.count {
      guard let newline = buffer[start...].firstIndex(of: 0x0A) else {
        appendPartial(UnsafeBufferPointer(rebasing: buffer[start...]))
        break
      }
      if partial.isEmpty && !partialOverlong {
        if newline - start > Self.maximumLineLength {
          countOverlong()
        } else {
          handle(line: UnsafeBufferPointer(rebasing: buffer[start..<newline]), &out)
        }
      } else {
        appendPartial(UnsafeBufferPointer(rebasing: buffer[start..<newline]))
        finishPartial(&out)
      }
      start = newline + 1
    }
    return out
  }

  /// Decodes a chunk of a stream held in an array.
  /// - Parameter bytes: the next bytes of the stream.
  /// - Returns: the messages of the lines the chunk completed, in order.
  package mutating func decode(_ bytes: [UInt8]) -> [GPSDMessage] {
    bytes.withUnsafeBytes { decode(bytes: $0) }
  }

  /// Ends the stream: decodes a last line that has no line feed.
  /// - Returns: its message, if it held one.
  package mutating func finish() -> [GPSDMessage] {
    var out: [GPSDMessage] = []
    if !partial.isEmpty || partialOverlong { finishPartial(&out) }
    return out
  }

  /// Forgets a partial line (after a reconnection: the new stream starts on a line boundary).
  package mutating func reset() {
    partial.removeAll(keepingCapacity: true)
    partialOverlong = false
  }

  /// A copy of the decoder for a rehearsal (`GPSDSession.rehearse`): it decodes the last read's
  /// bytes again with no partial line before them.
  package var rehearsal: GPSDDecoder {
    var copy = self
    copy.partial = []
    copy.partialOverlong = false
    return copy
  }

  /// Decodes one line on its own.
  /// - Parameter line: the text of one line, with or without its line feed.
  /// - Returns: the message.
  /// - Throws: `FormatError` (`.malformed`) when the line is not a JSON object with a string
  ///   `class`; the message says why and at which byte.
  package static func message(line: String) throws(FormatError) -> GPSDMessage {
    var bytes = Array(line.utf8)
    if bytes.last == 0x0A { bytes.removeLast() }
    let result = bytes.withUnsafeBufferPointer { buffer in
      Result { () throws(FormatError) -> GPSDMessage in try message(trimmed(buffer)) }
    }
    return try result.get()
  }

  // MARK: Lines

  private mutating func appendPartial(_ bytes: UnsafeBufferPointer<UInt8>) {
    if partialOverlong { return }
    if partial.count + bytes.count > Self.maximumLineLength {
      partialOverlong = true
      partial.removeAll(keepingCapacity: false)
      return
    }
    partial.append(contentsOf: bytes)
  }

  private mutating func finishPartial(_ out: inout [GPSDMessage]) {
    if partialOverlong {
      countOverlong()
    } else {
      let line = partial
      line.withUnsafeBufferPointer { handle(line: $0, &out) }
    }
    partial.removeAll(keepingCapacity: true)
    partialOverlong = false
  }

  private mutating func countOverlong() {
    statistics.lines += 1
    statistics.overlongLines += 1
    statistics.noteBad("line longer than \(Self.maximumLineLength) bytes")
  }

  private static func isPadding(_ byte: UInt8) -> Bool {
    byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x00
  }

  private static func trimmed(_ line: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
    var start = 0
    var end = line.count
    while start < end && isPadding(line[start]) { start += 1 }
    while end > start && isPadding(line[end - 1]) { end -= 1 }
    return UnsafeBufferPointer(rebasing: line[start..<end])
  }

  private static func message(_ text: UnsafeBufferPointer<UInt8>) throws(FormatError)
    -> GPSDMessage
  {
    let value: GPSDJSONValue
    do {
      value = try GPSDJSONParser.parse(text)
    } catch {
      throw FormatError(.malformed, "not JSON: \(error.reason) at byte \(error.offset + 1)")
    }
    guard case .object(let members) = value else {
      throw FormatError(.malformed, "not a JSON object")
    }
    guard let message = GPSDMessage.decode(members) else {
      throw FormatError(.missingField, "JSON object without a string 'class'")
    }
    return message
  }

  private mutating func handle(line: UnsafeBufferPointer<UInt8>, _ out: inout [GPSDMessage]) {
    statistics.lines += 1
    let text = Self.trimmed(line)
    if text.isEmpty || text[0] == UInt8(ascii: "#") {
      statistics.otherLines += 1
      return
    }
    let message: GPSDMessage
    do {
      message = try Self.message(text)
    } catch {
      statistics.garbageLines += 1
      statistics.noteBad(error.message)
      return
    }
    statistics.count(message)
    out.append(message)
  }
}
