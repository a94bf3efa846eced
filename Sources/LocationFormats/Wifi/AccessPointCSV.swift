/// A CSV export of Wi-Fi access points in the shape of Ichnaea's `wifi_shard` rows: what a user
/// who has such an export (from their own Ichnaea instance, or the old Mozilla Location Service's
/// database) can import so that access points are known before the device has heard them.
///
/// Ichnaea keeps each access point as a row of a `wifi_shard_N` table (`WifiShard` in
/// `ichnaea/models/wifi.py` and its `MacStationMixin`, github.com/mozilla/ichnaea): `mac` (six
/// bytes, written as twelve hexadecimal digits), `lat` and `lon` (degrees), `radius` (metres,
/// an integer), `region`, `samples` (how many observations), `source`, `created`, `modified`
/// (MySQL `DATETIME`s in UTC), `block_first`, `block_last`, `block_count` and, in later versions,
/// `last_seen` and the bounding box `max_lat`, `min_lat`, `max_lon`, `min_lon`. A table dumped
/// to CSV with its header row has those names.
///
/// What is read:
/// - A header row names the columns; they are found by name, case-insensitively, in any order,
///   and columns not listed here are ignored.
/// - Required: `mac` (or `bssid`): twelve hexadecimal digits, with or without `:`, `-` or `.`
///   separators, either case (Ichnaea's own rule for a MAC); `lat`: -90...90; `lon`: -180...180.
/// - Optional: `radius` (metres, ≥ 0), `samples` (a whole number ≥ 0), `modified` (or `updated`):
///   ISO 8601 (`2016-01-02T03:04:05Z`, or MySQL's `2016-01-02 03:04:05`, read as UTC) or seconds
///   since 1970. An empty field is the same as an absent column.
/// - Fields follow RFC 4180: separated by commas, optionally enclosed in double quotes (a quote
///   inside doubled), so a quoted field may hold commas and line breaks. Lines end in LF or CRLF;
///   blank lines are skipped.
///
/// A row that cannot be read (a bad MAC, a coordinate out of range or not a finite decimal number,
/// fewer fields than the columns it needs, an unterminated quote) becomes a `FormatError` naming
/// the 1-based line it starts on, and is skipped: the rest are still read. Only a header without a
/// required column, or text with no header at all, fails the whole import.
package enum AccessPointCSV {
  /// One access point read from a row.
  package struct Row: Sendable, Equatable {
    /// The BSSID, the low 48 bits.
    package var bssid: UInt64
    /// Latitude, degrees.
    package var latitude: Double
    /// Longitude, degrees.
    package var longitude: Double
    /// The radius of the area it is heard in, metres, if the row has one.
    package var radius: Double?
    /// How many observations the estimate rests on, if the row says.
    package var samples: Int?
    /// When the estimate was last changed: seconds since 1970, if the row says.
    package var time: Double?

    /// Creates a row.
    package init(
      bssid: UInt64, latitude: Double, longitude: Double, radius: Double? = nil,
      samples: Int? = nil, time: Double? = nil
    ) {
      self.bssid = bssid
      self.latitude = latitude
      self.longitude = longitude
      self.radius = radius
      self.samples = samples
      self.time = time
    }
  }

  /// What an import read: the good rows, and an error for each row skipped.
  package struct Decoded: Sendable, Equatable {
    /// The rows read, in file order.
    package var rows: [Row]
    /// One error per skipped row, in file order, each with its line.
    package var errors: [FormatError]
    /// How many rows were skipped.
    package var skipped: Int { errors.count }
  }

  /// The positions of the columns a row is read from.
  private struct Columns {
    var mac: Int
    var latitude: Int
    var longitude: Int
    var radius: Int?
    var samples: Int?
    var time: Int?

    /// The number of fields a row needs for its required columns.
    var required: Int { max(mac, latitude, longitude) + 1 }
  }

  /// Decodes the text of an export.
  ///
  /// - Parameters:
  ///   - text: the file's contents.
  ///   - file: the path named in errors, if any.
  /// - Returns: the rows read and an error for each one skipped.
  /// - Throws: `FormatError` `.empty` when there is no header row, `.missingField` (line 1 or the
  ///   header's line) when the header has no `mac`/`bssid`, `lat` or `lon` column, `.malformed`
  ///   when the header itself cannot be split.
  package static func decode(_ text: String, file: String? = nil) throws(FormatError) -> Decoded {
    var reader = RecordReader(bytes: Array(text.utf8))
    var header: Record?
    while let record = reader.next() {
      if record.isBlank { continue }
      header = record
      break
    }
    guard let header else { throw FormatError(.empty, "no header row", file: file, line: nil) }
    if let problem = header.problem {
      throw FormatError(.malformed, "header: \(problem)", file: file, line: header.line)
    }
    let columns = try Self.columns(header, file: file)
    var decoded = Decoded(rows: [], errors: [])
    while let record = reader.next() {
      if record.isBlank { continue }
      do throws(FormatError) {
        decoded.rows.append(try row(record, columns: columns, file: file))
      } catch {
        decoded.errors.append(error)
      }
    }
    return decoded
  }

  /// The column positions named in a header, or the missing required column as an error.
  private static func columns(_ header: Record, file: String?) throws(FormatError) -> Columns {
    let names = header.fields.map { String(decoding: $0, as: UTF8.self).lowercased() }
    func index(_ candidates: String...) -> Int? {
      for candidate in candidates {
        if let found = names.firstIndex(where: { trimmed($0) == candidate }) { return found }
      }
      return nil
    }
    guard let mac = index("mac", "bssid") else {
      throw FormatError(
        .missingField, "the header has no 'mac' (or 'bssid') column", file: file,
        line: header.line)
    }
    guard let latitude = index("lat") else {
      throw FormatError(
        .missingField, "the header has no 'lat' column", file: file, line: header.line)
    }
    guard let longitude = index("lon") else {
      throw FormatError(
        .missingField, "the header has no 'lon' column", file: file, line: header.line)
    }
    return Columns(
      mac: mac, latitude: latitude, longitude: longitude, radius: index("radius"),
      samples: index("samples"), time: index("modified", "updated"))
  }

  /// A string without surrounding spaces and tabs.
  private static func trimmed(_ text: String) -> Substring {
    let characters = text.drop { $0 == " " || $0 == "\t" }
    return characters.prefix(
      characters.count - characters.reversed().prefix { $0 == " " || $0 == "\t" }.count)
  }

  /// Reads one record as a row, or the reason it cannot be.
  private static func row(_ record: Record, columns: Columns, file: String?) throws(FormatError)
    -> Row
  {
    func fail(_ code: FormatError.Code, _ message: String) -> FormatError {
      FormatError(code, message, file: file, line: record.line)
    }
    if let problem = record.problem { throw fail(.malformed, problem) }
    let fields = record.fields
    guard fields.count >= columns.required else {
      throw fail(
        .missingField, "\(fields.count) fields, fewer than the \(columns.required) needed")
    }
    guard let bssid = mac(fields[columns.mac]) else {
      throw fail(.invalidValue, "the MAC is not twelve hexadecimal digits")
    }
    guard let latitude = number(fields[columns.latitude]), latitude.isFinite,
      (-90...90).contains(latitude)
    else { throw fail(.invalidValue, "the latitude is not a number in -90...90") }
    guard let longitude = number(fields[columns.longitude]), longitude.isFinite,
      (-180...180).contains(longitude)
    else { throw fail(.invalidValue, "the longitude is not a number in -180...180") }
    var row = Row(bssid: bssid, latitude: latitude, longitude: longitude)
    if let field = optional(fields, columns.radius) {
      guard let radius = number(field), radius.isFinite, radius >= 0 else {
        throw fail(.invalidValue, "the radius is not a number of metres ≥ 0")
      }
      row.radius = radius
    }
    if let field = optional(fields, columns.samples) {
      guard let samples = Int(String(decoding: field, as: UTF8.self)), samples >= 0 else {
        throw fail(.invalidValue, "the samples are not a whole number ≥ 0")
      }
      row.samples = samples
    }
    if let field = optional(fields, columns.time) {
      guard let time = time(field) else {
        throw fail(.invalidValue, "the time is neither ISO 8601 nor seconds since 1970")
      }
      row.time = time
    }
    return row
  }

  /// An optional column's field, or nil when the column is absent, the row too short for it, or
  /// the field empty.
  private static func optional(_ fields: [[UInt8]], _ index: Int?) -> [UInt8]? {
    guard let index, index < fields.count else { return nil }
    let isSpace = { (byte: UInt8) in byte == 0x20 || byte == 0x09 }
    let field = fields[index].drop(while: isSpace).reversed().drop(while: isSpace).reversed()
    return field.isEmpty ? nil : Array(field)
  }

  /// A plain decimal number (no `nan`, `inf` or hexadecimal), spaces around it ignored.
  private static func number(_ field: [UInt8]) -> Double? {
    field.withUnsafeBufferPointer { ByteScalars.decimal($0) }
  }

  /// The BSSID of a MAC written as twelve hexadecimal digits, with or without `:`, `-` or `.`
  /// between them, either case; nil for anything else.
  package static func mac(_ field: [UInt8]) -> UInt64? {
    var value: UInt64 = 0
    var digits = 0
    for byte in field {
      switch byte {
      case UInt8(ascii: ":"), UInt8(ascii: "-"), UInt8(ascii: "."), 0x20, 0x09: continue
      default:
        guard let digit = hexDigit(byte), digits < 12 else { return nil }
        value = value << 4 | UInt64(digit)
        digits += 1
      }
    }
    return digits == 12 ? value : nil
  }

  /// The value of a hexadecimal digit.
  private static func hexDigit(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
    default: nil
    }
  }

  /// Seconds since 1970 of an ISO 8601 time (one without an offset is UTC, as Ichnaea's
  /// `DATETIME`s are) or of a decimal number of seconds.
  private static func time(_ field: [UInt8]) -> Double? {
    if let seconds = number(field) { return seconds.isFinite ? seconds : nil }
    let text = String(decoding: field, as: UTF8.self)
    if let parsed = GPSDTime.parse(text) { return parsed }
    return GPSDTime.parse(text + "Z")
  }
}

/// One CSV record: its fields and the line it starts on.
private struct Record {
  /// The fields, unquoted.
  var fields: [[UInt8]]
  /// The 1-based line the record starts on.
  var line: Int
  /// Why the record cannot be read (an unterminated quote, text after a closing quote), if so.
  var problem: String?

  /// A blank line: one empty field.
  var isBlank: Bool { problem == nil && fields.count == 1 && fields[0].isEmpty }
}

/// Splits CSV text into RFC 4180 records, counting lines.
private struct RecordReader {
  /// The text.
  let bytes: [UInt8]
  /// The next byte to read.
  var index = 0
  /// The 1-based line of `index`.
  var line = 1

  /// The next record, or nil at the end of the text.
  mutating func next() -> Record? {
    guard index < bytes.count else { return nil }
    var record = Record(fields: [], line: line)
    var field: [UInt8] = []
    while true {
      if index < bytes.count, bytes[index] == UInt8(ascii: "\"") {
        field = []
        index += 1
        var closed = false
        while index < bytes.count {
          let byte = bytes[index]
          index += 1
          if byte == UInt8(ascii: "\"") {
            if index < bytes.count, bytes[index] == UInt8(ascii: "\"") {
              field.append(byte)
              index += 1
              continue
            }
            closed = true
            break
          }
          if byte == 0x0A { line += 1 }
          field.append(byte)
        }
        if !closed {
          record.problem = "a quoted field is not closed"
          record.fields.append(field)
          return record
        }
        // After a closing quote only a separator or the end of the line may follow.
        if index < bytes.count, ![UInt8(ascii: ","), 0x0A, 0x0D].contains(bytes[index]) {
          record.problem = "text after a quoted field's closing quote"
          skipLine()
          record.fields.append(field)
          return record
        }
      } else {
        field = []
        while index < bytes.count, ![UInt8(ascii: ","), 0x0A, 0x0D].contains(bytes[index]) {
          field.append(bytes[index])
          index += 1
        }
      }
      record.fields.append(field)
      guard index < bytes.count else { return record }
      let separator = bytes[index]
      index += 1
      if separator == UInt8(ascii: ",") { continue }
      if separator == 0x0D, index < bytes.count, bytes[index] == 0x0A { index += 1 }
      line += 1
      return record
    }
  }

  /// Moves past the end of the current line.
  private mutating func skipLine() {
    while index < bytes.count {
      let byte = bytes[index]
      index += 1
      if byte == 0x0A {
        line += 1
        return
      }
    }
  }
}
