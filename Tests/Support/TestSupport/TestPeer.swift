import Foundation
import LocationModel
import LocationProtocol

#if canImport(Glibc)
  import Glibc
#endif

/// One raw connection to the daemon: writes lines, reads lines with a deadline on readiness.
package final class TestPeer {
  /// The connection (closed with this peer).
  package let fd: Int32
  private let reader: DeadlineLineReader
  private var nextPing = 1_000_000

  /// Connects to the socket at `path`.
  package init(path: String) throws {
    fd = try UnixSocket.connected(path: path)
    reader = DeadlineLineReader(fd: fd)
  }

  deinit { Glibc.close(fd) }

  /// Writes bytes as they are.
  package func sendRaw(_ bytes: [UInt8]) { UnixSocket.sendAll(fd, bytes) }

  /// Writes a line (the newline is added).
  package func send(_ line: String) { sendRaw(Array((line + "\n").utf8)) }

  /// Writes a message.
  package func send(_ message: DaemonMessage) { sendRaw(DaemonProtocol.encode(message)) }

  /// Closes the writing half (the daemon sees end of stream).
  package func shutdownWrite() { Glibc.shutdown(fd, Int32(SHUT_WR)) }

  /// The next line, or nil at end of stream; throws when nothing comes before the deadline.
  package func readLine(timeout: Double = 10) throws -> [UInt8]? {
    do {
      return try reader.next(timeout: timeout)
    } catch {
      throw TestFailure("\(error)")
    }
  }

  /// The next message; throws at end of stream or on a line that does not decode.
  package func next(timeout: Double = 10) throws -> DaemonMessage {
    guard let line = try readLine(timeout: timeout) else {
      throw TestFailure("the connection was closed")
    }
    return try DaemonProtocol.decode(line: line)
  }

  /// Sends a ping and returns every message that arrived before its reply.
  package func sync() throws -> [DaemonMessage] {
    nextPing += 1
    let id = nextPing
    send(.ping(id: id))
    var messages: [DaemonMessage] = []
    while true {
      let message = try next()
      if message == .reply(id: id, .done) { return messages }
      messages.append(message)
    }
  }

  /// Reads until end of stream; returns the messages read on the way.
  package func readUntilClosed() throws -> [DaemonMessage] {
    var messages: [DaemonMessage] = []
    while let line = try readLine() {
      messages.append(try DaemonProtocol.decode(line: line))
    }
    return messages
  }
}

extension DaemonMessage {
  /// The error code, if this is an error.
  package var errorCode: DaemonErrorCode? {
    if case .error(let error) = self { return error.code }
    return nil
  }

  /// The locations, if this is a locations delivery.
  package var fixes: [Fix]? {
    if case .locations(_, let fixes) = self { return fixes }
    return nil
  }
}
