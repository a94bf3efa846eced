import Foundation
import TestSupport
import Testing

/// `whereami --beacons` as a child process on the recorded office corridor
/// (`Tests/Fixtures/beacons/office.beacons.jsonl`): embedded, and through the real `locationd` (the
/// built binary on a private socket and store, the recording its source). Skipped when a program is
/// not built, except under `CI=true`, where that is a failure.
@Suite(
  .enabled(
    if: DaemonE2E.available() && BuiltPrograms.whereami != nil || RealComponents.isCI,
    DaemonE2E.missing())
)
struct WhereAmIBeaconTests {
  static let uuid = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
  static let recording = Paths.fixture("beacons", "office.beacons.jsonl")

  /// The beacons of one text delivery, as `major.minor proximity`.
  static func beacons(_ output: String) -> [String] {
    output.split(separator: "\n").map { line in
      let fields = line.split(separator: " ")
      return fields.count >= 4 ? "\(fields[1]).\(fields[2]) \(fields[3])" : String(line)
    }
  }

  @Test func embeddedRangingOfARecording() async throws {
    let run = try await WhereAmIRunner.run(
      ["--source", "beacons+replay://\(Self.recording)", "--beacons", Self.uuid])
    #expect(run.status == 0, "\(run.stderr)")
    #expect(Set(Self.beacons(run.stdout)) == ["1.1 near", "1.2 far", "2.7 far"])
  }

  @Test func noRadioIsSaidClearly() async throws {
    let run = try await WhereAmIRunner.run(
      ["--source", "static:///nonexistent/geolocation", "--beacons", Self.uuid])
    #expect(run.status == 1)
    #expect(run.stderr.contains("Bluetooth"))
  }

  @Test func rangingThroughLocationd() async throws {
    let directory = try LocationdProcess.makeDirectory()
    let socketPath = LocationdProcess.socket(directory)
    let daemon = try LocationdProcess(
      LocationdProcess.arguments(
        directory, sources: ["beacons+replay://\(Self.recording)?loop=1"]),
      directory: directory)
    defer { daemon.stop() }
    #expect(await eventually { FileManager.default.fileExists(atPath: socketPath) })
    let run = try await WhereAmIRunner.run(
      ["--beacons", Self.uuid, "--watch", "--count", "2", "--json"],
      environment: ["CORELOCATION_DAEMON": "required", "CORELOCATION_DAEMON_SOCKET": socketPath])
    #expect(run.status == 0, "\(run.stderr)")
    let lines = run.stdout.split(separator: "\n")
    #expect(lines.count == 2)
    for line in lines {
      let object = try #require(
        try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
      #expect(object["uuid"] as? String == Self.uuid)
      let beacons = try #require(object["beacons"] as? [[String: Any]])
      #expect(beacons.count == 3)
      #expect(beacons.first?["proximity"] as? String == "near")
    }
  }
}
