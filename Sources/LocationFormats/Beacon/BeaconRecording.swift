import LocationModel

/// A recording of Bluetooth LE advertisements: JSON lines, one advertisement an object a line.
///
/// ```
/// # office, synthetic: scripts/make-beacon-fixture.py
/// {"time": 1764662400.125, "address": "F0:0D:12:34:56:78", "rssi": -67,
///  "manufacturer": {"76": "0215e2c56db5dffb48d2b060d0f5a71096e000010002c5"}}
/// ```
/// (one line in the file). The format is our own; its fields are what BlueZ reports of a device
/// (`org.bluez.Device1`, BlueZ's `doc/org.bluez.Device.rst`):
/// - `time`: when it was heard, wall-clock seconds since 1970-01-01T00:00:00Z, fractional; finite;
/// - `address`: the sender (`Address`), a non-empty string;
/// - `rssi`: the received signal strength in dBm (`RSSI`), an integer in ``rssiRange``;
/// - `manufacturer`: `ManufacturerData`, an object whose keys are company identifiers (Bluetooth
///   SIG "Assigned Numbers") written in decimal (`"76"` is Apple, 0x004C) and whose values are the
///   bytes after the company identifier in hexadecimal (an even number of digits; written in lower
///   case, read in either case). An empty object is a device without manufacturer data.
///
/// Other members are ignored (room for more fields). A line whose first non-blank character is `#`
/// is a comment (a header naming where the recording came from); blank lines are ignored; a line
/// may end in CR LF; a UTF-8 byte-order mark at the start is skipped.
///
/// Decoding is forgiving line by line: a line that breaks a rule above, is longer than
/// ``maximumLineLength`` bytes, repeats a member, or whose time is more than the tolerance before
/// the latest time so far, is reported as a `FormatError` naming the file and its 1-based line,
/// counted, and skipped; the next lines are decoded as if it were not there. A record whose Apple
/// data is an iBeacon frame (Apple, "Proximity Beacon Specification"; `IBeaconFrame`) also gives a
/// `BeaconAdvertisement`; a malformed iBeacon frame is reported and counted, but its record is kept.
/// Pure: no I/O; the source reads the file.
package struct BeaconRecording: Sendable, Equatable {
  /// The RSSI values a record may have, dBm: the range of the HCI LE Advertising Report's RSSI
  /// (Bluetooth Core Specification, Vol 4, Part E, 7.7.65.2), which BlueZ passes on.
  package static let rssiRange = -127...20
  /// How far, in seconds, a line's time may go back before the latest time so far by default
  /// (advertisements heard by two adapters, or reported late, arrive slightly out of order).
  package static let defaultBackwardsTolerance = 1.0
  /// The longest line read, in bytes (without its line feed). Real lines are under 200 bytes.
  package static let maximumLineLength = 4096
  /// How many problems are kept in ``problems``; all of them are counted in ``problemCount``.
  package static let maximumKeptProblems = 100

  /// The well-formed lines, in file order.
  package var records: [BeaconRecord]
  /// The iBeacon advertisements among ``records``, in file order.
  package var advertisements: [BeaconAdvertisement]
  /// The comment lines' text, after the `#` and the blanks that follow it, in file order.
  package var comments: [String]
  /// The first ``maximumKeptProblems`` problems, each with file and line.
  package var problems: [FormatError]
  /// How many problems there were: lines skipped, and malformed iBeacon frames.
  package var problemCount: Int

  /// Creates a recording from its parts.
  package init(
    records: [BeaconRecord] = [], advertisements: [BeaconAdvertisement] = [],
    comments: [String] = [], problems: [FormatError] = [], problemCount: Int = 0
  ) {
    self.records = records
    self.advertisements = advertisements
    self.comments = comments
    self.problems = problems
    self.problemCount = problemCount
  }

  /// Decodes a recording's text.
  ///
  /// - Parameters:
  ///   - text: the whole recording.
  ///   - file: the file named in problems, if any.
  ///   - backwardsTolerance: how many seconds a line's time may go back before the latest time so
  ///     far; a line further back is a problem.
  /// - Returns: the records, advertisements, comments and problems; never fails as a whole.
  package static func decode(
    _ text: String, file: String? = nil, backwardsTolerance: Double = defaultBackwardsTolerance
  ) -> BeaconRecording {
    decode(Array(text.utf8), file: file, backwardsTolerance: backwardsTolerance)
  }

  /// Decodes a recording's bytes (UTF-8).
  ///
  /// - Parameters:
  ///   - bytes: the whole recording.
  ///   - file: the file named in problems, if any.
  ///   - backwardsTolerance: how many seconds a line's time may go back before the latest time so
  ///     far; a line further back is a problem.
  /// - Returns: the records, advertisements, comments and problems; never fails as a whole.
  package static func decode(
    _ bytes: [UInt8], file: String? = nil,
    backwardsTolerance: Double = defaultBackwardsTolerance
  ) -> BeaconRecording {
    var recording = BeaconRecording()
    var latest = -Double.infinity
    var start = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
    var lineNumber = 0
    while start < bytes.count {
      lineNumber += 1
      var end = start
      while end < bytes.count, bytes[end] != 0x0A { end += 1 }
      let line = bytes[start..<end]
      start = end + 1
      func report(_ error: FormatError) {
        var located = error
        located.file = file
        located.line = lineNumber
        recording.problemCount += 1
        if recording.problems.count < maximumKeptProblems { recording.problems.append(located) }
      }
      let content = trimmed(line)
      if content.isEmpty { continue }
      if content.first == UInt8(ascii: "#") {
        let text = trimmed(content.dropFirst())
        recording.comments.append(String(decoding: text, as: UTF8.self))
        continue
      }
      let record: BeaconRecord
      do {
        record = try self.record(line: content)
      } catch {
        report(error)
        continue
      }
      if record.time < latest - backwardsTolerance {
        let back = latest - record.time
        report(
          FormatError(
            .invalidValue,
            "the time goes back \(back) s before the latest so far (tolerance "
              + "\(backwardsTolerance) s)"))
        continue
      }
      latest = max(latest, record.time)
      recording.records.append(record)
      do {
        if let advertisement = try record.advertisement() {
          recording.advertisements.append(advertisement)
        }
      } catch {
        report(error)
      }
    }
    return recording
  }

  /// Decodes one line that is not a comment: a JSON object with the four fields.
  ///
  /// - Parameter line: the line, without its line feed.
  /// - Returns: the record.
  /// - Throws: `FormatError` without file or line: `.malformed` for a line that is too long, not
  ///   JSON, not an object, or repeats a member; `.missingField` for a missing field;
  ///   `.invalidValue` for a field of the wrong type or out of its range.
  package static func record<Line: Collection<UInt8>>(line: Line) throws(FormatError)
    -> BeaconRecord
  {
    guard line.count <= maximumLineLength else {
      throw FormatError(
        .malformed, "the line is longer than \(maximumLineLength) bytes")
    }
    let value: JSONValue
    do {
      value = try JSONParser.parse(Array(line), strict: true)
    } catch {
      throw FormatError(.malformed, "not JSON: \(error.reason) at byte \(error.offset + 1)")
    }
    guard case .object(let members) = value else {
      throw FormatError(.malformed, "the line is not a JSON object")
    }
    guard case .number(let time) = try field("time", in: members) else {
      throw FormatError(.invalidValue, "the time is not a number")
    }
    guard time.isFinite else { throw FormatError(.invalidValue, "the time is not finite") }
    guard case .string(let address) = try field("address", in: members), !address.isEmpty else {
      throw FormatError(.invalidValue, "the address is not a non-empty string")
    }
    guard case .number(let rssiValue) = try field("rssi", in: members),
      let rssi = Int(exactly: rssiValue)
    else {
      throw FormatError(.invalidValue, "the RSSI is not an integer")
    }
    guard rssiRange.contains(rssi) else {
      throw FormatError(
        .invalidValue,
        "the RSSI \(rssi) dBm is outside \(rssiRange.lowerBound)...\(rssiRange.upperBound)")
    }
    guard case .object(let data) = try field("manufacturer", in: members) else {
      throw FormatError(.invalidValue, "the manufacturer data is not an object")
    }
    var manufacturer: [UInt16: [UInt8]] = [:]
    for (key, value) in data {
      guard let company = companyID(key) else {
        throw FormatError(
          .invalidValue, "the company identifier '\(key)' is not a decimal number in 0...65535")
      }
      guard case .string(let hex) = value, let bytes = bytes(hex: hex) else {
        throw FormatError(
          .invalidValue,
          "the data of company \(company) is not hexadecimal with an even number of digits")
      }
      guard manufacturer.updateValue(bytes, forKey: company) == nil else {
        throw FormatError(.invalidValue, "company \(company) appears twice")
      }
    }
    return BeaconRecord(time: time, address: address, rssi: rssi, manufacturer: manufacturer)
  }

  /// A member of the line's object, or `.missingField` naming it.
  private static func field(_ name: String, in members: [String: JSONValue]) throws(FormatError)
    -> JSONValue
  {
    guard let value = members[name] else {
      throw FormatError(.missingField, "no '\(name)' field")
    }
    return value
  }

  /// A company identifier written in decimal: one to five ASCII digits, at most 65535.
  private static func companyID(_ text: String) -> UInt16? {
    let utf8 = text.utf8
    guard (1...5).contains(utf8.count) else { return nil }
    var value = 0
    for byte in utf8 {
      guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
      value = value * 10 + Int(byte - UInt8(ascii: "0"))
    }
    return UInt16(exactly: value)
  }

  /// The bytes of a hexadecimal string (either case, an even number of digits); nil otherwise.
  private static func bytes(hex: String) -> [UInt8]? {
    let digits = Array(hex.utf8)
    guard digits.count.isMultiple(of: 2) else { return nil }
    var result: [UInt8] = []
    result.reserveCapacity(digits.count / 2)
    var index = 0
    while index < digits.count {
      guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else {
        return nil
      }
      result.append(high << 4 | low)
      index += 2
    }
    return result
  }

  /// The value of one hexadecimal digit, either case.
  private static func nibble(_ digit: UInt8) -> UInt8? {
    switch digit {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
    default: nil
    }
  }

  /// The bytes without leading and trailing spaces, tabs and carriage returns.
  private static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
    func isBlank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0D }
    var slice = bytes
    while let first = slice.first, isBlank(first) { slice = slice.dropFirst() }
    while let last = slice.last, isBlank(last) { slice = slice.dropLast() }
    return slice
  }
}
