import LocationProtocol
import LocationServices
import Synchronization

/// Who is at the other end of a connection, as the kernel says when it connects (`SO_PEERCRED`,
/// `SO_PEERGROUPS`, `SO_PEERSEC`, a pidfd); never what the peer claims. Its app identity is read
/// at `hello` (`PeerFacts`, `PeerIdentity`).
package struct DaemonPeer: Sendable, Equatable {
  /// The peer's pid when it connected.
  package var pid: Int32
  /// Its uid.
  package var uid: UInt32
  /// Its gid.
  package var gid: UInt32
  /// Its supplementary groups when it connected.
  package var groups: [UInt32]
  /// Its security label, when a security module labels it.
  package var label: String?
  /// A pidfd of the process (closed with the connection), when the kernel gives one.
  package var pidfd: Int32?

  /// Creates a peer description.
  /// - Parameters:
  ///   - pid: The pid.
  ///   - uid: The uid.
  ///   - gid: The gid.
  ///   - groups: Its supplementary groups.
  ///   - label: Its security label.
  ///   - pidfd: Its pidfd.
  package init(
    pid: Int32, uid: UInt32, gid: UInt32, groups: [UInt32] = [], label: String? = nil,
    pidfd: Int32? = nil
  ) {
    self.pid = pid
    self.uid = uid
    self.gid = gid
    self.groups = groups
    self.label = label
    self.pidfd = pidfd
  }
}

/// Who may use the control and agent roles (`docs/security.md`, "Roles").
package enum DaemonAccess {
  /// Whether a peer may use the control or agent role. Never a confined app. A system daemon: root
  /// and the members of its control group (primary or supplementary). A user daemon: the user's
  /// unconfined processes (and root); they are one principal with the user, who may change every
  /// setting anyway.
  /// - Parameters:
  ///   - confined: Whether the kernel confines the peer (Flatpak, AppArmor, SELinux).
  ///   - uid: The peer's uid from `SO_PEERCRED`.
  ///   - gid: The peer's gid.
  ///   - groups: The peer's supplementary groups (`SO_PEERGROUPS`).
  ///   - system: Whether this is the system daemon.
  ///   - daemonUID: The daemon's effective uid.
  ///   - controlGroup: The system daemon's control group, if configured.
  /// - Returns: Whether control is allowed.
  package static func mayControl(
    confined: Bool, uid: UInt32, gid: UInt32, groups: [UInt32], system: Bool, daemonUID: UInt32,
    controlGroup: UInt32?
  ) -> Bool {
    guard !confined else { return false }
    if uid == 0 { return true }
    if system {
      guard let controlGroup else { return false }
      return gid == controlGroup || groups.contains(controlGroup)
    }
    return uid == daemonUID
  }
}

/// The output queues of one uid's connections together, counted as each queue counts its own
/// (`docs/security.md`, "Caps"): over `limit`, a connection of the uid that queues more (on top of
/// what it has queued already) is marked overflowed and disconnected, so that one uid's many
/// connections that never read cannot pin more than about `limit` between them.
final class DaemonQueueBudget: Sendable {
  /// The uid's bytes, all its queues together.
  let limit: Int
  private let total = Atomic<Int>(0)

  init(limit: Int) { self.limit = limit }

  /// Adds `delta` bytes (negative: freed).
  func add(_ delta: Int) {
    guard delta != 0 else { return }
    total.add(delta, ordering: .relaxed)
  }

  /// Bytes queued now on the uid's connections.
  var bytes: Int { total.load(ordering: .relaxed) }
}

/// One peer connection's socket and outgoing queue.
///
/// Anyone may send (hub executors deliver from their own threads): a message is encoded outside
/// the lock and written at once, without blocking, when nothing is queued before it; what the
/// socket does not take waits in the queue, and the I/O thread writes it when the socket is
/// writable again. Rules of the queue (`docs/security.md`, "Caps"):
/// - the queue counts the memory it holds, not the payload: each chunk's allocated capacity plus
///   a fixed overhead; lines that may not be dropped are appended to one chunk, so a peer that
///   asks for thousands of small answers and never reads costs their bytes, not an allocation
///   each;
/// - over `limit` queued bytes, queued `locations` deliveries are dropped, except the newest one
///   (and one already partly written); other deliveries are kept; each delivery is looked at a
///   bounded number of times, so thinning is amortized constant time per delivery;
/// - over four times `limit` even so, the connection is marked overflowed: nothing more is queued
///   and the I/O thread disconnects it; so is a connection that queues more while its uid's
///   queues together are over their `budget`.
///
/// The descriptor is closed only by the I/O thread, after ``markClosed()``, and every write
/// happens under the lock after checking that flag, so a write never reaches a reused descriptor.
final class DaemonConnection: Sendable {
  /// The server's number for the connection.
  let id: Int
  /// The socket.
  let fd: Int32
  /// The peer.
  let peer: DaemonPeer
  /// The queue limit in bytes.
  let limit: Int
  /// The queues of the peer's uid together.
  let budget: DaemonQueueBudget?

  /// What one queued chunk costs besides its bytes: the array's header and the allocator's
  /// rounding, about.
  static let chunkOverhead = 64

  private struct Chunk {
    var bytes: [UInt8]
    var droppable: Bool
    /// The memory counted for it (capacity and overhead).
    var counted: Int
  }

  private struct Output {
    var chunks: [Chunk] = []
    var head = 0
    /// Bytes of `chunks[head]` already written.
    var offset = 0
    /// Memory held by the queue, counted as allocated.
    var bytes = 0
    /// Indices of queued droppable chunks not dropped yet, ascending.
    var droppables: [Int] = []
    /// Chunks dropped (emptied) but not yet compacted away.
    var dead = 0
    var closed = false
    var overflowed = false
    var broken = false
    /// The I/O thread has been asked to wait for writability.
    var wantsWrite = false
    var dropped = 0
    /// Bytes beyond the limit allowed while a list of the app's regions (a welcome or a
    /// `regionList`, which the peer asked for) is queued: the largest such list, until the queue
    /// is empty. One list at a time: a peer that asks again before reading is over the limit.
    var allowance = 0

    var isEmpty: Bool { head == chunks.count }
  }

  private let output = Mutex(Output())
  /// The highest region-event sequence queued on this connection by its app's host (live events
  /// are kept until acknowledged, like those of an absent app).
  private let sequence = Mutex<Int64>(0)

  /// Notes that a region event with this sequence was queued on the connection.
  func noteSequence(_ value: Int64) { sequence.withLock { $0 = max($0, value) } }

  /// The highest region-event sequence queued on this connection by its app's host.
  var highestSequence: Int64 { sequence.withLock { $0 } }
  /// Asks the I/O thread to look at this connection again (writability, overflow).
  private let wake: @Sendable (DaemonConnection) -> Void

  init(
    id: Int, fd: Int32, peer: DaemonPeer, limit: Int, budget: DaemonQueueBudget? = nil,
    wake: @escaping @Sendable (DaemonConnection) -> Void
  ) {
    self.id = id
    self.fd = fd
    self.peer = peer
    self.limit = limit
    self.budget = budget
    self.wake = wake
  }

  /// Encodes and sends a message; `locations` deliveries may be thinned when the peer is slow. A
  /// list of the app's regions (`welcome`, `regionList`) may exceed the limit (see `allowance`).
  func send(_ message: DaemonMessage) {
    let kind = message.kind
    enqueue(
      DaemonProtocol.encode(message), droppable: kind == .locations,
      regionList: kind == .welcome || kind == .regionList)
  }

  /// Queues encoded bytes (one or more whole lines).
  /// - Parameters:
  ///   - droppable: whether the bytes are a `locations` delivery, which may be thinned.
  ///   - regionList: whether they list the app's regions, and may exceed the limit.
  func enqueue(_ bytes: [UInt8], droppable: Bool, regionList: Bool = false) {
    let needsWake = output.withLock { output -> Bool in
      guard !output.closed, !output.overflowed, !output.broken else { return false }
      let before = output.bytes
      defer { budget?.add(output.bytes - before) }
      if output.isEmpty {
        let written = bytes.withUnsafeBytes { DaemonSyscall.send(fd, $0) }
        guard let written else {
          output.broken = true
          return true
        }
        if written == bytes.count { return false }
        output.chunks.removeAll(keepingCapacity: true)
        output.head = 0
        output.dead = 0
        output.droppables.removeAll(keepingCapacity: true)
        let counted = Self.append(bytes, droppable: droppable, alone: regionList, to: &output)
        output.offset = written
        if regionList { output.allowance = counted }
      } else {
        let counted = Self.append(bytes, droppable: droppable, alone: regionList, to: &output)
        if regionList { output.allowance = max(output.allowance, counted) }
        if output.bytes > limit + output.allowance { Self.thin(&output) }
        if output.bytes > 4 * limit + output.allowance {
          output.overflowed = true
          return true
        }
        // The uid's queues together, but for this connection's own list of regions (asked for,
        // one at a time): an app with many regions is not closed for its welcome, and many
        // connections' lists still count against each other.
        if let budget, budget.bytes + output.bytes - before - output.allowance > budget.limit {
          output.overflowed = true
          return true
        }
      }
      if output.wantsWrite { return false }
      output.wantsWrite = true
      return true
    }
    if needsWake { wake(self) }
  }

  /// Lines shorter than this that may not be dropped are appended to the last chunk.
  static let smallLine = 4096

  /// Appends bytes: a small line that may not be dropped to the last chunk when it is such too
  /// (one allocation for many small lines), anything else as a chunk of its own (`alone`: always).
  /// Counts the memory as allocated.
  /// - Returns: The memory counted for the chunk the bytes went to.
  @discardableResult
  private static func append(
    _ bytes: [UInt8], droppable: Bool, alone: Bool = false, to output: inout Output
  ) -> Int {
    if !droppable, !alone, bytes.count < smallLine, let last = output.chunks.indices.last,
      last >= output.head, !output.chunks[last].droppable,
      !output.chunks[last].bytes.isEmpty, output.chunks[last].bytes.count < 1 << 20
    {
      let before = output.chunks[last].counted
      output.chunks[last].bytes.append(contentsOf: bytes)
      output.chunks[last].counted = output.chunks[last].bytes.capacity + chunkOverhead
      output.bytes += output.chunks[last].counted - before
      return output.chunks[last].counted
    }
    // Written and dropped slots before the head are compacted away when they are the most.
    if output.head > 1024, output.head * 2 > output.chunks.count { compact(&output) }
    let counted = bytes.capacity + chunkOverhead
    output.chunks.append(Chunk(bytes: bytes, droppable: droppable, counted: counted))
    output.bytes += counted
    if droppable { output.droppables.append(output.chunks.count - 1) }
    return counted
  }

  /// Drops queued `locations` chunks except the newest (and the one partly written). Only the
  /// droppable chunks not dropped yet are looked at, and each is dropped once, so the work is
  /// amortized constant per delivery; dropped chunks are compacted away when they are many.
  private static func thin(_ output: inout Output) {
    guard let newest = output.droppables.last else { return }
    var kept: [Int] = []
    for index in output.droppables where index >= output.head {
      let partlyWritten = index == output.head && output.offset > 0
      if index == newest || partlyWritten {
        kept.append(index)
        continue
      }
      output.bytes -= output.chunks[index].counted
      output.chunks[index] = Chunk(bytes: [], droppable: false, counted: 0)
      output.dropped += 1
      output.dead += 1
    }
    output.droppables = kept
    if output.dead > 64, output.dead * 2 > output.chunks.count - output.head {
      compact(&output)
    }
  }

  /// Removes written and dropped chunks (a partly written head stays first, so that `offset` still
  /// applies to it).
  private static func compact(_ output: inout Output) {
    var chunks: [Chunk] = []
    var droppables: [Int] = []
    chunks.reserveCapacity(output.chunks.count - output.head - output.dead)
    for index in output.head..<output.chunks.count {
      let chunk = output.chunks[index]
      // An empty chunk was dropped; one partly written is never empty.
      guard !chunk.bytes.isEmpty else { continue }
      if chunk.droppable { droppables.append(chunks.count) }
      chunks.append(chunk)
    }
    output.chunks = chunks
    output.droppables = droppables
    output.head = 0
    output.dead = 0
  }

  /// What the I/O thread should do with the connection.
  enum FlushResult {
    /// Everything is written.
    case idle
    /// Bytes remain; wait for writability.
    case pending
    /// The peer is gone, or fell too far behind: close the connection.
    case close
  }

  /// Writes what the socket takes (I/O thread, on writability or after a wake).
  func flush() -> FlushResult {
    output.withLock { output -> FlushResult in
      let before = output.bytes
      defer { budget?.add(output.bytes - before) }
      if output.broken || output.overflowed { return .close }
      if output.closed { return .idle }
      while output.head < output.chunks.count {
        let chunk = output.chunks[output.head]
        if chunk.bytes.isEmpty {
          // Dropped.
          output.head += 1
          output.dead -= 1
          continue
        }
        let written = chunk.bytes.withUnsafeBytes { raw in
          DaemonSyscall.send(fd, UnsafeRawBufferPointer(rebasing: raw[output.offset...]))
        }
        guard let written else {
          output.broken = true
          return .close
        }
        if written == 0 { return .pending }
        output.offset += written
        if output.offset == chunk.bytes.count {
          output.offset = 0
          output.bytes -= chunk.counted
          // The bytes are gone; the slot stays (empty) until the queue is empty or compacted.
          output.chunks[output.head] = Chunk(bytes: [], droppable: false, counted: 0)
          output.head += 1
        }
      }
      output.chunks.removeAll(keepingCapacity: output.chunks.count < 64)
      output.droppables.removeAll(keepingCapacity: true)
      output.head = 0
      output.dead = 0
      output.bytes = 0
      output.wantsWrite = false
      output.allowance = 0
      return .idle
    }
  }

  /// Whether the I/O thread should wait for writability.
  var wantsWrite: Bool { output.withLock { $0.wantsWrite && !$0.isEmpty } }

  /// Whether the connection fell too far behind or broke.
  var mustClose: Bool { output.withLock { $0.overflowed || $0.broken } }

  /// Whether it overflowed (as opposed to breaking).
  var overflowed: Bool { output.withLock { $0.overflowed } }

  /// Bytes queued now.
  var queuedBytes: Int { output.withLock { $0.bytes } }

  /// Location deliveries dropped so far because the peer was slow.
  var droppedDeliveries: Int { output.withLock { $0.dropped } }

  /// Stops every further write. Returns whether it was open.
  @discardableResult
  func markClosed() -> Bool {
    output.withLock { output -> Bool in
      budget?.add(-output.bytes)
      defer {
        output.closed = true
        output.chunks = []
        output.droppables = []
        output.head = 0
        output.dead = 0
        output.bytes = 0
      }
      return !output.closed
    }
  }

  /// Writes one last line directly, ignoring the queue (an error before closing an overflowed
  /// connection); best effort.
  func writeFinal(_ message: DaemonMessage) {
    let bytes = DaemonProtocol.encode(message)
    output.withLock { output in
      guard !output.closed, !output.broken else { return }
      // Only when nothing is half written, or the line would be spliced into another.
      guard output.offset == 0 else { return }
      _ = bytes.withUnsafeBytes { DaemonSyscall.send(fd, $0) }
    }
  }
}
