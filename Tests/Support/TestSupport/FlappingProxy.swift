import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// A TCP proxy on loopback for tests of a network that flaps (issue 18): it listens on a free
/// port of 127.0.0.1 and forwards the bytes of every connection, both ways, to a target port,
/// on a thread of its own (poll(2)). The test can cut every current connection (a reset, or an
/// orderly close), refuse new connections for a while (each is closed as soon as it is
/// accepted), and stall the current connections (nothing forwarded, nothing closed: a
/// half-open connection) until it resumes them.
///
/// Each accepted connection is connected to the target at once (a blocking connect: the
/// target is a server on loopback that accepts). The descriptors are the proxy thread's alone: the test's orders are queued for it and
/// answered once carried out. `stop()` (or the object going away) closes them all and waits
/// for the thread to end.
package final class FlappingProxy: Sendable {
  /// What the proxy has done so far.
  package struct Counts: Sendable, Equatable {
    /// Connections accepted and forwarded.
    package var forwarded = 0
    /// Connections closed as soon as they were accepted (refused).
    package var refused = 0
    /// Connections cut by `cut`.
    package var cut = 0
    /// Connections that ended by themselves (either side closed or failed).
    package var ended = 0
    /// Connections open now.
    package var open = 0
  }

  /// Which way a stall holds the bytes.
  package enum Direction: Sendable {
    /// From the connecting side to the target (a publisher's messages).
    case toTarget
    /// From the target back to the connecting side (a broker's acknowledgements).
    case toClient
    /// Both ways.
    case both
  }

  private enum Order: Sendable {
    case cut(reset: Bool)
    case stall(Direction)
    case resume
    case stalledBytes
    case stop
  }

  private final class Reply: Sendable {
    let done = DispatchSemaphore(value: 0)
    let value = Mutex(0)
  }

  /// What the proxy's thread shares with the test's (the thread holds this, not the proxy, so
  /// that a proxy let go stops its thread).
  private final class Shared: Sendable {
    let targetPort: Int
    let listener: Int32
    let wakeRead: Int32
    let orders = Mutex<[(Order, Reply)]>([])
    let refusing = Mutex(false)
    let counters = Mutex(Counts())
    let finished = DispatchSemaphore(value: 0)

    init(targetPort: Int, listener: Int32, wakeRead: Int32) {
      self.targetPort = targetPort
      self.listener = listener
      self.wakeRead = wakeRead
    }
  }

  /// The proxy's port on 127.0.0.1.
  package let port: Int
  /// The port it forwards to on 127.0.0.1.
  package var targetPort: Int { shared.targetPort }
  private let shared: Shared
  private let wakeWrite: Int32
  private let stopped = Mutex(false)

  /// Starts a proxy to 127.0.0.1:`targetPort`.
  package init(targetPort: Int) throws {
    let (listener, port) = try Loopback.listening(backlog: 16)
    var pipeEnds: [Int32] = [-1, -1]
    guard pipe(&pipeEnds) == 0 else {
      close(listener)
      throw TestFailure("pipe: \(String(cString: strerror(errno)))")
    }
    for fd in pipeEnds {
      _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
      _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    }
    self.port = port
    wakeWrite = pipeEnds[1]
    let shared = Shared(targetPort: targetPort, listener: listener, wakeRead: pipeEnds[0])
    self.shared = shared
    let thread = Thread {
      var forwarder = Forwarder(shared: shared)
      forwarder.run()
    }
    thread.name = "FlappingProxy"
    thread.start()
  }

  deinit { stop() }

  /// What the proxy has done so far.
  package var counts: Counts { shared.counters.withLock { $0 } }

  /// Cuts every connection open now: with `reset`, both sides get a reset (`SO_LINGER` 0, as a
  /// router that lost the connection's state would answer); otherwise an orderly close.
  /// - Returns: how many connections were cut.
  @discardableResult
  package func cut(reset: Bool = true) -> Int { order(.cut(reset: reset)) }

  /// Refuses (true) or forwards again (false) new connections: a refused connection is accepted
  /// and reset at once, before any byte is read.
  package func refuse(_ refuse: Bool) { shared.refusing.withLock { $0 = refuse } }

  /// Stops forwarding on every connection open now, without closing it, both ways or one way:
  /// what is sent that way waits in the proxy's socket buffers until `resume()`. Later
  /// connections are forwarded.
  /// - Returns: how many connections were stalled.
  @discardableResult
  package func stall(_ direction: Direction = .both) -> Int { order(.stall(direction)) }

  /// Forwards again on the stalled connections.
  package func resume() { order(.resume) }

  /// Bytes held by the stalls (read or not): what the connections' ends sent into them.
  package func stalledBytes() -> Int { order(.stalledBytes) }

  /// Closes every connection and the listening socket and waits for the proxy's thread to end.
  /// Safe to call more than once.
  package func stop() {
    let first = stopped.withLock { stopped -> Bool in
      defer { stopped = true }
      return !stopped
    }
    guard first else { return }
    order(.stop)
    if shared.finished.wait(timeout: .now() + 60) == .timedOut {
      Issue.record("FlappingProxy's thread did not end")
      return
    }
    close(shared.wakeRead)
    close(wakeWrite)
  }

  @discardableResult
  private func order(_ order: Order) -> Int {
    let reply = Reply()
    shared.orders.withLock { $0.append((order, reply)) }
    var byte: UInt8 = 1
    _ = write(wakeWrite, &byte, 1)
    guard reply.done.wait(timeout: .now() + 60) == .success else {
      Issue.record("FlappingProxy did not carry out \(order) in 60 s")
      return -1
    }
    return reply.value.withLock { $0 }
  }

  // MARK: On the proxy's thread

  /// One forwarded connection: the accepted socket, the one to the target, and what was read
  /// from each and not yet written to the other.
  private final class Link {
    let client: Int32
    let upstream: Int32
    var toUpstream: [UInt8] = []
    var toClient: [UInt8] = []
    /// Stalled one way or both.
    var holdToUpstream = false
    var holdToClient = false
    /// One side ended: what is buffered is written, then both are closed.
    var ending = false

    init(client: Int32, upstream: Int32) {
      self.client = client
      self.upstream = upstream
    }

    func close(reset: Bool) {
      for fd in [client, upstream] {
        if reset {
          var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
          setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<linger>.size))
        }
        Glibc.close(fd)
      }
    }
  }

  /// The proxy's loop; owns the descriptors.
  private struct Forwarder {
    let shared: Shared
    var links: [Link] = []
    /// The most bytes buffered one way before the proxy stops reading that side.
    let bufferLimit = 1 << 16

    init(shared: Shared) { self.shared = shared }

    mutating func run() {
      var running = true
      while running {
        var descriptors = [
          Glibc.pollfd(fd: shared.wakeRead, events: Int16(POLLIN), revents: 0),
          Glibc.pollfd(fd: shared.listener, events: Int16(POLLIN), revents: 0),
        ]
        for link in links {
          descriptors.append(
            interest(
              link.client, reading: link.holdToUpstream || link.ending ? nil : link.toUpstream,
              writing: link.holdToClient ? [] : link.toClient))
          descriptors.append(
            interest(
              link.upstream, reading: link.holdToClient || link.ending ? nil : link.toClient,
              writing: link.holdToUpstream ? [] : link.toUpstream))
        }
        let ready = poll(&descriptors, nfds_t(descriptors.count), -1)
        if ready < 0 {
          if errno == EINTR { continue }
          Issue.record("FlappingProxy: poll: \(String(cString: strerror(errno)))")
          break
        }
        // Links first (their descriptors are indexed as polled), then new connections, then
        // the test's orders.
        var kept: [Link] = []
        for (index, link) in links.enumerated() {
          if service(
            link, client: descriptors[2 + 2 * index].revents,
            upstream: descriptors[3 + 2 * index].revents)
          {
            kept.append(link)
          } else {
            link.close(reset: false)
            shared.counters.withLock {
              $0.ended += 1
              $0.open -= 1
            }
          }
        }
        links = kept
        if descriptors[1].revents != 0 { accept() }
        if descriptors[0].revents != 0 { running = carryOutOrders() }
      }
      for link in links { link.close(reset: false) }
      links.removeAll()
      close(shared.listener)
      shared.counters.withLock { $0.open = 0 }
      shared.finished.signal()
    }

    /// What to poll `fd` for: reading while its buffer (nil: not read now) has room, writing
    /// while there is something to write. Nothing: left out (a hung-up peer would wake the
    /// loop again and again).
    private func interest(_ fd: Int32, reading: [UInt8]?, writing: [UInt8]) -> Glibc.pollfd {
      var events: Int16 = 0
      if let reading, reading.count < bufferLimit { events |= Int16(POLLIN) }
      if !writing.isEmpty { events |= Int16(POLLOUT) }
      return Glibc.pollfd(fd: events == 0 ? -1 : fd, events: events, revents: 0)
    }

    /// Reads and writes what `poll` said is ready. Returns false when the link is over.
    private func service(_ link: Link, client: Int16, upstream: Int16) -> Bool {
      let failure = Int16(POLLERR | POLLNVAL)
      if client & failure != 0 || upstream & failure != 0 { return false }
      let readable = Int16(POLLIN | POLLHUP)
      if !link.ending, !link.holdToUpstream, client & readable != 0,
        !read(link.client, into: &link.toUpstream)
      {
        link.ending = true
      }
      if !link.ending, !link.holdToClient, upstream & readable != 0,
        !read(link.upstream, into: &link.toClient)
      {
        link.ending = true
      }
      if !link.holdToUpstream, !write(link.upstream, from: &link.toUpstream) { return false }
      if !link.holdToClient, !write(link.client, from: &link.toClient) { return false }
      return !(link.ending && link.toUpstream.isEmpty && link.toClient.isEmpty)
    }

    /// Reads what is there; false at the end of the stream or on an error.
    private func read(_ fd: Int32, into buffer: inout [UInt8]) -> Bool {
      var chunk = [UInt8](repeating: 0, count: bufferLimit)
      let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
      if count > 0 {
        buffer.append(contentsOf: chunk[0..<count])
        return true
      }
      return count < 0 && (errno == EAGAIN || errno == EINTR)
    }

    /// Writes what it can of `buffer`; false on an error (the peer is gone).
    private func write(_ fd: Int32, from buffer: inout [UInt8]) -> Bool {
      guard !buffer.isEmpty else { return true }
      let count = buffer.withUnsafeBytes {
        send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
      }
      if count > 0 {
        buffer.removeFirst(count)
        return true
      }
      return count < 0 && (errno == EAGAIN || errno == EINTR)
    }

    private mutating func accept() {
      let client = Glibc.accept(shared.listener, nil, nil)
      guard client >= 0 else { return }
      _ = fcntl(client, F_SETFD, FD_CLOEXEC)
      _ = fcntl(client, F_SETFL, fcntl(client, F_GETFL) | O_NONBLOCK)
      if shared.refusing.withLock({ $0 }) {
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(client, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<linger>.size))
        close(client)
        shared.counters.withLock { $0.refused += 1 }
        return
      }
      let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
      var address = Loopback.loopbackAddress(port: shared.targetPort)
      let connected =
        upstream >= 0
        && withUnsafePointer(to: &address) {
          $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
          }
        }
      guard connected, fcntl(upstream, F_SETFL, fcntl(upstream, F_GETFL) | O_NONBLOCK) == 0
      else {
        if upstream >= 0 { close(upstream) }
        close(client)
        shared.counters.withLock { $0.ended += 1 }
        return
      }
      links.append(Link(client: client, upstream: upstream))
      shared.counters.withLock {
        $0.forwarded += 1
        $0.open += 1
      }
    }

    /// Carries out the queued orders; false once told to stop.
    private mutating func carryOutOrders() -> Bool {
      var drain = [UInt8](repeating: 0, count: 64)
      while Glibc.read(shared.wakeRead, &drain, drain.count) > 0 {}
      let pending = shared.orders.withLock { orders in
        defer { orders.removeAll() }
        return orders
      }
      var running = true
      for (order, reply) in pending {
        var value = 0
        switch order {
        case .cut(let reset):
          value = links.count
          for link in links { link.close(reset: reset) }
          links.removeAll()
          shared.counters.withLock {
            $0.cut += value
            $0.open = 0
          }
        case .stall(let direction):
          for link in links where !link.holdToUpstream && !link.holdToClient {
            link.holdToUpstream = direction != .toClient
            link.holdToClient = direction != .toTarget
            value += 1
          }
        case .resume:
          for link in links {
            link.holdToUpstream = false
            link.holdToClient = false
          }
        case .stalledBytes:
          var peek = [UInt8](repeating: 0, count: 1 << 20)
          func unread(_ fd: Int32) -> Int {
            max(0, recv(fd, &peek, peek.count, Int32(MSG_PEEK | MSG_DONTWAIT)))
          }
          for link in links {
            if link.holdToUpstream { value += link.toUpstream.count + unread(link.client) }
            if link.holdToClient { value += link.toClient.count + unread(link.upstream) }
          }
        case .stop:
          running = false
        }
        reply.value.withLock { $0 = value }
        reply.done.signal()
      }
      return running
    }
  }
}
