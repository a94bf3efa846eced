import Foundation
import LocationFormats
import LocationModel
import LocationProtocol

/// Turns the daemon's control replies into text for people (tables) or scripts (JSON).
///
/// Tables: one section per kind of thing, each an aligned ``ControlTable``; an empty list prints
/// a line saying so instead of a bare heading. JSON: the reply's payload as the daemon sent it
/// (every member, also ones this version of `locationctl` does not know), keys sorted, one line.
package enum ControlFormatter {
  /// The name of an authorization status, for tables.
  ///
  /// - Parameter status: The status.
  /// - Returns: `not determined`, `restricted`, `denied`, `always` or `when in use`.
  package static func authorizationName(_ status: AuthorizationStatus) -> String {
    switch status {
    case .notDetermined: return "not determined"
    case .restricted: return "restricted"
    case .denied: return "denied"
    case .authorizedAlways: return "always"
    case .authorizedWhenInUse: return "when in use"
    }
  }

  /// The name of an accuracy authorization: `precise` or `approximate`.
  ///
  /// - Parameter accuracy: The accuracy.
  /// - Returns: The name.
  package static func accuracyName(_ accuracy: AccuracyAuthorization) -> String {
    switch accuracy {
    case .fullAccuracy: return "precise"
    case .reducedAccuracy: return "approximate"
    }
  }

  /// The `status` reply as tables: sources, clients, apps, and the services switch.
  ///
  /// - Parameter status: The reply.
  /// - Returns: The text, ending in a newline.
  package static func status(_ status: DaemonStatus) -> String {
    var text = "Location services: \(status.servicesEnabled ? "on" : "off")\n"
    if let store = status.store { text += storeLine(store) }
    if let publish = status.publish { text += publishLine(publish) }
    if let history = status.history { text += historyLine(history) }
    text += "\n"
    text += "Sources:\n" + sourcesTable(status.sources) + "\n"
    text += "Clients:\n"
    if status.clients.isEmpty {
      text += "  (no client connected)\n"
    } else {
      text +=
        ControlTable(
          [
            .init("app"), .init("role"), .init("pid", numeric: true), .init("uid", numeric: true),
            .init("managers", numeric: true),
          ],
          rows: status.clients.map { client in
            [
              client.app.isEmpty ? "-" : client.app, client.role.rawValue, String(client.pid),
              String(client.uid), String(client.managers),
            ]
          }
        ).rendered
    }
    text += "\nActive apps:\n"
    if status.apps.isEmpty {
      text += "  (none: no app is connected or monitoring regions)\n"
    } else {
      text += ControlTable([.init("app")], rows: status.apps.map { [$0] }).rendered
    }
    return text
  }

  /// The publisher's line of `status`: the broker and topic, the connection, the outbox.
  static func publishLine(_ publish: DaemonPublishStatus) -> String {
    var line = "Publishing: \(publish.topic) on \(publish.broker): "
    line += publish.connected ? "connected" : "not connected"
    if let error = publish.lastError, !publish.connected { line += " (\(error))" }
    line += "; \(publish.depth < 0 ? "?" : String(publish.depth)) in the outbox"
    line += ", \(publish.acknowledged) delivered"
    if publish.thinned > 0 { line += ", \(publish.thinned) old positions thinned" }
    return line + "\n"
  }

  /// The track history's line of `status`: what it holds and for how long.
  static func historyLine(_ history: DaemonHistoryStatus) -> String {
    var line = "Track history: "
    line +=
      history.points < 0 ? "? points" : "\(history.points) point\(history.points == 1 ? "" : "s")"
    if let oldest = history.oldest, let newest = history.newest {
      line += " from \(timestamp(oldest)) to \(timestamp(newest))"
    }
    let days =
      history.days == history.days.rounded() ? String(Int(history.days)) : String(history.days)
    return line + ", kept \(days) days\n"
  }

  /// The store's line of `status`: its path and condition, and for a store that does not take
  /// writes, why, since when, and what waits (README, "When the store fails").
  static func storeLine(_ store: DaemonStoreStatus) -> String {
    var line = "Store: \(store.path): "
    switch store.state {
    case .ok:
      line += "ok"
    case .failing:
      line += "cannot commit"
    case .memory:
      line += "not writable, state kept in memory"
    }
    if let since = store.since { line += " since \(timestamp(since))" }
    if let cause = store.cause { line += " (\(cause))" }
    if store.held > 0 { line += "; \(store.held) write(s) held, region events wait" }
    return line + "\n"
  }

  /// Seconds since 1970 as `YYYY-MM-DD HH:MM:SSZ` (UTC).
  static func timestamp(_ seconds: Double) -> String {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [
      .withFullDate, .withTime, .withColonSeparatorInTime, .withSpaceBetweenDateAndTime,
      .withTimeZone,
    ]
    return formatter.string(from: Date(timeIntervalSince1970: seconds))
  }

  /// The `sources` reply (and the sources section of `status`) as a table.
  ///
  /// - Parameter sources: The sources.
  /// - Returns: The text, ending in a newline.
  package static func sources(_ sources: [DaemonSourceStatus]) -> String {
    sourcesTable(sources)
  }

  private static func sourcesTable(_ sources: [DaemonSourceStatus]) -> String {
    guard !sources.isEmpty else {
      return "  (no source configured or discovered)\n"
    }
    return ControlTable(
      [
        .init("source"), .init("running"), .init("power"), .init("on (s)", numeric: true),
        .init("users", numeric: true), .init("failure"),
      ],
      rows: sources.map { source in
        [
          source.url, source.running ? "yes" : "no", source.power, seconds(source.onSeconds),
          source.users.map(String.init) ?? "-", source.failure ?? "",
        ]
      }
    ).rendered
  }

  /// The note under the `apps` table when an app is named by a path: what such a name is worth.
  package static let pathIdentityNote =
    "Apps named by a path are the user's unconfined programs: the name keeps their settings "
    + "apart, but any program of the same user can run as any of them (docs/security.md).\n"

  /// The `apps` reply as a table, and a note when an app is named by a path.
  ///
  /// - Parameter apps: The apps.
  /// - Returns: The text, ending in a newline.
  package static func apps(_ apps: [DaemonAppInfo]) -> String {
    guard !apps.isEmpty else { return "No app has asked for location yet.\n" }
    let note = apps.contains { $0.app.hasPrefix("/") } ? "\n" + pathIdentityNote : ""
    // The reasons apps gave (`purpose`), under the table: they are sentences, not cells.
    let purposes = apps.compactMap { app in
      app.purpose.map { "  \(ControlTable.clean(app.app)): \"\(ControlTable.clean($0))\"\n" }
    }
    return ControlTable(
      [
        .init("app"), .init("authorization"), .init("accuracy"), .init("regions", numeric: true),
        .init("pending", numeric: true), .init("connected"),
      ],
      rows: apps.map { app in
        [
          app.app, authorizationName(app.authorization.status),
          accuracyName(app.authorization.accuracy), String(app.regions),
          String(app.pendingEvents), app.connected ? "yes" : "no",
        ]
      }
    ).rendered + (purposes.isEmpty ? "" : "\nPurposes the apps gave:\n" + purposes.joined())
      + note
  }

  /// The `regions` reply as a table (coordinates in degrees, radius in metres; a beacon region
  /// shows `beacon` and its constraint, UUID then major and minor, in place of its centre).
  ///
  /// - Parameters:
  ///   - regions: The regions.
  ///   - app: The app they belong to, for the empty message.
  /// - Returns: The text, ending in a newline.
  package static func regions(_ regions: [DaemonRegionEntry], app: String) -> String {
    guard !regions.isEmpty else {
      return "\(ControlTable.clean(app)) monitors no region.\n"
    }
    return ControlTable(
      [
        .init("group"), .init("identifier"), .init("latitude", numeric: true),
        .init("longitude", numeric: true), .init("radius (m)", numeric: true), .init("state"),
        .init("notify"),
      ],
      rows: regions.map { entry in
        let region = entry.region
        var notify: [String] = []
        if region.notifyOnEntry { notify.append("entry") }
        if region.notifyOnExit { notify.append("exit") }
        let place =
          region.beacon.map { ["beacon", $0.description, "-"] }
          ?? [fixed(region.latitude, 6), fixed(region.longitude, 6), fixed(region.radius, 1)]
        return [entry.group, region.identifier] + place + [
          stateName(entry.state), notify.isEmpty ? "-" : notify.joined(separator: ","),
        ]
      }
    ).rendered
  }

  /// The `wifi` reply: what was forgotten, whether learning is on, how many access points are
  /// known (and mobile), and when one was last learned.
  ///
  /// - Parameter wifi: The status.
  /// - Returns: The text, ending in a newline.
  package static func wifi(_ wifi: DaemonWifiStatus) -> String {
    var text = ""
    if let forgotten = wifi.forgotten {
      text += "Forgot \(forgotten) access point\(forgotten == 1 ? "" : "s").\n"
    }
    text += "Wi-Fi learning: \(wifi.learning ? "on" : "off")\n"
    text += "Access points known: \(wifi.known) (\(wifi.mobile) mobile, not used)\n"
    if let last = wifi.lastLearned {
      text += "Last learned: \(timestamp(last))\n"
    } else {
      text += "Last learned: never\n"
    }
    return text
  }

  /// The name of a region state: `inside`, `outside` or `unknown`.
  ///
  /// - Parameter state: The state.
  /// - Returns: The name.
  package static func stateName(_ state: RegionState) -> String {
    switch state {
    case .unknown: return "unknown"
    case .inside: return "inside"
    case .outside: return "outside"
    }
  }

  /// A number with `digits` decimals (no locale, no exponent).
  static func fixed(_ value: Double, _ digits: Int) -> String {
    guard value.isFinite else { return String(value) }
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let rounded = (abs(value) * scale).rounded()
    guard rounded < 9e15 else { return String(value) }
    let whole = Int64(rounded / scale)
    var fraction = String(Int64(rounded) - whole * Int64(scale))
    while fraction.count < digits { fraction = "0" + fraction }
    let sign = value < 0 && rounded != 0 ? "-" : ""
    return digits == 0 ? "\(sign)\(whole)" : "\(sign)\(whole).\(fraction)"
  }

  /// Seconds with one decimal.
  static func seconds(_ value: Double) -> String { fixed(value, 1) }

  /// One JSON value on one line, object keys sorted; non-finite numbers as the protocol writes
  /// them (`"NaN"`, `"Infinity"`, `"-Infinity"`); integral numbers without a fraction.
  ///
  /// - Parameter value: The value.
  /// - Returns: The JSON text, without a newline.
  package static func json(_ value: DaemonJSON) -> String {
    var text = ""
    write(value, to: &text)
    return text
  }

  private static func write(_ value: DaemonJSON, to text: inout String) {
    switch value {
    case .null: text += "null"
    case .bool(let flag): text += flag ? "true" : "false"
    case .number(let number):
      if number.isNaN {
        text += "\"NaN\""
      } else if number.isInfinite {
        text += number > 0 ? "\"Infinity\"" : "\"-Infinity\""
      } else if number == number.rounded(), abs(number) < 9e15 {
        text += String(Int64(number))
      } else {
        text += "\(number)"
      }
    case .string(let string): JSONObjectWriter.appendString(string, to: &text)
    case .array(let elements):
      text += "["
      for (index, element) in elements.enumerated() {
        if index > 0 { text += "," }
        write(element, to: &text)
      }
      text += "]"
    case .object(let members):
      text += "{"
      for (index, key) in members.keys.sorted().enumerated() {
        if index > 0 { text += "," }
        JSONObjectWriter.appendString(key, to: &text)
        text += ":"
        if let member = members[key] { write(member, to: &text) }
      }
      text += "}"
    }
  }

}
