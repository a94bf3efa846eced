import Foundation
import LocationModel
import LocationProtocol
import Synchronization

// The connection's reader: a thread of its own, blocked in `read`, decoding lines.
extension DaemonClient {
  /// Reads the connection on a thread of its own until it ends. Every message is handled on
  /// `queue`, in order, except `locations`: when nothing the reader handed to `queue` is still
  /// waiting there, a `locations` line is delivered from the reader thread at once, sparing the
  /// wake-up of another thread on the way from the receiver to the app (`locbench latency`); it
  /// cannot overtake an earlier message, and a manager's deliveries are hopped to its own thread
  /// anyway.
  func startReader(fd: Int32, generation: Int) {
    Thread.detachNewThread { [self] in
      var reader = DaemonLineReader(limit: Self.lineLimit)
      var buffer = [UInt8](repeating: 0, count: 65_536)
      reading: while true {
        let count = DaemonClientSocket.read(fd, into: &buffer)
        if count == 0 { break }
        reader.append(buffer[0..<count])
        while let item = reader.next() {
          switch item {
          case .line(let line):
            let decoded = Result { () throws(DaemonProtocolError) -> DaemonMessage in
              try DaemonProtocol.decode(line: line, limit: Self.lineLimit)
            }
            if LatencyTrace.isOn { Self.traceRead(decoded) }
            if case .success(.locations) = decoded, readerBacklog.load(ordering: .acquiring) == 0 {
              received(decoded, generation: generation)
              continue
            }
            readerBacklog.add(1, ordering: .releasing)
            queue.async { [self] in
              received(decoded, generation: generation)
              readerBacklog.subtract(1, ordering: .releasing)
            }
          case .tooLarge, .truncated:
            HubLog.write(.info, "daemon", "a line from locationd is too long; disconnecting")
            break reading
          }
        }
      }
      queue.async { [self] in readerEnded(fd: fd, generation: generation) }
    }
  }

  /// The longest line accepted from the daemon: a welcome lists every region of the app, up to
  /// 50,000 by default with identifiers of up to 1 KiB.
  static let lineLimit = 64 << 20
}
