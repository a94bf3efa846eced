import Foundation
import LocationFormats
import LocationModel
import LocationProtocol

// `locationctl wifi import FILE`: an Ichnaea-format CSV of access points read here, sent to the
// daemon in batches (`wifiImport`), which adds the ones it does not know yet.
extension LocationControlCommand {
  /// The largest file read, bytes (a country's worth of access points fits).
  static let maximumImportBytes = 1 << 30

  /// Reads and decodes the file, sends it in batches, and returns the text to print.
  static func performImport(path: String, options: ControlOptions, socket: ControlSocket)
    throws(ControlError) -> String
  {
    let decoded = try readImport(path: path)
    try handshake(socket, role: .control)
    var imported = 0
    var last: DaemonWifiStatus?
    var lastLine = ""
    let entries = decoded.rows.map {
      DaemonImportedAccessPoint(
        bssid: AccessPointReading.text(bssid: $0.bssid), latitude: $0.latitude,
        longitude: $0.longitude, radius: $0.radius, samples: $0.samples, time: $0.time)
    }
    var start = 0
    var id = requestID
    while start < entries.count || (entries.isEmpty && last == nil) {
      let end = min(start + DaemonImportedAccessPoint.maximumPerMessage, entries.count)
      try send(.wifiImport(id: id, accessPoints: Array(entries[start..<end])), on: socket)
      let (status, line) = try awaitWifiReply(id: id, socket: socket)
      imported += status.imported ?? 0
      last = status
      lastLine = line
      start = end
      id += 1
    }
    if options.json { return try jsonPayload(line: lastLine, command: options.command) + "\n" }
    var text =
      "Read \(decoded.rows.count) access point\(decoded.rows.count == 1 ? "" : "s") from \(path)"
    if decoded.skipped > 0 {
      text += "; \(decoded.skipped) row\(decoded.skipped == 1 ? "" : "s") skipped"
      if let first = decoded.errors.first { text += " (first: \(first))" }
    }
    text += ".\nImported \(imported) new; "
    text += "\(last?.known ?? 0) known in all (what this machine learned itself is kept).\n"
    return text
  }

  /// The file, decoded; a file that cannot be read or has no usable header is an error.
  static func readImport(path: String) throws(ControlError) -> AccessPointCSV.Decoded {
    guard let handle = FileHandle(forReadingAtPath: path) else {
      throw ControlError(.io, "\(path): cannot be read")
    }
    defer { try? handle.close() }
    let data: Data
    do {
      data = try handle.read(upToCount: maximumImportBytes + 1) ?? Data()
    } catch {
      throw ControlError(.io, "\(path): \(error)")
    }
    guard data.count <= maximumImportBytes else {
      throw ControlError(.io, "\(path): larger than \(maximumImportBytes >> 20) MiB")
    }
    do {
      return try AccessPointCSV.decode(String(decoding: data, as: UTF8.self), file: path)
    } catch {
      throw ControlError(.io, error.description)
    }
  }

  /// Reads until the `wifi` reply to `id`; an `error` for it is thrown.
  static func awaitWifiReply(id: Int, socket: ControlSocket) throws(ControlError)
    -> (DaemonWifiStatus, String)
  {
    while true {
      guard let line = try socket.readLine(timeout: replyTimeout) else {
        throw ControlError(
          .protocolViolation, "locationd at \(socket.path) closed the connection before replying")
      }
      switch try decode(line, from: socket) {
      case .some(.reply(let replyID, .wifi(let status))) where replyID == id:
        return (status, line)
      case .some(.error(let error)) where error.id == id || error.id == nil:
        throw daemonError(error, socket: socket, role: .control)
      case .some, .none:
        continue
      }
    }
  }
}
