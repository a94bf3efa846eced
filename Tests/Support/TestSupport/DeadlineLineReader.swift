import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Seconds on `CLOCK_MONOTONIC`, for deadlines.
package func monotonicSeconds() -> Double {
  var spec = timespec()
  clock_gettime(CLOCK_MONOTONIC, &spec)
  return Double(spec.tv_sec) + Double(spec.tv_nsec) * 1e-9
}

/// Nothing arrived on a descriptor before the deadline.
package struct LineTimeout: Error, CustomStringConvertible {
  package var description: String { "nothing read before the deadline" }
}

/// Reads lines from a descriptor (a socket to a daemon, a child's standard output or error) with
/// a deadline on each wait: `poll(2)`, then `read(2)` of what is there, `EINTR` retried. The
/// test harnesses' one way to read a line, so that a hung peer fails a test instead of hanging it.
package final class DeadlineLineReader {
  /// The descriptor read (not owned: the caller closes it).
  package let fd: Int32
  private var buffer: [UInt8] = []

  /// Creates a reader of `fd`.
  package init(fd: Int32) { self.fd = fd }

  /// Whether a whole line is already read and waiting.
  package var hasLine: Bool { buffer.contains(UInt8(ascii: "\n")) }

  /// The next line without its newline; at end of stream, what is left without a newline comes
  /// as a last line, then nil.
  /// - Parameter deadline: `monotonicSeconds()` after which the wait ends.
  /// - Throws: `LineTimeout` when no whole line arrived before the deadline.
  package func next(until deadline: Double) throws(LineTimeout) -> [UInt8]? {
    while true {
      if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
        let line = Array(buffer[..<newline])
        buffer.removeFirst(newline + 1)
        return line
      }
      let remaining = deadline - monotonicSeconds()
      guard remaining > 0 else { throw LineTimeout() }
      var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
      let ready = poll(&descriptor, 1, Int32(remaining * 1000) + 1)
      if ready < 0, errno == EINTR { continue }
      guard ready > 0 else { continue }
      var chunk = [UInt8](repeating: 0, count: 65_536)
      let count = read(fd, &chunk, chunk.count)
      if count < 0, errno == EINTR { continue }
      if count <= 0 {
        if buffer.isEmpty { return nil }
        defer { buffer = [] }
        return buffer
      }
      buffer.append(contentsOf: chunk[0..<count])
    }
  }

  /// `next(until:)` with a timeout in seconds from now.
  package func next(timeout: Double) throws(LineTimeout) -> [UInt8]? {
    try next(until: monotonicSeconds() + timeout)
  }
}
