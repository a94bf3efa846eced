import Contacts
import CoreLocation
import Foundation
import LocationFormats

/// Turns a `CLLocation` (and, for the address tokens, its reverse-geocoded `CLPlacemark`) into
/// `whereami`'s output: a format string with `%` tokens, or one JSON object.
package enum LocationFormatter {
  typealias Token = (name: String, value: @Sendable (CLLocation, CLPlacemark?) -> String)

  /// Tokens and what they print. Replacement tries the longest token first, so `%time_local` is not
  /// read as `%time` followed by `_local`.
  static let tokens: [Token] = {
    let location: [(String, @Sendable (CLLocation, CLPlacemark?) -> String)] = [
      ("latitude", { location, _ in String(format: "%.6f", location.coordinate.latitude) }),
      ("longitude", { location, _ in String(format: "%.6f", location.coordinate.longitude) }),
      ("altitude", { location, _ in String(format: "%.2f", location.altitude) }),
      ("direction", { location, _ in String(format: "%.1f", location.course) }),
      ("speed", { location, _ in String(format: "%.2f", location.speed) }),
      ("h_accuracy", { location, _ in String(format: "%.0f", location.horizontalAccuracy) }),
      ("v_accuracy", { location, _ in String(format: "%.0f", location.verticalAccuracy) }),
      ("course_accuracy", { location, _ in String(format: "%.1f", location.courseAccuracy) }),
      ("speed_accuracy", { location, _ in String(format: "%.2f", location.speedAccuracy) }),
      ("time", { location, _ in cliTime(location.timestamp) }),
      ("floor", { location, _ in location.floor.map { String($0.level) } ?? "" }),
      (
        "simulated",
        { location, _ in (location.sourceInformation?.isSimulatedBySoftware ?? false) ? "1" : "0" }
      ),
    ]
    let geocoding = placemarkFields.map {
      field -> (String, @Sendable (CLLocation, CLPlacemark?) -> String) in
      (field.name, { location, placemark in field.value(location, placemark) ?? "" })
    }
    return (location + geocoding).sorted { $0.0.count > $1.0.count }.map {
      (name: $0.0, value: $0.1)
    }
  }()

  /// The reverse-geocoding tokens (CoreLocationCLI's) and, in this order, the JSON keys they give;
  /// `nil` when the placemark does not know.
  static let placemarkFields:
    [(name: String, value: @Sendable (CLLocation, CLPlacemark?) -> String?)] = [
      ("name", { $1?.name }),
      ("address", { _, placemark in placemark.flatMap(address) }),
      ("thoroughfare", { $1?.thoroughfare }),
      ("subThoroughfare", { $1?.subThoroughfare }),
      ("locality", { $1?.locality }),
      ("subLocality", { $1?.subLocality }),
      ("administrativeArea", { $1?.administrativeArea }),
      ("subAdministrativeArea", { $1?.subAdministrativeArea }),
      ("postalCode", { $1?.postalCode }),
      ("isoCountryCode", { $1?.isoCountryCode }),
      ("country", { $1?.country }),
      ("ocean", { $1?.ocean }),
      ("inlandWater", { $1?.inlandWater }),
      ("region", { $1?.region?.identifier }),
      ("timeZone", { $1?.timeZone?.identifier }),
      (
        "time_local",
        { location, placemark in placemark?.timeZone.map { localTime(location.timestamp, $0) } }
      ),
    ]

  /// The names of the reverse-geocoding tokens.
  package static let geocodingTokens: Set<String> = Set(placemarkFields.map(\.name))

  /// The placemark's postal address, formatted for mailing (lines joined with ", ").
  static func address(_ placemark: CLPlacemark) -> String? {
    guard let address = placemark.postalAddress else { return nil }
    let text = CNPostalAddressFormatter.string(from: address, style: .mailingAddress)
    return text.isEmpty ? nil : text.replacingOccurrences(of: "\n", with: ", ")
  }

  /// Replaces the tokens of `format` with the location's values, and the placemark's for the
  /// reverse-geocoding tokens (empty when `placemark` is `nil`); `\n` and `\t` become a newline
  /// and a tab, `%%` a percent sign; anything else is printed as it is.
  package static func format(
    _ location: CLLocation, with format: String, placemark: CLPlacemark? = nil
  ) -> String {
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
          output += token.value(location, placemark)
          rest = after.dropFirst(token.name.count)
          continue
        }
      }
      output.append(first)
      rest = rest.dropFirst()
    }
    return output
  }

  /// The reverse-geocoding tokens that `format` uses (so a placemark is needed).
  package static func geocodingTokens(in format: String) -> [String] {
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
  ///
  /// The reverse-geocoding fields follow, under their token names (`"locality":"Zürich"`), `null`
  /// where the placemark does not know or there is none.
  package static func json(_ location: CLLocation, placemark: CLPlacemark? = nil) -> String {
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
    let placemarkFields = Self.placemarkFields.map { field in
      (field.name, field.value(location, placemark).map(jsonString) ?? "null")
    }
    return "{" + (fields + placemarkFields).map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",")
      + "}"
  }

  /// A JSON string literal.
  static func jsonString(_ text: String) -> String {
    var result = ""
    JSONObjectWriter.appendString(text, to: &result)
    return result
  }

  /// CoreLocationCLI's `%time`: `2019-10-03 04:10:05 +0000` (UTC).
  static func cliTime(_ date: Date) -> String {
    let parts = utcParts(date)
    return String(
      format: "%04d-%02d-%02d %02d:%02d:%02d +0000", parts.year, parts.month, parts.day, parts.hour,
      parts.minute, parts.second)
  }

  /// CoreLocationCLI's `%time_local`: the time in the place's time zone,
  /// `2019-10-03 06:10:05 +0200`.
  static func localTime(_ date: Date, _ zone: TimeZone) -> String {
    let offset = zone.secondsFromGMT(for: date)
    let parts = utcParts(date.addingTimeInterval(TimeInterval(offset)))
    let sign = offset < 0 ? "-" : "+"
    let minutes = abs(offset) / 60
    return String(
      format: "%04d-%02d-%02d %02d:%02d:%02d ", parts.year, parts.month, parts.day, parts.hour,
      parts.minute, parts.second) + sign + String(format: "%02d%02d", minutes / 60, minutes % 60)
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
