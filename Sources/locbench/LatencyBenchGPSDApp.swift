import CEpoll
import CoreFoundation
import Foundation
import LocationProtocol
import LocationServices
import LocationSources

/// `latency-client gpsd PORT`: an app of the same shape as `latency-client delegate` (its main
/// thread in `RunLoop.main.run()`, its code called there), getting its fixes from gpsd instead:
/// `locbench latency`'s `gpsd-app` path, the like-for-like baseline of the `locationd` path.
///
/// It is given every advantage an app could take: its main run loop reads gpsd's socket itself,
/// after one wake-up (a version-1 run loop source whose port is an epoll instance watching the
/// socket, as `CLLocationManager`'s daemon client reads `locationd`'s), and it takes only the
/// TPV's `time` from each report (no JSON decoding, no location object). The time recorded is when
/// that time was read, on the main thread.
enum LatencyBenchGPSDApp {
  static func main(port: Int) -> Never {
    let fd: Int32
    do {
      fd = try LatencyBench.connectRetrying { try DaemonBenchSystem.connectLoopback(port: port) }
      try DaemonBenchSystem.writeAll(fd, Array(#"?WATCH={"enable":true,"json":true};"#.utf8) + [10])
    } catch {
      FileHandle.standardError.write(Data("locbench latency-client gpsd: \(error)\n".utf8))
      exit(1)
    }
    let port = cepoll_watching(fd, 0)
    guard port >= 0 else {
      FileHandle.standardError.write(Data("locbench latency-client gpsd: epoll failed\n".utf8))
      exit(1)
    }
    let reader = Reader(fd: fd, port: port)
    // The run loop holds the reader for the life of the process: no retain or release callbacks.
    var context = CFRunLoopSourceContext1()
    context.info = Unmanaged.passRetained(reader).toOpaque()
    context.getPort = { info in
      guard let info else { return -1 }
      return Unmanaged<Reader>.fromOpaque(info).takeUnretainedValue().port
    }
    context.perform = { info in
      guard let info else { return }
      Unmanaged<Reader>.fromOpaque(info).takeUnretainedValue().perform()
    }
    let source = makePortRunLoopSource(&context)
    CFRunLoopAddSource(CFRunLoopGetMain(), source, kCFRunLoopCommonModes)
    withExtendedLifetime(source) { RunLoop.main.run() }
    exit(0)
  }

  /// Reads gpsd's reports when the run loop finds the socket readable.
  final class Reader {
    let fd: Int32
    /// The run loop source's port: an epoll instance watching `fd` (level-triggered). The run
    /// loop's acknowledging read of eight bytes fails on it and takes nothing.
    let port: Int32
    private var buffer = [UInt8](repeating: 0, count: 65_536)
    /// gpsd's lines, split as the daemon client splits `locationd`'s.
    private var lines = DaemonLineReader()

    init(fd: Int32, port: Int32) {
      self.fd = fd
      self.port = port
    }

    /// Reads what the socket holds and records each TPV's time; the end of the socket ends the
    /// process.
    func perform() {
      while true {
        let count = buffer.withUnsafeMutableBytes {
          recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT))
        }
        if count < 0 && errno == EINTR { continue }
        if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return }
        guard count > 0 else { exit(0) }
        lines.append(buffer[0..<count])
        while let item = lines.next() {
          guard case .line(let line) = item,
            let milliseconds = line.withUnsafeBytes({ LatencyBenchRecords.tpvMilliseconds(in: $0) })
          else { continue }
          LatencyBenchClient.record(milliseconds: milliseconds)
        }
        // A short read took all the socket held.
        if count < buffer.count { return }
      }
    }
  }
}
