/// Splits a byte stream into protocol lines (`\n`-terminated; a `\r` before the `\n` is dropped),
/// each at most `limit` bytes long without its terminator.
///
/// Feed bytes with ``append(_:)`` as they arrive, take lines with ``next()``, and call
/// ``finish()`` at end of stream to learn whether the peer stopped in the middle of a line. A line
/// over the limit is reported once as ``Item/tooLarge`` as soon as the limit is passed (the rest of
/// it is not buffered: it is skipped up to its newline), so memory stays bounded by the limit
/// whatever the peer sends.
package struct DaemonLineReader: Sendable {
  /// One result.
  package enum Item: Sendable, Equatable {
    /// A complete line, without its terminator.
    case line([UInt8])
    /// A line passed the limit; its bytes are discarded up to the next newline.
    case tooLarge
    /// The stream ended after these many bytes of an unterminated line (from ``finish()``).
    case truncated(Int)
  }

  /// The protocol's line limit: 64 KiB.
  package static let defaultLimit = 65_536

  /// The longest line accepted, in bytes, without its terminator.
  package let limit: Int
  private var buffer: [UInt8] = []
  /// Where the current line starts in `buffer`.
  private var start = 0
  /// How far `buffer` has been searched for a newline.
  private var scanned = 0
  /// Skipping the rest of an oversized line.
  private var skipping = false

  /// Creates a reader.
  /// - Parameter limit: The longest line accepted (default 64 KiB).
  package init(limit: Int = DaemonLineReader.defaultLimit) {
    self.limit = max(1, limit)
  }

  /// The bytes held of an unfinished line.
  package var pendingByteCount: Int { buffer.count - start }

  /// The storage a reader keeps when it has nothing pending, bytes; more is given back.
  static let keptCapacity = 4096

  /// Adds bytes that arrived.
  /// - Parameter bytes: The bytes, in stream order.
  package mutating func append(_ bytes: some Collection<UInt8>) {
    compact()
    buffer.append(contentsOf: bytes)
  }

  /// Adds bytes that arrived, from a read buffer: the readers' own case, a concrete type so that
  /// the copy is one `memcpy` (the generic form, not specialised outside this module, appends
  /// byte by byte through the collection's witnesses: 5 % of an app's time per location through
  /// `locationd`, `locbench latency`).
  /// - Parameter bytes: The bytes, in stream order.
  package mutating func append(_ bytes: ArraySlice<UInt8>) {
    compact()
    buffer.append(contentsOf: bytes)
  }

  /// Drops the lines already taken when they are at least half the buffer.
  private mutating func compact() {
    if start > 0, start >= buffer.count / 2 {
      buffer.removeFirst(start)
      scanned -= start
      start = 0
    }
  }

  /// The next complete line, or an oversized-line report, or nil when more bytes are needed.
  package mutating func next() -> Item? {
    while true {
      if let newline = buffer[scanned...].firstIndex(of: UInt8(ascii: "\n")) {
        if skipping {
          skipping = false
          start = newline + 1
          scanned = start
          continue
        }
        var end = newline
        if end > start, buffer[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        let length = end - start
        let line = Array(buffer[start..<end])
        start = newline + 1
        scanned = start
        if length > limit { return .tooLarge }
        return .line(line)
      }
      scanned = buffer.count
      if start == buffer.count {
        // Everything read: give a burst's storage back (a daemon holds one reader per client).
        if buffer.capacity > Self.keptCapacity {
          buffer = []
        } else {
          buffer.removeAll(keepingCapacity: true)
        }
        start = 0
        scanned = 0
        if !skipping { return nil }
      }
      if skipping {
        buffer.removeAll(keepingCapacity: true)
        start = 0
        scanned = 0
        return nil
      }
      // One byte of slack for a "\r" that may precede the newline still to come.
      if buffer.count - start > limit + 1 {
        skipping = true
        buffer.removeAll(keepingCapacity: true)
        start = 0
        scanned = 0
        return .tooLarge
      }
      return nil
    }
  }

  /// At end of stream: `.truncated(n)` when `n` bytes of an unterminated line remain, else nil
  /// (also nil in the middle of an oversized line, already reported as ``Item/tooLarge``). The
  /// reader is empty afterwards.
  package mutating func finish() -> Item? {
    let remaining = buffer.count - start
    let wasSkipping = skipping
    buffer.removeAll()
    start = 0
    scanned = 0
    skipping = false
    return remaining > 0 && !wasSkipping ? .truncated(remaining) : nil
  }
}
