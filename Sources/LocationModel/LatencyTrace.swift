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
    /// The app's daemon client had the line (its `read` returned).
    case clientRead
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

  private static let buffer = Mutex<(bytes: [UInt8], lines: Int)>(([], 0))

  private static func append(_ fd: Int32, _ stage: Stage, _ fixTime: Double, _ time: UInt64) {
    let line = "\(stage.rawValue) \(Int64((fixTime * 1000).rounded())) \(time)\n"
    let full = buffer.withLock { buffer -> [UInt8]? in
      buffer.bytes.append(contentsOf: line.utf8)
      buffer.lines += 1
      guard buffer.lines >= 64 else { return nil }
      defer { buffer = ([], 0) }
      return buffer.bytes
    }
    guard let full else { return }
    _ = full.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
  }
}
