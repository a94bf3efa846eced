import Foundation
import Testing

/// The public API on a real gpsd: `whereami` (which uses only `CLLocationManager`) reads
/// `gpsd://127.0.0.1:PORT` from a gpsd that `gpsfake` starts and feeds with a real capture
/// (../shared/RECIPES.md, "gpsd + gpsfake").
///
/// The test starts gpsfake itself on a free loopback port and stops it by pid. `whereami` needs no
/// readiness poll: the gpsd source reconnects with backoff until gpsd answers. Missing gpsd or
/// gpsfake: skipped with the reason, or a failure under `CI=true`.
@Suite(
  .enabled(
    if: WhereAmIRunner.isCI
      || (WhereAmIRunner.binary != nil
        && FileManager.default.isExecutableFile(atPath: "/usr/bin/gpsfake")
        && FileManager.default.isExecutableFile(atPath: "/usr/sbin/gpsd")),
    "needs the built whereami, /usr/sbin/gpsd and /usr/bin/gpsfake (Debian's gpsd and gpsd-clients)"
  )
)
struct WhereAmIGPSDTests {
  typealias Runner = WhereAmIRunner

  static let capture = Runner.root.deletingLastPathComponent()
    .appendingPathComponent("shared/testdata/gpsd-regress/nmea-rtk.log").path

  /// A port that was free a moment ago.
  static func freePort() -> Int {
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

  /// The positions gpsd reported for the capture (its .chk file), rounded to 1e-6 degrees.
  static func gpsdPositions() throws -> Set<String> {
    let text = try String(contentsOfFile: capture + ".chk", encoding: .utf8)
    var positions: Set<String> = []
    // Foundation's JSON parser refuses some of gpsd's numbers: take the two fields directly.
    for line in text.split(whereSeparator: \.isNewline) where line.hasPrefix(#"{"class":"TPV""#) {
      guard let latitude = line.firstMatch(of: #/"lat":(-?[0-9.]+)/#).flatMap({ Double($0.1) }),
        let longitude = line.firstMatch(of: #/"lon":(-?[0-9.]+)/#).flatMap({ Double($0.1) })
      else { continue }
      positions.insert(String(format: "%.6f %.6f", latitude, longitude))
    }
    return positions
  }

  @Test func publicAPIReceivesTheFixesGPSDReports() throws {
    for tool in ["/usr/bin/gpsfake", "/usr/sbin/gpsd"]
    where !FileManager.default.isExecutableFile(atPath: tool) {
      Issue.record(
        "\(tool) is missing: install Debian's gpsd and gpsd-clients (scripts/setup-debian.sh)")
      return
    }
    let directory = NSTemporaryDirectory() + "gpsfake-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let port = Self.freePort()
    let gpsfake = Process()
    gpsfake.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
    // -1: play once; -c: seconds between sentences; -P: gpsd's port; -q: quiet.
    gpsfake.arguments = [
      "/usr/bin/gpsfake", "-1", "-q", "-c", "0.05", "-P", String(port), Self.capture,
    ]
    gpsfake.environment = [
      "TMPDIR": directory, "GPSD_HOME": "/usr/sbin", "PATH": "/usr/sbin:/usr/bin:/bin",
    ]
    gpsfake.standardInput = FileHandle.nullDevice
    gpsfake.standardOutput = FileHandle.nullDevice
    gpsfake.standardError = FileHandle.nullDevice
    // The runner's threads block signals and children inherit the mask: clear it so that SIGTERM
    // reaches gpsfake (which then stops its gpsd).
    var empty = sigset_t()
    var saved = sigset_t()
    sigemptyset(&empty)
    pthread_sigmask(SIG_SETMASK, &empty, &saved)
    try gpsfake.run()
    pthread_sigmask(SIG_SETMASK, &saved, nil)
    defer {
      if gpsfake.isRunning { kill(gpsfake.processIdentifier, SIGTERM) }
      gpsfake.waitUntilExit()
    }

    let result = try Runner.run(
      ["--source", "gpsd://127.0.0.1:\(port)", "--count", "5", "--timeout", "30", "-v"], limit: 45)
    #expect(result.status == 0, "stderr: \(result.stderr)")
    // -v shows which source delivered each fix.
    #expect(result.stderr.contains("corelocation[gpsd://127.0.0.1:\(port)]: fix at"))
    let lines = result.stdout.split(separator: "\n").map(String.init)
    #expect(lines.count == 5)
    let reported = try Self.gpsdPositions()
    for line in lines {
      #expect(reported.contains(line), "\(line) is not a position gpsd reported for the capture")
    }
  }
}
