import Foundation
import Geodesy
import LocationModel

/// GeoClue's static location file, `/etc/geolocation`: a position typed in by hand.
///
/// The format (GeoClue 2.6's static source): four values, one per line, in this order: latitude
/// (degrees), longitude (degrees), altitude (metres), accuracy radius (metres). `#` starts a
/// comment, on its own line or after a value; blank lines are ignored. For example:
///
/// ```
/// # The office, measured on the map
/// 48.8583   # latitude
/// 2.2945    # longitude
/// 35        # altitude
/// 50        # accuracy radius
/// ```
///
/// Rules of our own, where GeoClue's documentation is silent: each value is a plain decimal number
/// (`nan`, `inf` and hexadecimal are refused); a fifth value is an error rather than ignored, as
/// it is almost always a mistake; the accuracy radius also serves as the altitude's accuracy.
package enum GeolocationFile {
  /// The four values in their order, as named in errors.
  private static let names = ["latitude", "longitude", "altitude", "accuracy radius"]

  /// Parses the text of a static location file.
  ///
  /// - Parameters:
  ///   - text: the file's contents.
  ///   - file: the path named in errors and used as the fix's `source` (defaults to
  ///     `/etc/geolocation`).
  ///   - time: the time to give the fix, seconds since 1970 (the file has none; the caller
  ///     decides, usually "now").
  /// - Returns: a fix with quality `.manual`, the file's altitude, and the accuracy radius as both
  ///   horizontal and vertical accuracy; speed and course unknown.
  /// - Throws: `FormatError` naming the file and line: `.empty` when there is no value at all,
  ///   `.missingField` when there are fewer than four, `.invalidValue` for a value that is not a
  ///   decimal number, a latitude outside -90...90, a longitude outside -180...180, a negative
  ///   accuracy, or a fifth value.
  package static func parse(text: String, file: String = "/etc/geolocation", time: Double)
    throws(FormatError) -> Fix
  {
    var values: [Double] = []
    var lastLine = 0
    var lineNumber = 0
    for rawLine in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
      lineNumber += 1
      var content = rawLine[...]
      if let hash = content.firstIndex(of: "#") { content = content[..<hash] }
      let trimmed = content.trimmingCharacters(in: .whitespacesAndNewlines)
      if trimmed.isEmpty { continue }
      guard values.count < 4 else {
        throw FormatError(
          .invalidValue,
          "a fifth value; the file holds exactly four (latitude, longitude, "
            + "altitude, accuracy radius)", file: file, line: lineNumber)
      }
      let name = names[values.count]
      let parsed = Array(trimmed.utf8).withUnsafeBufferPointer { ByteScalars.decimal($0) }
      guard let value = parsed, value.isFinite else {
        throw FormatError(
          .invalidValue, "the \(name) is not a decimal number", file: file, line: lineNumber)
      }
      switch values.count {
      case 0 where abs(value) > 90:
        throw FormatError(
          .invalidValue, "the latitude is outside -90...90 degrees", file: file, line: lineNumber)
      case 1 where abs(value) > 180:
        throw FormatError(
          .invalidValue, "the longitude is outside -180...180 degrees", file: file,
          line: lineNumber)
      case 3 where value < 0:
        throw FormatError(
          .invalidValue, "the accuracy radius is negative", file: file, line: lineNumber)
      default:
        break
      }
      values.append(value)
      lastLine = lineNumber
    }
    if values.isEmpty {
      throw FormatError(
        .empty, "no values; expected latitude, longitude, altitude and accuracy radius, one a line",
        file: file)
    }
    guard values.count == 4 else {
      let missing = names[values.count...].joined(separator: ", ")
      throw FormatError(
        .missingField, "only \(values.count) of 4 values; missing: \(missing)", file: file,
        line: lastLine)
    }
    return Fix(
      latitude: values[0],
      longitude: values[1],
      altitude: values[2],
      horizontalAccuracy: values[3],
      verticalAccuracy: values[3],
      time: time,
      quality: .manual,
      source: file
    )
  }

  /// Reads and parses a static location file.
  ///
  /// - Parameters:
  ///   - path: the file to read (defaults to `/etc/geolocation`).
  ///   - time: the time to give the fix, seconds since 1970.
  /// - Returns: as ``parse(text:file:time:)``.
  /// - Throws: `.unreadable` when the file cannot be read or is not UTF-8; otherwise as
  ///   ``parse(text:file:time:)``.
  package static func parse(path: String = "/etc/geolocation", time: Double) throws(FormatError)
    -> Fix
  {
    guard let data = FileManager.default.contents(atPath: path) else {
      throw FormatError(.unreadable, "cannot read the file", file: path)
    }
    guard let text = String(data: data, encoding: .utf8) else {
      throw FormatError(.unreadable, "the file is not UTF-8 text", file: path)
    }
    return try parse(text: text, file: path, time: time)
  }
}
