import CoreLocation
import Foundation
import LocationServices
import LocationSources
import Synchronization
import Testing

/// gpsd's `ATT` becomes `CLHeading` (issue 6): a real gpsd, started by `gpsfake` with a capture
/// whose compass sends `$HEHDT` (rst39.log), read through `CLLocationManager` on a live hub.
/// Missing gpsd or gpsfake: skipped with the reason, a failure under `CI=true`.
@Suite(
  .enabled(
    if: ProcessInfo.processInfo.environment["CI"] == "true"
      || (FileManager.default.isExecutableFile(atPath: "/usr/bin/gpsfake")
        && FileManager.default.isExecutableFile(atPath: "/usr/sbin/gpsd")),
    "needs /usr/sbin/gpsd and /usr/bin/gpsfake (Debian's gpsd and gpsd-clients)")
)
struct GPSDHeadingTests {
  static let capture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("shared/testdata/gpsd-regress/rst39.log").path

  /// Delegate calls run on the hub's queue, straight away.
  struct Inline: DeliveryScheduler {
    func schedule(_ work: @escaping @Sendable () -> Void) { work() }
  }

  final class Delegate: NSObject, CLLocationManagerDelegate, @unchecked Sendable {
    // @unchecked: written on the hub's queue, read under the lock.
    let headings = Mutex<[(magnetic: Double, true: Double)]>([])
    func locationManager(_ manager: CLLocationManager, didUpdateHeading newHeading: CLHeading) {
      headings.withLock { $0.append((newHeading.magneticHeading, newHeading.trueHeading)) }
    }
  }

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

  @Test func attBecomesCLHeading() async throws {
    for tool in ["/usr/bin/gpsfake", "/usr/sbin/gpsd"]
    where !FileManager.default.isExecutableFile(atPath: tool) {
      Issue.record(
        "\(tool) is missing: install Debian's gpsd and gpsd-clients (scripts/setup-debian.sh)")
      return
    }
    let directory = NSTemporaryDirectory() + "gpsfake-heading-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let port = Self.freePort()
    let gpsfake = Process()
    gpsfake.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
    gpsfake.arguments = [
      "/usr/bin/gpsfake", "-1", "-q", "-c", "0.05", "-P", String(port), Self.capture,
    ]
    gpsfake.environment = [
      "TMPDIR": directory, "GPSD_HOME": "/usr/sbin", "PATH": "/usr/sbin:/usr/bin:/bin",
    ]
    gpsfake.standardInput = FileHandle.nullDevice
    gpsfake.standardOutput = FileHandle.nullDevice
    gpsfake.standardError = FileHandle.nullDevice
    // Children inherit the runner's blocked signals: clear the mask so that SIGTERM stops gpsfake.
    var empty = sigset_t()
    var saved = sigset_t()
    sigemptyset(&empty)
    pthread_sigmask(SIG_SETMASK, &empty, &saved)
    try gpsfake.run()
    pthread_sigmask(SIG_SETMASK, &saved, nil)
    defer {
      // gpsfake and the gpsd it started: SIGTERM, then SIGKILL to the whole group if needed.
      if gpsfake.isRunning { kill(gpsfake.processIdentifier, SIGTERM) }
      let stop = Date().addingTimeInterval(3)
      while gpsfake.isRunning && Date() < stop { usleep(20_000) }
      if gpsfake.isRunning { kill(gpsfake.processIdentifier, SIGKILL) }
      gpsfake.waitUntilExit()
    }

    let persistence = MemoryPersistence()
    persistence.setAuthorization(
      AuthorizationSnapshot(status: AuthorizationSnapshot.authorizedWhenInUse), app: "gpsd-heading")
    let hub = LocationHub(
      app: "gpsd-heading", sources: .urls([.gpsd(.tcp(host: "127.0.0.1", port: port))]),
      persistence: persistence)
    let delegate = Delegate()
    let manager = HubEnvironment.$bound.withValue(HubEnvironment(hub: hub, scheduler: Inline())) {
      CLLocationManager()
    }
    manager.delegate = delegate
    manager.headingFilter = kCLHeadingFilterNone
    manager.startUpdatingHeading()
    // Bounded polling of a real daemon's output (gpsd probes the device for about 1.5 s).
    let deadline = Date().addingTimeInterval(20)
    while delegate.headings.withLock({ $0.isEmpty }) && Date() < deadline {
      try await Task.sleep(for: .milliseconds(50))
    }
    manager.stopUpdatingHeading()
    let headings = delegate.headings.withLock { $0 }
    try #require(!headings.isEmpty, "no heading from gpsd within 20 s")
    // The receiver sends true headings of 25.50, 43.31, 61.49 and 74.79 degrees (GPHDT).
    for heading in headings {
      #expect(
        [25.50, 43.31, 61.49, 74.79].contains { abs(heading.true - $0) < 1e-9 }, "\(heading)")
    }
  }
}
