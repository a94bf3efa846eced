import Foundation

/// A Unix stream server standing in for a GNSS receiver behind GeoClue's `[network-nmea]
/// nmea-socket=`: every client gets the given NMEA lines, in a loop, paced like a 20 Hz receiver
/// (a device's own rhythm, not a test waiting on time), until it disconnects or the server stops.
final class GeoClueNMEAServer: @unchecked Sendable {
  // Safe: `listener`, `lines` and `wakeup` are immutable after init; the descriptors are closed
  // only by the threads that use them; `group` is thread-safe; `connected` is guarded by
  // `condition`.
  private let listener: Int32
  private let lines: [String]
  /// A pipe whose read end becomes readable when the server stops.
  private let wakeup: (read: Int32, write: Int32)
  private let group = DispatchGroup()
  /// Guards `connected`.
  private let condition = NSCondition()
  private var connected = 0

  /// Lines per second written to each client.
  static let rate = 20.0

  /// Listens on `path` and starts accepting.
  init(path: String, lines: [String]) throws {
    self.lines = lines
    var pipeFDs: [Int32] = [-1, -1]
    guard pipe(&pipeFDs) == 0 else { throw Self.failure("pipe") }
    wakeup = (pipeFDs[0], pipeFDs[1])
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw Self.failure("socket") }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let pathBytes = Array(path.utf8)
    guard pathBytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
      close(fd)
      throw Self.failure("socket path too long")
    }
    withUnsafeMutableBytes(of: &address.sun_path) { buffer in
      for (index, byte) in pathBytes.enumerated() { buffer[index] = byte }
    }
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
      }
    }
    guard bound == 0, listen(fd, 4) == 0 else {
      close(fd)
      throw Self.failure("bind/listen \(path)")
    }
    listener = fd
    group.enter()
    Thread { [self] in
      acceptLoop()
      group.leave()
    }.start()
  }

  deinit {
    close(wakeup.read)
    close(wakeup.write)
  }

  private static func failure(_ what: String) -> NSError {
    NSError(
      domain: "GeoClueNMEAServer", code: Int(errno),
      userInfo: [NSLocalizedDescriptionKey: "\(what): \(String(cString: strerror(errno)))"])
  }

  /// Stops accepting and writing, and waits (bounded) for the threads.
  func stop() {
    var byte: UInt8 = 1
    _ = write(wakeup.write, &byte, 1)
    _ = group.wait(timeout: .now() + 2)
  }

  private func acceptLoop() {
    defer { close(listener) }
    while true {
      var descriptors = [
        pollfd(fd: listener, events: Int16(POLLIN), revents: 0),
        pollfd(fd: wakeup.read, events: Int16(POLLIN), revents: 0),
      ]
      guard poll(&descriptors, 2, -1) >= 0 || errno == EINTR else { return }
      if descriptors[1].revents != 0 { return }
      guard descriptors[0].revents != 0 else { continue }
      let client = accept(listener, nil, nil)
      guard client >= 0 else { continue }
      group.enter()
      Thread { [self] in
        serve(client)
        group.leave()
      }.start()
    }
  }

  /// The number of clients connected now.
  var connectedClients: Int {
    condition.lock()
    defer { condition.unlock() }
    return connected
  }

  /// Waits until `predicate` holds for the number of connected clients, at most `timeout`
  /// seconds; returns whether it holds.
  func waitForClients(timeout: Double, until predicate: (Int) -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    condition.lock()
    defer { condition.unlock() }
    while !predicate(connected) {
      guard condition.wait(until: deadline) else { return predicate(connected) }
    }
    return true
  }

  private func changeConnected(by delta: Int) {
    condition.lock()
    connected += delta
    condition.broadcast()
    condition.unlock()
  }

  /// Writes the lines in a loop; returns when the client goes away or the server stops.
  private func serve(_ client: Int32) {
    changeConnected(by: 1)
    defer {
      close(client)
      changeConnected(by: -1)
    }
    let pause = Int32(1_000 / Self.rate)
    while true {
      for line in lines {
        let bytes = Array((line + "\r\n").utf8)
        guard send(client, bytes, bytes.count, Int32(MSG_NOSIGNAL)) == bytes.count else { return }
        var descriptors = [
          pollfd(fd: client, events: Int16(POLLIN), revents: 0),
          pollfd(fd: wakeup.read, events: Int16(POLLIN), revents: 0),
        ]
        guard poll(&descriptors, 2, pause) >= 0 || errno == EINTR else { return }
        if descriptors[1].revents != 0 { return }
        if descriptors[0].revents != 0 {
          var buffer = [UInt8](repeating: 0, count: 256)
          if recv(client, &buffer, buffer.count, 0) <= 0 { return }
        }
      }
    }
  }
}
