// Test support shared by the test targets that need a real gpsd (CoreLocationTests, EndToEndTests):
// gpsfake started on a free loopback port and stopped by pid (shared/RECIPES.md, "gpsd + gpsfake").
import Foundation

/// A running `gpsfake` (which starts its own gpsd) playing one capture once.
package final class GPSFake {
  /// The programs it needs (Debian's gpsd and gpsd-clients).
  package static let tools = ["/usr/bin/gpsfake", "/usr/sbin/gpsd"]

  /// Whether the tools are installed.
  package static var isInstalled: Bool {
    tools.allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }
  }

  /// What to install when a tool is missing.
  package static let missingMessage =
    "needs /usr/sbin/gpsd and /usr/bin/gpsfake (Debian's gpsd and gpsd-clients; scripts/setup-debian.sh)"

  /// gpsd's TCP port on 127.0.0.1.
  package let port: Int
  private let process: Process
  private let directory: String

  /// Starts `gpsfake -1 -q -c SECONDS -P PORT capture` under `/usr/bin/python3`.
  /// - Parameters:
  ///   - capture: the NMEA log to play.
  ///   - secondsPerSentence: gpsfake's `-c`.
  package init(capture: String, secondsPerSentence: Double) throws {
    directory = NSTemporaryDirectory() + "gpsfake-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    port = Self.freePort()
    process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
    // -1: play once; -q: quiet; -c: seconds between sentences; -P: gpsd's port.
    process.arguments = [
      "/usr/bin/gpsfake", "-1", "-q", "-c", String(secondsPerSentence), "-P", String(port), capture,
    ]
    process.environment = [
      "TMPDIR": directory, "GPSD_HOME": "/usr/sbin", "PATH": "/usr/sbin:/usr/bin:/bin",
    ]
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try runWithEmptySignalMask(process)
  }

  /// Stops gpsfake by pid: SIGTERM, up to 3 s of polling, then SIGKILL; removes its directory.
  package func stop() {
    if process.isRunning { kill(process.processIdentifier, SIGTERM) }
    let deadline = Date().addingTimeInterval(3)
    while process.isRunning && Date() < deadline { usleep(20_000) }
    if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    process.waitUntilExit()
    try? FileManager.default.removeItem(atPath: directory)
  }

  /// A TCP port on 127.0.0.1 that was free a moment ago.
  package static func freePort() -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
      }
    }
    return Int(UInt16(bigEndian: address.sin_port))
  }
}
