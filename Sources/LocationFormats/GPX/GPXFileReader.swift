import Foundation

/// Reads the points of a GPX file one at a time, decoding it in chunks as they are needed.
///
/// Memory stays bounded by the chunk size whatever the file's size: this is what a replay of a
/// long recording uses. Every complete point before an XML error is returned before the error is
/// thrown.
///
/// A reader is not thread-safe; use it from one task or thread at a time.
package final class GPXFileReader {
  /// The file's path.
  package let path: String
  private let handle: FileHandle
  private let decoder: GPXDecoder
  private let chunkSize: Int
  private var buffered: [GPXPoint] = []
  private var nextIndex = 0
  private var atEnd = false
  private var pendingError: FormatError?

  /// Opens a GPX file.
  ///
  /// - Parameters:
  ///   - path: the file's path; named in errors and used as each fix's `source`.
  ///   - chunkSize: how many bytes to read at a time (at least 4096).
  /// - Throws: `.unreadable` when the file cannot be opened.
  package init(path: String, chunkSize: Int = 1 << 18) throws(FormatError) {
    self.path = path
    self.chunkSize = max(chunkSize, 4096)
    guard let handle = FileHandle(forReadingAtPath: path) else {
      throw FormatError(.unreadable, "cannot open the file for reading", file: path)
    }
    self.handle = handle
    decoder = GPXDecoder(file: path)
  }

  deinit {
    try? handle.close()
  }

  /// Returns the next valid point in document order, or nil at the end of the file.
  ///
  /// - Throws: `.unreadable` when reading fails; `.malformed` when the XML is not well-formed
  ///   (after the points before the error have been returned); `.empty` at the end of a file
  ///   without a single valid point.
  package func next() throws(FormatError) -> GPXPoint? {
    while nextIndex == buffered.count {
      if let pendingError { throw pendingError }
      if atEnd { return nil }
      try fill()
    }
    let point = buffered[nextIndex]
    nextIndex += 1
    return point
  }

  private func fill() throws(FormatError) {
    buffered.removeAll(keepingCapacity: true)
    nextIndex = 0
    let data: Data
    do {
      data = try handle.read(upToCount: chunkSize) ?? Data()
    } catch {
      throw FormatError(.unreadable, "read failed: \(error.localizedDescription)", file: path)
    }
    let result: Result<Void, FormatError>
    if data.isEmpty {
      atEnd = true
      result = Result { () throws(FormatError) in
        try decoder.finish()
        try decoder.checkNotEmpty()
      }
    } else {
      result = data.withUnsafeBytes { bytes in
        Result { () throws(FormatError) in try decoder.feed(bytes) }
      }
    }
    if case .failure(let error) = result { pendingError = error }
    buffered = decoder.takePoints()
  }

  /// Warnings so far (see ``GPXDecoder/warnings``).
  package var warnings: [FormatError] { decoder.warnings }
  /// The `version` attribute of the root `<gpx>` element, once read.
  package var version: String? { decoder.version }
  /// The `creator` attribute of the root `<gpx>` element, once read.
  package var creator: String? { decoder.creator }
}
