import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Where a fix is on its way from the receiver's bytes to the app, for `locbench latency`'s
/// per-stage breakdown: off unless `CORELOCATION_LATENCY_TRACE` names an open descriptor, to which
/// every ``mark(_:fixTime:at:)`` writes one line, `STAGE MILLISECONDS MONOTONIC` (the fix's time
/// in Unix milliseconds, `CLOCK_MONOTONIC` in nanoseconds). Costs one load and a branch when off.
package enum LatencyTrace {
  /// The stages, in the order a fix passes them.
  package enum Stage: String, Sendable, CaseIterable {
    /// The source's `read` returned the bytes that completed the epoch.
    case read
    /// The decoder emitted the fix.
    case decoded
    /// The hub's executor began handling the fix.
    case hub
    /// The engine decided to deliver it: the hub hands it to a client.
    case delivery
    /// `locationd` has encoded the `locations` line for one connection.
    case encoded
    /// `locationd`'s `send` of that line returned.
    case sent
    /// The app's daemon client's reader woke (the run loop, or the reader thread's wait) before
    /// reading the line.
    case clientWake
    /// The app's daemon client had the line (its `recv` returned).
    case clientRead
    /// The app's daemon client decoded the line.
    case clientDecoded
    /// The app's daemon client decoded it and hands it to the manager.
    case clientDelivery
    /// The manager's delegate (or the live-updates loop) is about to be called.
    case app
  }

  /// The descriptor, when tracing.
  package static let descriptor: Int32? = {
    guard let text = getenv("CORELOCATION_LATENCY_TRACE"),
      let fd = Int32(
        String(decoding: UnsafeRawBufferPointer(start: text, count: strlen(text)), as: UTF8.self)),
      fd >= 0
    else { return nil }
    return fd
  }()

  /// `CLOCK_MONOTONIC` in nanoseconds.
  package static func now() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
  }

  /// Whether tracing is on.
  @inline(__always)
  package static var isOn: Bool { descriptor != nil }

  /// Notes that the fix of `fixTime` (Unix seconds) reached `stage` at `time` (default now).
  /// Lines are kept and written 64 at a time, so that tracing does not wake the reader of the
  /// descriptor (another process) on every stage; the last few of a run may be lost.
  @inline(__always)
  package static func mark(_ stage: Stage, fixTime: Double, at time: UInt64? = nil) {
    guard let descriptor else { return }
    append(descriptor, stage, fixTime, time ?? now())
  }

  /// When the daemon client's reader last woke (0: not since the last line read).
  private static let wake = Atomic<UInt64>(0)

  /// Notes that the daemon client's reader woke now.
  package static func noteWake() { wake.store(now(), ordering: .relaxed) }

  /// When the daemon client's reader last woke, once.
  package static func takeWake() -> UInt64? {
    let time = wake.exchange(0, ordering: .relaxed)
    return time == 0 ? nil : time
  }

  /// A mark kept until the next write.
  private struct Record {
    var stage: Stage
    var fixMilliseconds: Int64
    var time: UInt64
  }

  /// Marks kept, written 64 at a time. A mark only stores its three numbers: the lines are made
  /// when they are written, so that a mark costs the path it measures little more than a lock.
  private static let records = Mutex<[Record]>(
    {
      var records: [Record] = []
      records.reserveCapacity(64)
      return records
    }())

  private static func append(_ fd: Int32, _ stage: Stage, _ fixTime: Double, _ time: UInt64) {
    let record = Record(
      stage: stage, fixMilliseconds: Int64((fixTime * 1000).rounded()), time: time)
    let full = records.withLock { records -> [Record]? in
      records.append(record)
      guard records.count >= 64 else { return nil }
      defer {
        records = []
        records.reserveCapacity(64)
      }
      return records
    }
    guard let full else { return }
    var text = ""
    for record in full {
      text += "\(record.stage.rawValue) \(record.fixMilliseconds) \(record.time)\n"
    }
    let bytes = Array(text.utf8)
    _ = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
  }
}
