import Foundation
import LocationFormats
import LocationModel
import LocationProtocol

#if canImport(Glibc)
  import Glibc
#endif

// `locationctl export`: the daemon's track history, read a page at a time (`history`) and
// written as GPX or GeoJSON as the pages come, so the whole track is never held.
extension LocationControlCommand {
  /// Reads every page between the bounds and writes the document to the file or standard output.
  /// A file is written under a temporary name beside it and renamed when complete, so a failure
  /// never leaves half a document under the name asked for.
  static func performExport(
    _ request: ExportRequest, bounds: (since: Double, until: Double?), socket: ControlSocket,
    io: ControlIO
  ) throws(ControlError) {
    let sink = try ExportSink(path: request.output, io: io)
    do throws(ControlError) {
      try handshake(socket, role: .control)
      var document = HistoryDocument(format: request.format)
      try sink.write(document.begin())
      var cursor: DaemonHistoryCursor?
      var id = requestID
      repeat {
        let query = DaemonHistoryQuery(since: bounds.since, until: bounds.until, after: cursor)
        try send(.history(id: id, query: query), on: socket)
        let page = try awaitHistoryReply(id: id, socket: socket)
        try sink.write(document.add(page.points))
        if let next = page.next, next == cursor {
          throw ControlError(
            .protocolViolation, "locationd at \(socket.path) sent the same page of history twice")
        }
        cursor = page.next
        id += 1
      } while cursor != nil
      try sink.write(document.end())
      try sink.finish()
      var note = "\(document.count) point\(document.count == 1 ? "" : "s")"
      if document.skipped > 0 { note += " (\(document.skipped) without a valid position skipped)" }
      if let path = request.output {
        io.output("Exported \(note) to \(path).\n")
      } else if document.count == 0 || document.skipped > 0 {
        io.error("locationctl: exported \(note)\n")
      }
    } catch {
      sink.abandon()
      throw error
    }
  }

  /// Reads until the `history` reply to `id`; an `error` for it is thrown.
  static func awaitHistoryReply(id: Int, socket: ControlSocket) throws(ControlError)
    -> DaemonHistoryPage
  {
    while true {
      guard let line = try socket.readLine(timeout: replyTimeout) else {
        throw ControlError(
          .protocolViolation, "locationd at \(socket.path) closed the connection before replying")
      }
      switch try decode(line, from: socket) {
      case .some(.reply(let replyID, .history(let page))) where replyID == id:
        return page
      case .some(.error(let error)) where error.id == id || error.id == nil:
        throw daemonError(error, socket: socket, role: .control)
      case .some, .none:
        continue
      }
    }
  }
}

/// The text of an exported document, piece by piece: ``begin()``, ``add(_:)`` for each page,
/// ``end()``. GPX is one `<trk>` of one `<trkseg>` (`GPXTrackWriter`'s header, points and
/// closing tags); GeoJSON a FeatureCollection of Point features (`GeoJSONTrackWriter`). A point
/// without a valid coordinate or a finite time is skipped and counted.
package struct HistoryDocument: Sendable {
  /// The format.
  package let format: ExportRequest.Format
  /// Points written.
  package private(set) var count = 0
  /// Points skipped.
  package private(set) var skipped = 0

  /// A document of `format`, nothing written yet.
  package init(format: ExportRequest.Format) { self.format = format }

  /// The text before the first point.
  package func begin() -> String {
    switch format {
    case .gpx: return GPXTrackWriter.header(creator: "locationctl", name: "locationd history")
    case .geojson: return GeoJSONTrackWriter.header
    }
  }

  /// The text of some points, in order.
  package mutating func add(_ fixes: [Fix]) -> String {
    var text = ""
    for fix in fixes {
      guard fix.hasValidCoordinate, fix.time.isFinite else {
        skipped += 1
        continue
      }
      switch format {
      case .gpx:
        text += GPXTrackWriter.trackPoint(fix)
      case .geojson:
        if count > 0 { text += GeoJSONTrackWriter.separator }
        text += GeoJSONTrackWriter.feature(fix)
      }
      count += 1
    }
    return text
  }

  /// The text after the last point.
  package func end() -> String {
    switch format {
    case .gpx: return String(decoding: GPXTrackWriter.tail, as: UTF8.self)
    case .geojson: return GeoJSONTrackWriter.footer
    }
  }
}

/// Where an export goes: standard output, or a file written under a temporary name and renamed
/// into place by ``finish()``.
final class ExportSink {
  private let io: ControlIO
  private let path: String?
  private let temporary: String?
  private var descriptor: Int32 = -1

  init(path: String?, io: ControlIO) throws(ControlError) {
    self.io = io
    self.path = path
    guard let path else {
      temporary = nil
      return
    }
    let temporary = path + ".partial-\(getpid())"
    self.temporary = temporary
    descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
    guard descriptor >= 0 else {
      throw ControlError(.io, "\(path): cannot be written: \(ControlSocket.reason(errno))")
    }
  }

  deinit { abandon() }

  func write(_ text: String) throws(ControlError) {
    guard !text.isEmpty else { return }
    guard let path else {
      io.output(text)
      return
    }
    var bytes = Array(text.utf8)
    var done = 0
    while done < bytes.count {
      let written = bytes.withUnsafeMutableBytes { raw -> Int in
        guard let base = raw.baseAddress else { return 0 }
        return Glibc.write(descriptor, base + done, raw.count - done)
      }
      if written < 0 {
        if errno == EINTR { continue }
        throw ControlError(.io, "\(path): cannot be written: \(ControlSocket.reason(errno))")
      }
      done += written
    }
  }

  /// Closes the file and gives it its name.
  func finish() throws(ControlError) {
    guard let path, let temporary, descriptor >= 0 else { return }
    let synced = fsync(descriptor) == 0 || errno == EINVAL
    let code = errno
    close(descriptor)
    descriptor = -1
    guard synced, rename(temporary, path) == 0 else {
      let reason = ControlSocket.reason(synced ? errno : code)
      unlink(temporary)
      throw ControlError(.io, "\(path): cannot be written: \(reason)")
    }
  }

  /// Removes the unfinished file, if any.
  func abandon() {
    guard let temporary, descriptor >= 0 else { return }
    close(descriptor)
    descriptor = -1
    unlink(temporary)
  }
}
