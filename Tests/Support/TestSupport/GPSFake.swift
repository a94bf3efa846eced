// Test support shared by the test targets that need a real gpsd (CoreLocationTests, EndToEndTests):
// gpsfake started on a free loopback port and stopped by pid (CONTRIBUTING.md, "Real components").
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
    port = try Loopback.freePort()
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

  /// Stops gpsfake by pid: SIGTERM, then SIGKILL if it still runs 3 s later; removes its
  /// directory.
  package func stop() {
    stopChild(process, grace: 3)
    try? FileManager.default.removeItem(atPath: directory)
  }
}
