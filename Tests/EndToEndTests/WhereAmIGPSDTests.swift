import Foundation
import TestSupport
import Testing

/// The public API on a real gpsd: `whereami` (which uses only `CLLocationManager`) reads
/// `gpsd://127.0.0.1:PORT` from a gpsd that `gpsfake` starts and feeds with a real capture
/// (CONTRIBUTING.md, "Real components").
///
/// The test starts gpsfake itself on a free loopback port and stops it by pid. `whereami` needs no
/// readiness poll: the gpsd source reconnects with backoff until gpsd answers. Missing gpsd or
/// gpsfake: skipped with the reason, or a failure under `CI=true`.
@Suite(
  .enabled(
    if: RealComponents.isCI || (BuiltPrograms.whereami != nil && GPSFake.isInstalled),
    "needs the built whereami, /usr/sbin/gpsd and /usr/bin/gpsfake (Debian's gpsd and gpsd-clients)"
  )
)
struct WhereAmIGPSDTests {
  typealias Runner = WhereAmIRunner

  static let capture = Paths.fixture("gpsd-regress", "nmea-rtk.log")

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

  @Test func publicAPIReceivesTheFixesGPSDReports() async throws {
    guard GPSFake.isInstalled else {
      Issue.record("\(GPSFake.missingMessage)")
      return
    }
    // In a loop, so that a late watch still sees five fixes (see `GPSFake.init`).
    let gpsfake = try GPSFake(capture: Self.capture, secondsPerSentence: 0.05, loop: true)
    defer { gpsfake.stop() }
    let port = gpsfake.port

    let result = try await Runner.run(
      ["--source", "gpsd://127.0.0.1:\(port)", "--count", "5", "--timeout", "30", "-v"], limit: 45)
    #expect(result.status == 0, "stderr: \(result.stderr)")
    // -v shows which source delivered each fix.
    #expect(result.stderr.contains("corelocation[gpsd://127.0.0.1:\(port)]: fix at"))
    // whereami parks its main thread in `dispatchMain()`: no reading run loop is added to it, and
    // so no complaint from Core Foundation (issue 19, `RunLoopReading.install`).
    #expect(!result.stderr.contains("main thread has exited"), "stderr: \(result.stderr)")
    let lines = result.stdout.split(separator: "\n").map(String.init)
    #expect(lines.count == 5)
    let reported = try Self.gpsdPositions()
    for line in lines {
      #expect(reported.contains(line), "\(line) is not a position gpsd reported for the capture")
    }
  }
}
