import Foundation
import LocationEngine
import LocationModel
import LocationProtocol
import LocationServices
import LocationSources
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

// The I/O thread: one poll loop over the listening socket, the wake pipe and every connection. It
// accepts, reads, splits lines, decodes and hands each message to `handle` in order; it closes.
extension DaemonServer {
  static func poke(_ fd: Int32) {
    guard fd >= 0 else { return }
    var byte: UInt8 = 1
    _ = write(fd, &byte, 1)
  }

  func attention(_ connection: DaemonConnection) {
    let fd = wake.withLock { wake -> Int32 in
      wake.attention.insert(connection.id)
      return wake.write
    }
    Self.poke(fd)
  }

  func run() {
    var buffer = [UInt8](repeating: 0, count: 65_536)
    var fds: [pollfd] = []
    var order: [Int] = []
    while !shared.withLock({ $0.stopping }) {
      fds.removeAll(keepingCapacity: true)
      order.removeAll(keepingCapacity: true)
      let now = LiveClock.monotonicSeconds()
      closeSilentConnections(now: now)
      checkpointIfDue(now: now)
      let accepting =
        loop.sessions.count < configuration.maximumConnections && now >= loop.acceptPausedUntil
      fds.append(pollfd(fd: loop.listener, events: Int16(accepting ? POLLIN : 0), revents: 0))
      fds.append(pollfd(fd: loop.wakeRead, events: Int16(POLLIN), revents: 0))
      serveDeferred(now: now)
      // Each uid's budget refilled once a turn, not once per connection.
      var servedUIDs: [UInt32: Bool] = [:]
      for (id, session) in loop.sessions {
        var events = Int16(POLLIN)
        if session.connection.wantsWrite { events |= Int16(POLLOUT) }
        // A uid over its work budget is left out until it refills (-1: poll skips the entry).
        let uid = session.connection.peer.uid
        let served: Bool
        if let known = servedUIDs[uid] {
          served = known
        } else {
          served = budget(of: uid, now: now).available
          servedUIDs[uid] = served
        }
        fds.append(pollfd(fd: served ? session.connection.fd : -1, events: events, revents: 0))
        order.append(id)
      }
      let ready = poll(&fds, nfds_t(fds.count), pollTimeout(now: now))
      if ready < 0 {
        if errno == EINTR { continue }
        DaemonLog.write("poll failed: \(String(cString: strerror(errno)))")
        break
      }
      if fds[1].revents != 0 { wakeUp() }
      if fds[0].revents & Int16(POLLIN) != 0 { acceptAll() }
      for (index, id) in order.enumerated() {
        let revents = fds[index + 2].revents
        guard revents != 0, let session = loop.sessions[id] else { continue }
        if revents & Int16(POLLOUT) != 0, session.connection.flush() == .close {
          close(session, overflow: session.connection.overflowed)
          continue
        }
        if revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 { read(session, buffer: &buffer) }
      }
    }
    shutdown()
  }

  private func wakeUp() {
    var sink = [UInt8](repeating: 0, count: 256)
    while Glibc.read(loop.wakeRead, &sink, sink.count) > 0 {}
    let ids = wake.withLock { wake -> Set<Int> in
      defer { wake.attention = [] }
      return wake.attention
    }
    for id in ids.sorted() {
      guard let session = loop.sessions[id] else { continue }
      if session.connection.flush() == .close {
        close(session, overflow: session.connection.overflowed)
      }
    }
  }

  /// The work budget of a uid, refilled to `now` (made on first use).
  func budget(of uid: UInt32, now: Double) -> UIDWorkBudget {
    var budget =
      loop.workBudgets[uid] ?? UIDWorkBudget(rate: configuration.requestsPerUID, now: now)
    budget.refill(now: now)
    loop.workBudgets[uid] = budget
    return budget
  }

  /// Charges a uid's work budget.
  func spend(_ cost: Double, uid: UInt32) {
    loop.workBudgets[uid]?.spend(cost)
  }

  /// Serves the lines that connections left waiting while their uid was over its budget, for the
  /// uids that have refilled; forgets the budgets of uids with no connection and a full bucket.
  private func serveDeferred(now: Double) {
    for id in loop.deferred.sorted() {
      guard let session = loop.sessions[id] else {
        loop.deferred.remove(id)
        continue
      }
      guard budget(of: session.connection.peer.uid, now: now).available else { continue }
      loop.deferred.remove(id)
      processLines(session)
    }
    if loop.workBudgets.count > loop.connectionsPerUID.count {
      loop.workBudgets = loop.workBudgets.filter {
        loop.connectionsPerUID[$0.key] != nil || $0.value.tokens < $0.value.rate
      }
    }
  }

  /// How long `poll` may wait: until the next `hello` deadline, the end of an accept pause, the
  /// next checkpoint, or a uid's budget refilling for connections left out.
  private func pollTimeout(now: Double) -> Int32 {
    var next = loop.acceptPausedUntil > now ? loop.acceptPausedUntil : Double.infinity
    if loop.nextCheckpoint > now { next = min(next, loop.nextCheckpoint) }
    for budget in loop.workBudgets.values where !budget.available {
      next = min(next, now + budget.secondsUntilAvailable)
    }
    if let hello = loop.helloDeadlines.first { next = min(next, hello.deadline) }
    guard next.isFinite else { return -1 }
    return Int32(min(60_000, max(1, ((next - now) * 1000).rounded(.up))))
  }

  /// Closes connections that said no `hello` in time (a peer may not hold a descriptor for free).
  private func closeSilentConnections(now: Double) {
    while let first = loop.helloDeadlines.first, first.deadline <= now {
      loop.helloDeadlines.removeFirst()
      guard let session = loop.sessions[first.id], session.role == nil else { continue }
      session.connection.send(
        .error(
          DaemonErrorMessage(
            code: .outOfOrder,
            message: "no hello within \(configuration.helloTimeout) seconds; closing")))
      close(session)
    }
  }

  private func acceptAll() {
    while loop.sessions.count < configuration.maximumConnections {
      let fd: Int32?
      do {
        fd = try DaemonSyscall.accept(loop.listener)
      } catch {
        // Out of descriptors (EMFILE, ENFILE): stop accepting for a moment instead of spinning on
        // a listener that stays readable; said once per episode.
        if !loop.acceptFailing { DaemonLog.write("\(error); not accepting for a moment") }
        loop.acceptFailing = true
        loop.acceptPausedUntil = LiveClock.monotonicSeconds() + 0.1
        return
      }
      guard let fd else { return }
      loop.acceptFailing = false
      let peer: DaemonPeer
      do {
        let credentials = try DaemonSyscall.peerCredentials(fd)
        try DaemonSyscall.passCredentials(fd)
        peer = DaemonPeer(
          pid: credentials.pid, uid: credentials.uid, gid: credentials.gid,
          groups: DaemonSyscall.peerGroups(fd), label: DaemonSyscall.peerSecurityLabel(fd),
          pidfd: DaemonSyscall.peerPidfd(fd, pid: credentials.pid))
      } catch {
        DaemonLog.write("\(error); connection refused")
        DaemonSyscall.close(fd)
        continue
      }
      _ = budget(of: peer.uid, now: LiveClock.monotonicSeconds())
      spend(UIDWorkBudget.connectionCost, uid: peer.uid)
      let id = loop.nextConnectionID
      loop.nextConnectionID += 1
      let budget =
        loop.queueBudgets[peer.uid]
        ?? DaemonQueueBudget(limit: IOLoop.uidQueueFactor * configuration.queueLimit)
      loop.queueBudgets[peer.uid] = budget
      let connection = DaemonConnection(
        id: id, fd: fd, peer: peer, limit: configuration.queueLimit, budget: budget
      ) { [weak self] connection in self?.attention(connection) }
      let session = Session(connection: connection)
      loop.sessions[id] = session
      let open = loop.connectionsPerUID[peer.uid, default: 0] + 1
      loop.connectionsPerUID[peer.uid] = open
      guard open <= configuration.maximumConnectionsPerUID else {
        connection.send(
          .error(
            DaemonErrorMessage(
              code: .tooMany,
              message:
                "uid \(peer.uid) has \(configuration.maximumConnectionsPerUID) connections open")))
        close(session)
        continue
      }
      loop.helloDeadlines.append(
        deadline: LiveClock.monotonicSeconds() + configuration.helloTimeout, id: id)
    }
  }

  private func read(_ session: Session, buffer: inout [UInt8]) {
    // A few reads per turn, so that one busy peer cannot starve the others.
    for _ in 0..<4 {
      let result = buffer.withUnsafeMutableBytes {
        DaemonSyscall.receive(session.connection.fd, into: $0)
      }
      switch result {
      case .data(let count, let sender):
        // Only the process that connected speaks on its connection: bytes another process writes
        // on a socket it was handed (or kept across the connecting process's exec) are refused.
        guard Self.spokeItself(sender, session.connection.peer) else {
          session.connection.send(
            .error(
              DaemonErrorMessage(
                code: .forbidden,
                message:
                  "pid \(sender.map(String.init) ?? "unknown") wrote on the connection of pid "
                  + "\(session.connection.peer.pid); only the process that connected may speak")))
          DaemonLog.write(
            "pid \(session.connection.peer.pid): another process (pid "
              + "\(sender.map(String.init) ?? "unknown")) wrote on its connection; disconnected")
          close(session)
          return
        }
        // Bytes cost too (a token per 4 KiB): long lines, cut lines and garbage are work.
        spend(Double(count) / UIDWorkBudget.bytesPerToken, uid: session.connection.peer.uid)
        session.reader.append(buffer[0..<count])
        processLines(session)
        if loop.sessions[session.connection.id] == nil { return }
        // Over the uid's budget: nothing more is read (nor an end seen) until its lines are
        // served.
        if loop.deferred.contains(session.connection.id) { return }
      case .wouldBlock:
        return
      case .closed:
        if case .truncated(let count) = session.reader.finish() {
          session.connection.send(
            .error(
              DaemonErrorMessage(
                code: .malformed,
                message: "the connection ended in the middle of a line (\(count) bytes)")))
        }
        close(session)
        return
      }
    }
  }

  private func processLines(_ session: Session) {
    let uid = session.connection.peer.uid
    while true {
      // Over the uid's budget: the rest waits (`serveDeferred`), unread.
      guard loop.workBudgets[uid]?.available ?? true else {
        loop.deferred.insert(session.connection.id)
        return
      }
      guard let item = session.reader.next() else { return }
      switch item {
      case .line(let bytes):
        spend(1, uid: uid)
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
        do {
          let message = try DaemonProtocol.decode(line: bytes)
          // A hello makes the daemon read the peer's identity from /proc: it costs more.
          if case .hello = message { spend(UIDWorkBudget.helloCost - 1, uid: uid) }
          try handle(message, session)
        } catch {
          fail(session, error)
        }
        if loop.sessions[session.connection.id] == nil { return }
      case .tooLarge:
        session.connection.send(
          .error(
            DaemonErrorMessage(
              code: .tooLarge,
              message: "a line is longer than \(session.reader.limit) bytes; closing")))
        close(session)
        return
      case .truncated:
        return
      }
    }
  }

  /// Whether bytes came from the process that connected. The kernel reports the writer's pid, or 0
  /// when the writer has exited since; that is the connecting process itself only if it has
  /// exited too (a peer that writes its last requests and ends), which its pidfd tells.
  static func spokeItself(_ sender: Int32?, _ peer: DaemonPeer) -> Bool {
    guard let sender else { return false }
    if sender == peer.pid { return true }
    guard sender == 0 else { return false }
    guard let pidfd = peer.pidfd else { return true }
    return !DaemonSyscall.isAlive(pidfd: pidfd)
  }

  /// Sends an error to the peer and counts a strike; closes the connection at the last one.
  func fail(_ session: Session, _ error: DaemonProtocolError) {
    guard loop.sessions[session.connection.id] != nil else { return }
    session.connection.send(.error(DaemonErrorMessage(error)))
    session.strikes += 1
    if session.strikes >= configuration.strikes {
      DaemonLog.write(
        "pid \(session.connection.peer.pid): \(session.strikes) protocol errors; disconnected")
      close(session)
    }
  }

  func close(_ session: Session, overflow: Bool = false) {
    let connection = session.connection
    guard loop.sessions.removeValue(forKey: connection.id) != nil else { return }
    if overflow {
      connection.writeFinal(
        .error(
          DaemonErrorMessage(
            code: .tooLarge,
            message:
              "the connection fell more than \(4 * connection.limit) bytes behind, or uid "
              + "\(connection.peer.uid)'s connections more than "
              + "\(connection.budget?.limit ?? 0) together; closing"))
      )
      DaemonLog.write("pid \(connection.peer.pid): too slow; disconnected")
    }
    connection.markClosed()
    // Unread input would turn the close into a reset that could hide the last error from the peer.
    var sink = [UInt8](repeating: 0, count: 4096)
    for _ in 0..<16 {
      guard
        case .data = sink.withUnsafeMutableBytes({ DaemonSyscall.read(connection.fd, into: $0) })
      else { break }
    }
    DaemonSyscall.close(connection.fd)
    if let pidfd = connection.peer.pidfd { DaemonSyscall.close(pidfd) }
    let uid = connection.peer.uid
    if let open = loop.connectionsPerUID[uid] {
      loop.connectionsPerUID[uid] = open > 1 ? open - 1 : nil
      if open == 1 { loop.queueBudgets[uid] = nil }
    }
    switch session.role {
    case .app:
      guard let host = session.host else { break }
      for (_, manager) in session.managers.sorted(by: { $0.key < $1.key }) {
        host.hub.unregister(manager.id)
      }
      noteRegistered(-session.managers.count, app: host.app)
      noteRanged(-session.ranging.values.reduce(0) { $0 + $1.count }, app: host.app)
      session.managers = [:]
      dropHeldRequests(of: connection.id)
      let last = host.detach(connection)
      if !isInUse(host) { appNoLongerInUse(host.app) }
      if last {
        host.afterPendingWork { [weak self] in self?.retireIfIdle(host) }
      }
    case .agent:
      agentLeft(connection.id)
    case .control, nil:
      break
    }
  }

  func shutdown() {
    for id in loop.sessions.keys.sorted() {
      if let session = loop.sessions[id] { close(session) }
    }
    DaemonSyscall.close(loop.listener)
    DaemonSyscall.close(loop.wakeRead)
    let hosts = shared.withLock { shared -> [AppHost] in
      defer { shared.hosts = [:] }
      return Array(shared.hosts.values)
    }
    let wakeWrite = wake.withLock { wake -> Int32 in
      defer { wake.write = -1 }
      return wake.write
    }
    DaemonSyscall.close(wakeWrite)
    unlink(configuration.socketPath)
    for host in hosts { host.retire() }
    DaemonLog.write("stopped")
  }
}

/// What the I/O thread knows of one connection.
final class Session {
  let connection: DaemonConnection
  var reader = DaemonLineReader()
  var role: DaemonRole?
  var host: AppHost?
  var managers: [Int: (id: ClientID, proxy: ManagerProxy)] = [:]
  /// The beacon constraints each manager asked to range (`max-ranged-constraints`).
  var ranging: [Int: Set<BeaconConstraint>] = [:]
  var strikes = 0
  /// The highest pending-event sequence sent on this connection.
  var deliveredSequence: Int64 = 0

  init(connection: DaemonConnection) { self.connection = connection }
}

/// The I/O thread's own state.
///
/// `@unchecked Sendable`: it is written by `start()` before the I/O thread exists and afterwards
/// only by that thread (every message, accept and close is handled there), so no two threads
/// ever touch it at once.
final class IOLoop: @unchecked Sendable {
  var listener: Int32 = -1
  var wakeRead: Int32 = -1
  var sessions: [Int: Session] = [:]
  var nextConnectionID = 1
  /// The authorization broker: agents, questions, held requests and every app's machine.
  var broker = AuthorizationBroker()
  /// Connections open per uid.
  var connectionsPerUID: [UInt32: Int] = [:]
  /// The output queues of each uid with a connection open, together.
  var queueBudgets: [UInt32: DaemonQueueBudget] = [:]
  /// Each uid's work budget (`requests-per-uid`).
  var workBudgets: [UInt32: UIDWorkBudget] = [:]
  /// Connections with lines left unread because their uid was over its budget.
  var deferred: Set<Int> = []
  /// The reason each app gave for using location services (`purpose`), since the daemon started.
  var purposes: [String: String] = [:]
  /// Clients registered per app, all its connections together: the app is in use while above 0.
  var registeredClients: [String: Int] = [:]
  /// Beacon constraints ranged by each uid's managers together (`max-ranged-constraints`).
  var rangedByUID: [UInt32: Int] = [:]
  /// A uid's queues together may hold this many times `queue-limit`.
  static let uidQueueFactor = 16
  /// When connections that have not said `hello` are closed, in order (monotonic seconds).
  var helloDeadlines = DeadlineQueue()
  /// No connection is accepted before this (monotonic seconds): a pause after `EMFILE`.
  var acceptPausedUntil = 0.0
  /// Whether the last accept failed (the failure is logged once per episode).
  var acceptFailing = false
  /// When the store's log is next checkpointed (monotonic seconds; 0: not yet scheduled).
  var nextCheckpoint = 0.0
  /// Whether the last checkpoint failed (logged once per episode).
  var checkpointFailing = false
  /// The app identities the daemon remembers (stored decisions, regions, or a connection since
  /// it started), to cap them per uid.
  var knownApps: Set<String> = []
}

/// Deadlines in the order they were made (each later than the one before): appended at the end,
/// taken from the front, both in amortized constant time.
struct DeadlineQueue {
  private var entries: [(deadline: Double, id: Int)] = []
  private var head = 0

  /// The earliest deadline.
  var first: (deadline: Double, id: Int)? { head < entries.count ? entries[head] : nil }

  /// Adds a deadline (not earlier than any before it).
  mutating func append(deadline: Double, id: Int) { entries.append((deadline, id)) }

  /// Takes the earliest deadline away.
  mutating func removeFirst() {
    guard head < entries.count else { return }
    head += 1
    if head > 1024, head * 2 > entries.count {
      entries.removeFirst(head)
      head = 0
    }
  }
}
