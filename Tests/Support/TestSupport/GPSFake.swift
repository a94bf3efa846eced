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

  /// Starts `gpsfake [-1] -q -c SECONDS -P PORT capture` under `/usr/bin/python3`.
  ///
  /// gpsfake writes the capture from its start, whether or not a client watches, and gpsd
  /// flushes the device's input when the first watcher makes it open the device: what was
  /// written before a late watcher (a test process held up on a loaded machine) is lost. A test
  /// that needs particular sentences plays the capture in a loop, so that each comes again.
  /// - Parameters:
  ///   - capture: the NMEA log to play.
  ///   - secondsPerSentence: gpsfake's `-c`.
  ///   - loop: Play the capture again and again until `stop()` (no `-1`).
  package init(capture: String, secondsPerSentence: Double, loop: Bool = false) throws {
    directory = NSTemporaryDirectory() + "gpsfake-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    port = try Loopback.freePort()
    process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
    // -1: play once; -q: quiet; -c: seconds between sentences; -P: gpsd's port.
    process.arguments =
      ["/usr/bin/gpsfake"] + (loop ? [] : ["-1"])
      + ["-q", "-c", String(secondsPerSentence), "-P", String(port), capture]
    process.environment = [
      "TMPDIR": directory, "GPSD_HOME": "/usr/sbin", "PATH": "/usr/sbin:/usr/bin:/bin",
    ]
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try runWithEmptySignalMask(process)
    // Ready when its gpsd accepts clients (Python's start and gpsd's take a second or more on a
    // loaded machine; a client that came earlier would wait out its own retry back-off).
    guard Loopback.waitUntilAccepting(port: port, timeout: 30, interval: 0.02) else {
      stop()
      throw TestFailure("gpsfake's gpsd did not accept connections on port \(port) within 30 s")
    }
  }

  /// Stops gpsfake by pid: SIGTERM, then SIGKILL if it still runs 3 s later; removes its
  /// directory.
  package func stop() {
    stopChild(process, grace: 3)
    try? FileManager.default.removeItem(atPath: directory)
  }
}
