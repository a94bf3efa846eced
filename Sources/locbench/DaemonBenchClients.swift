import Foundation

/// Many client connections in one thread: non-blocking sockets served by one `epoll` loop
/// (`poll()` where epoll cannot be set up), each with an incoming line buffer and an outgoing
/// queue. Lines are handed over with the `CLOCK_MONOTONIC` time at which the `read` that completed
/// them returned. A connection added with `reads: false` is never read (a peer that does not
/// read, for `locbench hostile`): only written, and closed when the other end hangs up.
final class DaemonBenchClients {
  private struct Connection {
    var fd: Int32
    var reads: Bool
    var inbox: [UInt8] = []
    var outbox: [UInt8] = []
    var isOpen = true
  }

  private var connections: [Connection] = []
  private var pollSet: [pollfd] = []
  private let epoll = DaemonBenchEpoll()
  private var ready: [(index: Int, events: UInt32)] = []
  private var scratch = [UInt8](repeating: 0, count: 1 << 18)
  /// Bytes read over all connections.
  private(set) var bytesRead = 0
  /// Lines handed over.
  private(set) var linesRead = 0
  /// Connections the peer closed (or that failed).
  private(set) var closedCount = 0

  /// The number of connections.
  var count: Int { connections.count }

  /// Whether connection `index` is still open.
  func isOpen(_ index: Int) -> Bool { connections[index].isOpen }

  /// Adds the non-blocking socket `fd`, read unless `reads` is false; returns its index.
  func add(_ fd: Int32, reads: Bool = true) -> Int {
    connections.append(Connection(fd: fd, reads: reads))
    pollSet.append(pollfd(fd: fd, events: reads ? Int16(POLLIN) : 0, revents: 0))
    epoll?.watch(
      fd, token: connections.count - 1, events: reads ? DaemonBenchEpoll.readable : 0, add: true)
    return connections.count - 1
  }

  /// Closes connection `index` (dropping what is still queued for it). Not from a `pump`
  /// handler, which reads the connection's buffer.
  func close(_ index: Int) { markClosed(index) }

  /// Queues `bytes` for connection `index` and writes as much as the socket takes now.
  func send(_ index: Int, _ bytes: [UInt8]) {
    guard connections[index].isOpen else { return }
    connections[index].outbox.append(contentsOf: bytes)
    flush(index)
  }

  /// Queues `text` (a line without its newline) for connection `index`.
  func send(_ index: Int, line text: String) {
    send(index, Array(text.utf8) + [10])
  }

  /// Bytes still queued for connection `index`.
  func pendingBytes(_ index: Int) -> Int { connections[index].outbox.count }

  private func flush(_ index: Int) {
    while !connections[index].outbox.isEmpty {
      let fd = connections[index].fd
      let written = connections[index].outbox.withUnsafeBytes {
        Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
      }
      if written > 0 {
        connections[index].outbox.removeFirst(written)
      } else if written < 0 && errno == EINTR {
        continue
      } else if written < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
        break
      } else {
        markClosed(index)
        return
      }
    }
    let wantsWrite = !connections[index].outbox.isEmpty
    let reads = connections[index].reads
    let events = (reads ? Int16(POLLIN) : 0) | (wantsWrite ? Int16(POLLOUT) : 0)
    if pollSet[index].events != events {
      pollSet[index].events = events
      epoll?.watch(
        connections[index].fd, token: index,
        events: (reads ? DaemonBenchEpoll.readable : 0)
          | (wantsWrite ? DaemonBenchEpoll.writable : 0),
        add: false)
    }
  }

  private func markClosed(_ index: Int) {
    guard connections[index].isOpen else { return }
    connections[index].isOpen = false
    connections[index].outbox = []
    epoll?.remove(connections[index].fd)
    Glibc.close(connections[index].fd)
    pollSet[index].fd = -1
    closedCount += 1
  }

  /// Closes every connection.
  func closeAll() {
    for index in connections.indices { markClosed(index) }
  }

  /// Waits up to `timeoutMilliseconds` for readiness, then reads every readable connection and
  /// writes every writable one; `handler` gets each complete line (without `\n`).
  /// - Parameters:
  ///   - timeoutMilliseconds: the longest wait; 0 polls without waiting.
  ///   - handler: called with the connection index, the line and the time its read returned.
  /// - Returns: whether any connection was ready.
  @discardableResult
  func pump(
    timeoutMilliseconds: Int32, handler: (Int, UnsafeRawBufferPointer, UInt64) -> Void
  ) -> Bool {
    if let epoll {
      ready.removeAll(keepingCapacity: true)
      _ = epoll.wait(timeoutMilliseconds: timeoutMilliseconds) { ready.append(($0, $1)) }
      for (index, events) in ready where connections[index].isOpen {
        if events & DaemonBenchEpoll.writable != 0 { flush(index) }
        let readMask = DaemonBenchEpoll.readable | DaemonBenchEpoll.hangUp | DaemonBenchEpoll.error
        if events & readMask != 0 { readAvailable(index, handler: handler) }
        let endMask = DaemonBenchEpoll.hangUp | DaemonBenchEpoll.error
        if !connections[index].reads && events & endMask != 0 { markClosed(index) }
      }
      return !ready.isEmpty
    }
    let readyCount = poll(&pollSet, nfds_t(pollSet.count), timeoutMilliseconds)
    guard readyCount > 0 else { return false }
    for index in pollSet.indices where pollSet[index].revents != 0 {
      let events = pollSet[index].revents
      pollSet[index].revents = 0
      if events & Int16(POLLOUT) != 0 { flush(index) }
      if events & (Int16(POLLIN) | Int16(POLLHUP) | Int16(POLLERR)) != 0 {
        readAvailable(index, handler: handler)
      }
      if !connections[index].reads && events & (Int16(POLLHUP) | Int16(POLLERR)) != 0 {
        markClosed(index)
      }
    }
    return true
  }

  private func readAvailable(
    _ index: Int, handler: (Int, UnsafeRawBufferPointer, UInt64) -> Void
  ) {
    let fd = connections[index].fd
    while connections[index].isOpen && connections[index].reads {
      let count = scratch.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
      let time = DaemonBenchSystem.now()
      if count == 0 {
        markClosed(index)
        return
      }
      if count < 0 {
        if errno == EINTR { continue }
        if errno != EAGAIN && errno != EWOULDBLOCK { markClosed(index) }
        return
      }
      bytesRead += count
      connections[index].inbox.append(contentsOf: scratch[0..<count])
      var consumed = 0
      connections[index].inbox.withUnsafeBytes { bytes in
        guard let base = bytes.baseAddress else { return }
        var start = 0
        while start < bytes.count,
          let newline = memchr(base + start, 10, bytes.count - start)
        {
          let position = base.distance(to: UnsafeRawPointer(newline))
          handler(index, UnsafeRawBufferPointer(rebasing: bytes[start..<position]), time)
          linesRead += 1
          start = position + 1
        }
        consumed = start
      }
      if consumed > 0 { connections[index].inbox.removeFirst(consumed) }
      if count < scratch.count { return }
    }
  }
}

/// Byte searches on a received line.
enum DaemonBenchLine {
  /// The offset just past the first occurrence of `needle` in `line` at or after `from`.
  static func end(of needle: [UInt8], in line: UnsafeRawBufferPointer, from: Int = 0) -> Int? {
    let count = needle.count
    guard count > 0, line.count >= count else { return nil }
    var start = from
    let first = needle[0]
    while start + count <= line.count {
      if line[start] == first {
        var matched = 1
        while matched < count && line[start + matched] == needle[matched] { matched += 1 }
        if matched == count { return start + count }
      }
      start += 1
    }
    return nil
  }

  /// Whether `line` contains `needle`.
  static func contains(_ needle: [UInt8], in line: UnsafeRawBufferPointer) -> Bool {
    end(of: needle, in: line) != nil
  }

  /// The JSON number starting at `offset` (after optional spaces), with its end.
  static func number(in line: UnsafeRawBufferPointer, at offset: Int) -> (Double, Int)? {
    var start = offset
    while start < line.count && line[start] == UInt8(ascii: " ") { start += 1 }
    var end = start
    while end < line.count {
      let byte = line[end]
      let isNumberByte =
        (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "-")
        || byte == UInt8(ascii: "+") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e")
        || byte == UInt8(ascii: "E")
      if !isNumberByte { break }
      end += 1
    }
    guard end > start, let value = Double(String(decoding: line[start..<end], as: UTF8.self))
    else { return nil }
    return (value, end)
  }

  /// Unix milliseconds of an ISO 8601 UTC time `YYYY-MM-DDTHH:MM:SS[.fff]Z` at `offset`.
  static func isoMilliseconds(in line: UnsafeRawBufferPointer, at offset: Int) -> Int64? {
    func digits(_ start: Int, _ count: Int) -> Int? {
      guard start + count <= line.count else { return nil }
      var value = 0
      for position in start..<(start + count) {
        let byte = line[position]
        guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
        value = value * 10 + Int(byte - UInt8(ascii: "0"))
      }
      return value
    }
    guard let year = digits(offset, 4), let month = digits(offset + 5, 2),
      let day = digits(offset + 8, 2), let hour = digits(offset + 11, 2),
      let minute = digits(offset + 14, 2), let second = digits(offset + 17, 2)
    else { return nil }
    var milliseconds = 0
    var position = offset + 19
    if position < line.count && line[position] == UInt8(ascii: ".") {
      var scale = 100
      position += 1
      while position < line.count, let digit = digits(position, 1) {
        milliseconds += digit * scale
        scale /= 10
        position += 1
      }
    }
    var calendar = tm()
    calendar.tm_year = Int32(year - 1900)
    calendar.tm_mon = Int32(month - 1)
    calendar.tm_mday = Int32(day)
    calendar.tm_hour = Int32(hour)
    calendar.tm_min = Int32(minute)
    calendar.tm_sec = Int32(second)
    return Int64(timegm(&calendar)) * 1000 + Int64(milliseconds)
  }
}
