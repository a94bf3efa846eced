import CoreLocation
import Foundation

/// Turns a `CLLocation` into `whereami`'s output: a format string with `%` tokens, or one JSON object.
package enum LocationFormatter {
  /// Tokens and what they print. Replacement tries the longest token first, so `%time_local` is not
  /// read as `%time` followed by `_local`.
  static let tokens: [(name: String, value: @Sendable (CLLocation) -> String)] = {
    let location: [(String, @Sendable (CLLocation) -> String)] = [
      ("latitude", { String(format: "%.6f", $0.coordinate.latitude) }),
      ("longitude", { String(format: "%.6f", $0.coordinate.longitude) }),
      ("altitude", { String(format: "%.2f", $0.altitude) }),
      ("direction", { String(format: "%.1f", $0.course) }),
      ("speed", { String(format: "%.2f", $0.speed) }),
      ("h_accuracy", { String(format: "%.0f", $0.horizontalAccuracy) }),
      ("v_accuracy", { String(format: "%.0f", $0.verticalAccuracy) }),
      ("course_accuracy", { String(format: "%.1f", $0.courseAccuracy) }),
      ("speed_accuracy", { String(format: "%.2f", $0.speedAccuracy) }),
      ("time", { cliTime($0.timestamp) }),
      ("floor", { $0.floor.map { String($0.level) } ?? "" }),
      ("simulated", { ($0.sourceInformation?.isSimulatedBySoftware ?? false) ? "1" : "0" }),
    ]
    let geocoding = [
      "address", "name", "isoCountryCode", "country", "postalCode", "administrativeArea",
      "subAdministrativeArea", "locality", "subLocality", "thoroughfare", "subThoroughfare",
      "region",
      "timeZone", "time_local",
    ].map { name -> (String, @Sendable (CLLocation) -> String) in (name, { _ in "" }) }
    return (location + geocoding).sorted { $0.0.count > $1.0.count }.map {
      (name: $0.0, value: $0.1)
    }
  }()

  /// The reverse-geocoding tokens, which print nothing on Linux.
  package static let geocodingTokens: Set<String> = [
    "address", "name", "isoCountryCode", "country", "postalCode", "administrativeArea",
    "subAdministrativeArea", "locality", "subLocality", "thoroughfare", "subThoroughfare", "region",
    "timeZone", "time_local",
  ]

  /// Replaces the tokens of `format` with the location's values; `\n` and `\t` become a newline and a
  /// tab, `%%` a percent sign; anything else is printed as it is.
  package static func format(_ location: CLLocation, with format: String) -> String {
    var output = ""
    var rest = Substring(format)
    while let first = rest.first {
      if first == "\\", let next = rest.dropFirst().first, next == "n" || next == "t" {
        output.append(next == "n" ? "\n" : "\t")
        rest = rest.dropFirst(2)
        continue
      }
      if first == "%" {
        let after = rest.dropFirst()
        if after.first == "%" {
          output.append("%")
          rest = after.dropFirst()
          continue
        }
        if let token = tokens.first(where: { after.hasPrefix($0.name) }) {
          output += token.value(location)
          rest = after.dropFirst(token.name.count)
          continue
        }
      }
      output.append(first)
      rest = rest.dropFirst()
    }
    return output
  }

  /// The tokens of `format` that print nothing on Linux (reverse geocoding).
  package static func unsupportedTokens(in format: String) -> [String] {
    var found: [String] = []
    var rest = Substring(format)
    while let percent = rest.firstIndex(of: "%") {
      let after = rest[rest.index(after: percent)...]
      if let token = tokens.first(where: { after.hasPrefix($0.name) }) {
        if geocodingTokens.contains(token.name) { found.append(token.name) }
        rest = after.dropFirst(token.name.count)
      } else {
        rest = after.dropFirst(after.first == "%" ? 1 : 0)
      }
    }
    return found
  }

  /// One JSON object on one line, keys in a fixed order, numbers as numbers; unknown values
  /// (negative accuracies, speed, course; altitude with a negative vertical accuracy) are `null`.
  /// Latitude and longitude have full precision: the shortest decimal that reads back as the same
  /// double (`52.850155`, `45.772175035`, `9.1697e-05`); the other numbers are rounded to what
  /// they can mean (centimetres, millimetres per second, hundredths of a degree).
  package static func json(_ location: CLLocation) -> String {
    func number(_ value: Double, _ digits: Int) -> String {
      guard value.isFinite else { return "null" }
      var text = String(format: "%.\(digits)f", value)
      if text.contains(".") {
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
      }
      return text == "-0" ? "0" : text
    }
    func known(_ value: Double, _ digits: Int) -> String {
      value < 0 ? "null" : number(value, digits)
    }
    func coordinate(_ value: Double) -> String {
      guard value.isFinite else { return "null" }
      // Swift's description is the shortest round-trip decimal; JSON needs no ".0" on integers.
      var text = "\(value)"
      if text.hasSuffix(".0") { text.removeLast(2) }
      return text == "-0" ? "0" : text
    }
    let altitudeKnown = location.verticalAccuracy >= 0
    let fields: [(String, String)] = [
      ("latitude", coordinate(location.coordinate.latitude)),
      ("longitude", coordinate(location.coordinate.longitude)),
      ("altitude", altitudeKnown ? number(location.altitude, 2) : "null"),
      ("ellipsoidal_altitude", altitudeKnown ? number(location.ellipsoidalAltitude, 2) : "null"),
      ("h_accuracy", known(location.horizontalAccuracy, 2)),
      ("v_accuracy", known(location.verticalAccuracy, 2)),
      ("direction", known(location.course, 2)),
      ("course_accuracy", known(location.courseAccuracy, 2)),
      ("speed", known(location.speed, 3)),
      ("speed_accuracy", known(location.speedAccuracy, 3)),
      ("floor", location.floor.map { String($0.level) } ?? "null"),
      ("time", "\"" + isoTime(location.timestamp) + "\""),
      (
        "simulated", (location.sourceInformation?.isSimulatedBySoftware ?? false) ? "true" : "false"
      ),
    ]
    return "{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
  }

  /// A JSON string literal.
  static func jsonString(_ text: String) -> String {
    var result = "\""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\"": result += "\\\""
      case "\\": result += "\\\\"
      case "\n": result += "\\n"
      case "\r": result += "\\r"
      case "\t": result += "\\t"
      case _ where scalar.value < 0x20: result += String(format: "\\u%04x", scalar.value)
      default: result.unicodeScalars.append(scalar)
      }
    }
    return result + "\""
  }

  /// CoreLocationCLI's `%time`: `2019-10-03 04:10:05 +0000` (UTC).
  static func cliTime(_ date: Date) -> String {
    let parts = utcParts(date)
    return String(
      format: "%04d-%02d-%02d %02d:%02d:%02d +0000", parts.year, parts.month, parts.day, parts.hour,
      parts.minute, parts.second)
  }

  /// ISO 8601 in UTC, with milliseconds when the time has a fraction: `2019-10-03T04:10:05.250Z`.
  static func isoTime(_ date: Date) -> String {
    let parts = utcParts(date)
    let base = String(
      format: "%04d-%02d-%02dT%02d:%02d:%02d", parts.year, parts.month, parts.day, parts.hour,
      parts.minute, parts.second)
    return parts.millisecond == 0 ? base + "Z" : base + String(format: ".%03dZ", parts.millisecond)
  }

  private static func utcParts(_ date: Date) -> (
    year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int, millisecond: Int
  ) {
    let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    let seconds = milliseconds.floorDivided(by: 1000)
    let days = seconds.floorDivided(by: 86_400)
    let secondOfDay = Int(seconds - days * 86_400)
    // Days to civil date: Howard Hinnant, "chrono-Compatible Low-Level Date Algorithms" (civil_from_days).
    let z = days + 719_468
    let era = z.floorDivided(by: 146_097)
    let dayOfEra = z - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let monthIndex = (5 * dayOfYear + 2) / 153
    let day = Int(dayOfYear - (153 * monthIndex + 2) / 5 + 1)
    let month = Int(monthIndex < 10 ? monthIndex + 3 : monthIndex - 9)
    let year = Int(yearOfEra + era * 400) + (month <= 2 ? 1 : 0)
    return (
      year, month, day, secondOfDay / 3600, secondOfDay / 60 % 60, secondOfDay % 60,
      Int(milliseconds - seconds * 1000)
    )
  }
}

extension Int64 {
  fileprivate func floorDivided(by divisor: Int64) -> Int64 {
    let quotient = self / divisor
    return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
  }
}
